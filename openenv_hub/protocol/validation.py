"""Pydantic's validation errors as the wire carries them: JSON-safe dicts and one line of text.

Layer: core.
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from pydantic import ValidationError

from openenv_hub.errors import ActionValidationError

__all__ = ["describe_validation_error", "public_errors", "validation_error"]


def public_errors(exc: ValidationError, *, drop_prefix: int = 0) -> list[dict[str, Any]]:
    """Pydantic's errors as JSON-safe dicts, ``loc`` trimmed of ``drop_prefix`` leading items."""
    out = []
    for err in exc.errors():
        item: dict[str, Any] = {
            "type": err["type"],
            "loc": list(err["loc"][drop_prefix:]),
            "msg": err["msg"],
            "input": err.get("input"),
        }
        if "ctx" in err:
            item["ctx"] = {
                k: v if isinstance(v, (int, float, str, bool)) else str(v)
                for k, v in err["ctx"].items()
            }
        if "url" in err:
            item["url"] = err["url"]
        out.append(item)
    return pydantic_core.to_jsonable_python(out, fallback=str)  # type: ignore[no-any-return]


def describe(errors: list[dict[str, Any]], what: str) -> str:
    """``Invalid <what>: loc: msg; ...`` for the first five errors."""
    parts = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errors[:5]]
    more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
    return f"Invalid {what}: " + "; ".join(parts) + more


def validation_error(exc: ValidationError, what: str) -> ActionValidationError:
    """The VALIDATION_ERROR for an action (or other payload) that failed validation."""
    errors = public_errors(exc)
    return ActionValidationError(describe(errors, what), data={"errors": errors})


def describe_validation_error(exc: ValidationError, what: str) -> tuple[str, list[dict[str, Any]]]:
    """The message and the JSON-safe errors of a payload that failed validation."""
    errors = public_errors(exc)
    return describe(errors, what), errors
