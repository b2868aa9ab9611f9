"""A sample value built from a JSON schema: required fields filled with plain examples.

Layer: client.
"""

from __future__ import annotations

from typing import Any

__all__ = ["sample_from_schema"]

_SCALARS: dict[str, Any] = {
    "string": "hello",
    "integer": 1,
    "number": 1.0,
    "boolean": False,
    "array": [],
    "object": {},
    "null": None,
}


def sample_from_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """An instance of ``schema`` with every required property set (``$ref`` resolved)."""
    root = root or schema
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key, []) if _resolve(o, root).get("type") != "null"]
        if options:
            return sample_from_schema(options[0], root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" and "properties" in schema:
        required = schema.get("required", [])
        return {
            name: sample_from_schema(prop, root)
            for name, prop in schema["properties"].items()
            if name in required or "const" in prop
        }
    if kind == "array" and isinstance(schema.get("items"), dict) and schema.get("minItems"):
        return [sample_from_schema(schema["items"], root)] * int(schema["minItems"])
    return _SCALARS.get(str(kind))


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return dict(node)
