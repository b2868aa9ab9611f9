"""JSON as the wire allows it: no ``NaN`` or ``Infinity``, no number that overflows to infinity,
no unpaired UTF-16 surrogate escape.

Layer: core.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pydantic_core

__all__ = ["may_not_be_finite", "parse_json"]


def parse_json(raw: str | bytes) -> Any:
    """Parse JSON as the wire allows it: no ``NaN``/``Infinity``, no number that overflows to
    infinity, no unpaired UTF-16 surrogate escape. Raises ValueError saying what is wrong."""
    value = pydantic_core.from_json(raw, allow_inf_nan=False)
    if not _finite(value):
        raise ValueError("a number is too large to be represented (it overflows to infinity)")
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


#: A number with an exponent of three digits or more, or of 309 digits: it may overflow.
_BIG_EXPONENT = re.compile(r"[0-9][eE]\+?[0-9]{3}")
_LONG_NUMBER = re.compile(r"[0-9]{309}")


def may_not_be_finite(text: str) -> bool:
    """Whether ``text`` may hold a number JSON cannot carry (``NaN``, ``Infinity``, or one that
    overflows). Frames without one take the one-pass path; the rare ones with it (in a string,
    say) are parsed strictly and checked number by number."""
    return (
        "NaN" in text
        or "Infinity" in text
        or _BIG_EXPONENT.search(text) is not None
        or (len(text) >= 309 and _LONG_NUMBER.search(text) is not None)
    )
