"""Form fields from JSON schemas, and widget values back to JSON.

The UI builds one widget per property of an action model (or of a tool's input schema).
:func:`form_fields` reads the schema pydantic generates and decides the widget kind;
:func:`collect` turns what the widgets hold back into the JSON object that is validated.
Nothing here imports gradio.

Example:
    >>> from pydantic import Field
    >>> from openenv_hub.types import Action
    >>> class Move(Action):
    ...     steps: int = Field(1, ge=0, le=10)
    >>> [(f.name, f.kind, f.minimum, f.maximum) for f in form_fields(Move.model_json_schema())]
    [('steps', 'integer', 0, 10)]
    >>> collect(form_fields(Move.model_json_schema()), [3.0])
    ({'steps': 3}, [])

Layer: ui.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = ["MISSING", "FieldError", "FieldSpec", "collect", "form_fields", "initial_value"]

Kind = Literal["text", "integer", "number", "boolean", "choice", "json"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Marks a field without a default value."""

_SIMPLE: dict[str, Kind] = {
    "string": "text",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
}
_KIND_NAMES: dict[str, str] = {
    "text": "string",
    "integer": "integer",
    "number": "float",
    "boolean": "true or false",
    "choice": "one of the options",
}
_LONG_TEXT_NAMES = ("message", "text", "prompt", "code", "content", "query")


@dataclass(frozen=True)
class FieldError:
    """A problem with one field, found before or during validation."""

    path: str
    message: str


@dataclass(frozen=True)
class FieldSpec:
    """One form field: which widget to show and how to read it back."""

    name: str
    kind: Kind
    required: bool = False
    default: Any = MISSING
    description: str = ""
    nullable: bool = False
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    multiline: bool = False
    schema: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.name} *" if self.required else self.name

    def info(self) -> str:
        """The hint shown under the label: description, type, bounds and default."""
        parts = [self.description] if self.description else []
        detail = _json_type_name(self.schema) if self.kind == "json" else _KIND_NAMES[self.kind]
        bounds = self.bounds_text()
        parts.append(f"{detail}, {bounds}" if bounds else detail)
        if self.default is not MISSING and self.default not in (None, "", [], {}):
            parts.append(f"default {json.dumps(self.default)}")
        if not self.required and self.default is MISSING:
            parts.append("optional")
        return " · ".join(parts)

    def bounds_text(self) -> str:
        """Bounds written like ``0 ≤ x < 1``, or ``""`` when the field has none."""
        low = high = ""
        if self.minimum is not None:
            low = f"{_num(self.minimum)} ≤ "
        elif self.exclusive_minimum is not None:
            low = f"{_num(self.exclusive_minimum)} < "
        if self.maximum is not None:
            high = f" ≤ {_num(self.maximum)}"
        elif self.exclusive_maximum is not None:
            high = f" < {_num(self.exclusive_maximum)}"
        return f"{low}x{high}" if low or high else ""


def _num(value: float | None) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _json_type_name(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "array":
        return "JSON list"
    if kind == "object" and "properties" in schema:
        return "JSON object (nested model)"
    if kind == "object":
        return "JSON object"
    return "JSON value"


def form_fields(schema: dict[str, Any], *, skip: Sequence[str] = ("metadata",)) -> list[FieldSpec]:
    """The form fields of an object schema, in declaration order.

    Args:
        schema: A JSON schema of an object, as ``Model.model_json_schema()`` returns it.
        skip: Property names left out of the form (``metadata`` by default).
    """
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    return [
        _field(name, prop, defs, required=name in required)
        for name, prop in schema.get("properties", {}).items()
        if name not in skip
    ]


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (or a single-item ``allOf``), keeping the sibling keys."""
    seen = 0
    while seen < 16:
        seen += 1
        if "$ref" in node:
            target = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        elif isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            node = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
        else:
            break
    return node


def _field(name: str, prop: dict[str, Any], defs: dict[str, Any], *, required: bool) -> FieldSpec:
    node = _resolve(prop, defs)
    nullable = False
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list):
        kept = [o for o in options if o.get("type") != "null"]
        nullable = len(kept) < len(options)
        if len(kept) == 1:
            outer = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
            node = {**_resolve(kept[0], defs), **outer}
    kind = _kind(node)
    base = FieldSpec(
        name=name,
        kind=kind,
        required=required,
        default=node.get("default", MISSING),
        description=str(node.get("description", "")),
        nullable=nullable,
        schema=_inline_refs(node, defs),
    )
    if kind == "choice":
        choices = tuple(node["enum"]) if "enum" in node else (node["const"],)
        return replace(base, choices=choices)
    if kind in ("integer", "number"):
        return replace(
            base,
            minimum=node.get("minimum"),
            maximum=node.get("maximum"),
            exclusive_minimum=node.get("exclusiveMinimum"),
            exclusive_maximum=node.get("exclusiveMaximum"),
        )
    if kind == "text":
        long = int(node.get("maxLength", 0) or 0) > 200 or name.lower() in _LONG_TEXT_NAMES
        return replace(base, multiline=long)
    return base


def _kind(node: dict[str, Any]) -> Kind:
    if "enum" in node or "const" in node:
        return "choice"
    kind = node.get("type")
    if isinstance(kind, str) and kind in _SIMPLE:
        return _SIMPLE[kind]
    return "json"


def _inline_refs(node: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """A copy of ``node`` with local references replaced by their targets (for skeletons)."""
    if depth > 8:
        return {}
    if isinstance(node, list):
        return [_inline_refs(item, defs, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    node = _resolve(node, defs)
    return {k: _inline_refs(v, defs, depth + 1) for k, v in node.items() if k != "$defs"}


# -- initial widget values ---------------------------------------------------------------------


def initial_value(spec: FieldSpec) -> Any:
    """The value a widget starts with: the default, or an empty value of the right kind."""
    default = None if spec.default is MISSING else spec.default
    if spec.kind == "json":
        value = (
            default
            if default is not None or spec.default is not MISSING
            else _skeleton(spec.schema)
        )
        return json.dumps(value, indent=2)
    if spec.kind == "text":
        return "" if default is None else str(default)
    if spec.kind == "boolean":
        return bool(default)
    if spec.kind == "choice":
        if default is not None or spec.nullable:
            return default
        return spec.choices[0] if spec.choices else None
    return "" if default is None else default  # numbers without a default use a text box


def _skeleton(schema: dict[str, Any], depth: int = 0) -> Any:
    """A JSON value shaped like ``schema``, to show what a JSON field expects."""
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" and "properties" in schema and depth < 4:
        return {k: _skeleton(v, depth + 1) for k, v in schema["properties"].items()}
    empty: dict[str, Any] = {
        "object": {},
        "array": [],
        "string": "",
        "integer": 0,
        "number": 0.0,
        "boolean": False,
    }
    return empty.get(kind) if isinstance(kind, str) else None


# -- widget values back to JSON ----------------------------------------------------------------


def collect(
    specs: Sequence[FieldSpec], values: Sequence[Any]
) -> tuple[dict[str, Any], list[FieldError]]:
    """The JSON object the widgets describe, and the fields that could not be read.

    Empty optional fields are left out so the model's default applies. Whole-number floats
    from number boxes become ints for integer fields; JSON fields are parsed.
    """
    data: dict[str, Any] = {}
    errors: list[FieldError] = []
    for spec, raw in zip(specs, values, strict=True):
        try:
            value = _read(spec, raw)
        except ValueError as exc:
            errors.append(FieldError(spec.name, str(exc)))
            continue
        if value is not MISSING:
            data[spec.name] = value
    return data, errors


def _read(spec: FieldSpec, raw: Any) -> Any:
    empty = raw is None or (isinstance(raw, str) and not raw.strip() and spec.kind != "text")
    if empty or (spec.kind == "text" and raw == "" and spec.default is None):
        return None if spec.required else MISSING
    if spec.kind in ("integer", "number") and isinstance(raw, str):
        raw = _parse_number(raw.strip())
    if spec.kind == "integer" and isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if spec.kind == "json":
        try:
            return json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            ) from None
    return raw


def _parse_number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
