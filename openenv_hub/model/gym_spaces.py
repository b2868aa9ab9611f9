"""Gymnasium spaces as pydantic field types, and values converted to and from the wire.

:func:`field_type` turns a space into a type that pydantic validates and publishes as JSON
schema with the space's bounds: ``Discrete`` becomes a bounded ``int``, ``Box``,
``MultiDiscrete`` and ``MultiBinary`` nested lists with a fixed shape and per-element bounds,
``Dict`` a model, ``Tuple`` a tuple, ``Text`` a string. A value outside the space fails
validation with a message naming the bound it crosses. A ``uint8`` ``Box`` shaped like a
picture becomes an :data:`~openenv_hub.model.image_fields.ImageArray` (a PNG on the wire).

:func:`to_wire` turns what an environment returns into JSON-ready Python values;
:func:`from_wire` turns a validated action into what ``env.step`` expects.

Layer: model.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, PlainSerializer, PlainValidator
from pydantic import WithJsonSchema as _Schema

from openenv_hub.model.image_fields import ImageArray

__all__ = ["field_type", "from_wire", "is_image_space", "jsonable", "to_wire"]

_MIN_IMAGE_SIDE = 16


def _spaces() -> Any:
    from gymnasium import spaces

    return spaces


def is_image_space(space: Any) -> bool:
    """Whether ``space`` is a ``uint8`` ``Box`` shaped ``HxW`` or ``HxWxC`` (C in 1, 3, 4)."""
    spaces = _spaces()
    if not isinstance(space, spaces.Box) or str(space.dtype) != "uint8":
        return False
    shape = space.shape
    if len(shape) == 3 and shape[2] not in (1, 3, 4):
        return False
    return len(shape) in (2, 3) and min(shape[:2]) >= _MIN_IMAGE_SIDE


def field_type(space: Any, *, name: str = "value", check_bounds: bool = True) -> Any:
    """A pydantic field type for values of ``space``.

    Args:
        space: A Gymnasium space.
        name: Used to name generated models and in error messages.
        check_bounds: Validate array bounds (actions); observations are only converted.
    """
    spaces = _spaces()
    if isinstance(space, spaces.Discrete):
        low = int(space.start)
        return Annotated[int, Field(ge=low, le=low + int(space.n) - 1)]
    if is_image_space(space) and not check_bounds:
        return ImageArray
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return _ArraySpec(space, name, check_bounds).annotated()
    if isinstance(space, spaces.Tuple):
        items = [
            field_type(sub, name=f"{name}[{i}]", check_bounds=check_bounds)
            for i, sub in enumerate(space.spaces)
        ]
        return tuple.__class_getitem__(tuple(items)) if items else tuple[()]
    if isinstance(space, spaces.Dict):
        return _dict_model(space, name, check_bounds)
    if isinstance(space, spaces.Text):
        return Annotated[
            str,
            Field(min_length=space.min_length, max_length=space.max_length),
            AfterValidator(_in_charset(space, name)),
        ]
    return Annotated[Any, PlainSerializer(jsonable)]


def _in_charset(space: Any, name: str) -> Any:
    """A check that a string uses only the characters of a ``Text`` space."""
    allowed = frozenset(space.character_set)

    def check(text: str) -> str:
        outside = sorted(set(text) - allowed)
        if outside:
            shown = "".join(outside[:10])
            raise ValueError(f"{name}: the characters {shown!r} are not in the charset of {space}")
        return text

    return check


def _dict_model(space: Any, name: str, check_bounds: bool) -> Any:
    """A TypedDict with one key per sub-space (Dict keys need not be identifiers)."""
    from typing_extensions import TypedDict

    fields = {
        str(key): field_type(sub, name=f"{name}.{key}", check_bounds=check_bounds)
        for key, sub in space.spaces.items()
    }
    make_typed_dict: Any = TypedDict
    typed = make_typed_dict(_model_name(name), fields)
    typed.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    return typed


def _model_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.title()) or "Value"


class _ArraySpec:
    """Shape, dtype and bounds of a ``Box``, ``MultiDiscrete`` or ``MultiBinary`` space."""

    def __init__(self, space: Any, name: str, check_bounds: bool) -> None:
        import numpy as np

        spaces = _spaces()
        self.space, self.name, self.check_bounds = space, name, check_bounds
        self.shape = tuple(int(d) for d in space.shape)
        if isinstance(space, spaces.MultiDiscrete):
            self.low = np.asarray(space.start, dtype=np.int64)
            self.high = self.low + np.asarray(space.nvec, dtype=np.int64) - 1
        elif isinstance(space, spaces.MultiBinary):
            self.low, self.high = np.zeros(self.shape, np.int64), np.ones(self.shape, np.int64)
        else:
            self.low, self.high = (
                np.broadcast_to(space.low, self.shape),
                np.broadcast_to(space.high, self.shape),
            )
        self.dtype = space.dtype
        self.integer = np.dtype(space.dtype).kind in "iub"

    def annotated(self) -> Any:
        return Annotated[
            Any,
            PlainValidator(self.validate),
            PlainSerializer(lambda value: value.tolist(), return_type=Any),
            _Schema(self.schema()),
        ]

    def schema(self) -> dict[str, Any]:
        """Nested arrays of the space's shape; bounds on the items where they are uniform and
        finite, or per item (``prefixItems``) for a one-dimensional space."""
        kind = "integer" if self.integer else "number"
        low, high = self.low.ravel(), self.high.ravel()
        if len(self.shape) == 1 and not (_uniform(low) and _uniform(high)):
            items = [_bounded(kind, lo, hi) for lo, hi in zip(low, high, strict=True)]
            dim = self.shape[0]
            schema = {"type": "array", "prefixItems": items, "minItems": dim, "maxItems": dim}
        else:
            schema = _bounded(kind, low[0], high[0]) if low.size else {"type": kind}
            for dim in reversed(self.shape):
                schema = {"type": "array", "items": schema, "minItems": dim, "maxItems": dim}
        return {**schema, "description": f"A value of {self.space}"}

    def validate(self, value: Any) -> Any:
        import numpy as np

        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected numbers shaped {self.shape}, got {value!r:.80}") from None
        if array.shape != self.shape:
            raise ValueError(f"expected shape {self.shape}, got {array.shape}")
        if array.dtype.kind == "O" and all(_is_number(x) for x in array.flat):
            array = array.astype(np.float64)  # whole numbers beyond 64 bits: checked as floats
        if array.dtype.kind not in "iufb":  # text ("0.5" included), None, objects
            raise ValueError(f"expected numbers, got {array.dtype} values")
        if not self.integer:
            array = array.astype(np.float64)
        if self.integer and array.dtype.kind == "f" and not np.array_equal(array, np.round(array)):
            raise ValueError(f"expected whole numbers for {self.space}")
        if self.check_bounds:
            self._check_bounds(array)
        return array.astype(self.dtype, copy=False)

    def _check_bounds(self, array: Any) -> None:
        import numpy as np

        if np.isnan(array).any() if array.dtype.kind == "f" else False:
            raise ValueError(f"NaN is not in {self.space}")
        for bound, bad, word in (
            (self.low, array < self.low, "below the lower bound"),
            (self.high, array > self.high, "above the upper bound"),
        ):
            if bad.any():
                index = tuple(int(i) for i in np.argwhere(bad)[0])
                where = "".join(f"[{i}]" for i in index)
                raise ValueError(
                    f"{self.name}{where} = {_number(array[index])} is {word} "
                    f"{_number(bound[index])} of {self.space}"
                )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _uniform(values: Any) -> bool:
    return bool(values.size == 0 or (values == values[0]).all())


def _bounded(kind: str, low: Any, high: Any) -> dict[str, Any]:
    """``{"type": kind}`` with the finite bounds among ``low`` and ``high``."""
    schema: dict[str, Any] = {"type": kind}
    if math.isfinite(float(low)):
        schema["minimum"] = _number(low)
    if math.isfinite(float(high)):
        schema["maximum"] = _number(high)
    return schema


def _number(value: Any) -> int | float:
    number = value.item() if hasattr(value, "item") else value
    return int(number) if isinstance(number, (bool, int)) else float(number)


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars and arrays, tuples and sets made JSON-ready."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    return str(value)


def to_wire(space: Any, value: Any) -> Any:
    """What ``reset``/``step`` returned, ready for a model built by :func:`field_type`."""
    spaces = _spaces()
    if isinstance(space, spaces.Discrete):
        return int(value)
    if is_image_space(space):
        return value
    if isinstance(space, spaces.Tuple):
        return tuple(to_wire(sub, v) for sub, v in zip(space.spaces, value, strict=True))
    if isinstance(space, spaces.Dict):
        return {str(key): to_wire(sub, value[key]) for key, sub in space.spaces.items()}
    return jsonable(value)


def from_wire(space: Any, value: Any) -> Any:
    """A validated action value (from a model built by :func:`field_type`) for ``env.step``."""
    spaces = _spaces()
    if isinstance(space, spaces.Tuple):
        return tuple(from_wire(sub, v) for sub, v in zip(space.spaces, value, strict=True))
    if isinstance(space, spaces.Dict):
        return {key: from_wire(sub, value[str(key)]) for key, sub in space.spaces.items()}
    return value
