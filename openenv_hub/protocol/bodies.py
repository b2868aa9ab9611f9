"""HTTP bodies: what ``POST /reset`` and ``POST /step`` take, and a tool call's result.

Layer: core.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CallToolResult", "ResetRequest", "StepRequest"]


class ResetRequest(BaseModel):
    """Body of ``POST /reset``; unknown keys are forwarded to ``reset`` if it accepts them."""

    model_config = ConfigDict(extra="allow")
    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)


class StepRequest(BaseModel):
    """Body of ``POST /step``: the action's fields under ``action``."""

    model_config = ConfigDict(extra="allow")
    action: dict[str, Any]
    timeout_s: float | None = Field(default=None, gt=0)
    request_id: str | None = Field(default=None, max_length=255)


class CallToolResult(BaseModel):
    """Shape of a successful MCP tool call result as OpenEnv sends it."""

    model_config = ConfigDict(extra="allow")
    content: list[dict[str, Any]] = Field(default_factory=list)
    structured_content: Any = None
    meta: Any = None
    data: Any = None
    is_error: bool = False
