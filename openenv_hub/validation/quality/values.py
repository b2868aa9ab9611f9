"""Arguments for a tool, made from its JSON schema: random ones, and the degenerate answers
(empty, the longest allowed, a given text).

Layer: client.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import Any

__all__ = ["LONGEST_CHARS", "degenerate_arguments", "random_arguments", "text_fields"]

#: The longest text a "longest answer" sends where the schema sets no bound.
LONGEST_CHARS = 10_000
_NUMBERS = ("integer", "number")


def text_fields(parameters: dict[str, Any]) -> list[str]:
    """The string properties of a tool's parameters: the required ones, else all of them."""
    properties = parameters.get("properties") or {}
    strings = [name for name, schema in properties.items() if _kind(schema) == "string"]
    required = [name for name in strings if name in (parameters.get("required") or [])]
    return required or strings


def degenerate_arguments(parameters: dict[str, Any], mode: str, text: str = "") -> dict[str, Any]:
    """Arguments where every text field is ``text`` (``mode="text"``), empty (``"empty"``) or as
    long as allowed (``"longest"``, ``text`` repeated); numbers at zero, or at their maximum
    for ``"longest"``; lists as short as allowed."""
    properties = parameters.get("properties") or {}
    wanted = set(parameters.get("required") or []) | set(text_fields(parameters))
    arguments = {}
    for name, schema in properties.items():
        if name in wanted:
            arguments[name] = _degenerate(schema, mode, text)
    return arguments


def _degenerate(schema: dict[str, Any], mode: str, text: str) -> Any:
    kind = _kind(schema)
    if schema.get("enum"):
        return schema["enum"][-1 if mode == "longest" else 0]
    if kind == "string":
        if mode == "empty":
            return ""
        if mode == "text":
            return text[: int(schema["maxLength"])] if schema.get("maxLength") else text
        limit = int(schema.get("maxLength") or LONGEST_CHARS)
        filler = (text or "answer") + " "
        return (filler * (limit // len(filler) + 1))[:limit]
    if kind in _NUMBERS:
        low = _bound(schema, "minimum", "exclusiveMinimum", kind)
        high = _bound(schema, "maximum", "exclusiveMaximum", kind)
        value = high if mode == "longest" and high is not None else 0
        value = max(value, low) if low is not None else value
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return mode == "longest"
    if kind == "array":
        return [_degenerate(_items(schema), mode, text)] * int(schema.get("minItems") or 0)
    if kind == "object":
        return degenerate_arguments(schema, mode, text)
    return None


def random_arguments(
    parameters: dict[str, Any], rng: random.Random, seen: list[str]
) -> dict[str, Any]:
    """Random arguments: required fields always, the others half the time; a text is half the
    time one of ``seen`` (strings the last observation showed), else random letters."""
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    return {
        name: _random(schema, rng, seen)
        for name, schema in properties.items()
        if name in required or rng.random() < 0.5
    }


def _random(schema: dict[str, Any], rng: random.Random, seen: list[str]) -> Any:
    kind = _kind(schema)
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    makers: dict[str, Callable[[], Any]] = {
        "string": lambda: _random_text(schema, rng, seen),
        "integer": lambda: rng.randint(*_range(schema, "integer", 0, 10)),
        "number": lambda: rng.uniform(*_range(schema, "number", -1.0, 1.0)),
        "boolean": lambda: rng.random() < 0.5,
        "array": lambda: _random_list(schema, rng, seen),
        "object": lambda: random_arguments(schema, rng, seen),
    }
    maker = makers.get(kind)
    return maker() if maker else None


def _random_text(schema: dict[str, Any], rng: random.Random, seen: list[str]) -> str:
    low, high = int(schema.get("minLength") or 0), int(schema.get("maxLength") or 40)
    fitting = [s for s in seen if low <= len(s) <= high]
    if fitting and rng.random() < 0.5:
        return rng.choice(fitting)
    size = rng.randint(low, max(low, min(high, 40)))
    return "".join(rng.choice(string.ascii_lowercase + " ") for _ in range(size))


def _random_list(schema: dict[str, Any], rng: random.Random, seen: list[str]) -> list[Any]:
    low = int(schema.get("minItems") or 0)
    high = int(schema.get("maxItems") or max(low, 3))
    return [_random(_items(schema), rng, seen) for _ in range(rng.randint(low, max(low, high)))]


def _items(schema: dict[str, Any]) -> dict[str, Any]:
    items = schema.get("items")
    return items if isinstance(items, dict) else {}


def _range(schema: dict[str, Any], kind: str, low: float, high: float) -> tuple[Any, Any]:
    bottom = _bound(schema, "minimum", "exclusiveMinimum", kind)
    top = _bound(schema, "maximum", "exclusiveMaximum", kind)
    bottom = low if bottom is None else bottom
    top = max(bottom, high if top is None else top)
    return (int(bottom), int(top)) if kind == "integer" else (float(bottom), float(top))


def _bound(schema: dict[str, Any], inclusive: str, exclusive: str, kind: str) -> float | None:
    if isinstance(schema.get(inclusive), int | float):
        return float(schema[inclusive])
    if isinstance(schema.get(exclusive), int | float):
        step = 1 if kind == "integer" else 1e-9
        sign = 1 if exclusive == "exclusiveMinimum" else -1
        return float(schema[exclusive]) + sign * step
    return None


def _kind(schema: dict[str, Any]) -> str:
    """The schema's type, the first that is not null of a union (``anyOf``)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for option in schema.get("anyOf") or schema.get("oneOf") or []:
            if isinstance(option, dict) and option.get("type") not in (None, "null"):
                return _kind(option)
    return str(kind or "")
