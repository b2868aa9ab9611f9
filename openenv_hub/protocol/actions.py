"""Actions off the wire: a step's data validated against the environment's action class, with
OpenEnv's MCP tool calls beside it where the environment takes them, and a whole ``step`` frame
read together with its action in one validation where it can be.

Example:
    >>> from openenv_hub.types import Action
    >>> class Move(Action):
    ...     to: str
    >>> reader = ActionReader(Move, tool_calls=False)
    >>> reader.read_step_frame('{"type":"step","data":{"to":"e4"}}')
    Move(metadata={}, to='e4')
    >>> reader.read_step_frame('{"type":"state"}') is None  # any other frame: decode it as usual
    True

Layer: core.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from openenv_hub.protocol.messages import MESSAGE_CONFIG
from openenv_hub.protocol.strict_json import may_not_be_finite
from openenv_hub.types import Action, CallToolAction, ListToolsAction

__all__ = ["ActionReader", "step_frame_reader"]

logger = logging.getLogger("openenv_hub.protocol")

_ActionT = TypeVar("_ActionT", bound=BaseModel)


class _StepFrame(BaseModel, Generic[_ActionT]):
    """A step message whose data is already the action (see :func:`step_frame_reader`)."""

    model_config = MESSAGE_CONFIG
    type: Literal["step"]
    data: _ActionT


def step_frame_reader(action_cls: type[BaseModel]) -> Callable[[str], Any]:
    """A reader of ``step`` frames for ``action_cls`` that validates the frame and its action in
    one pass. It returns the action, or ``None`` for any other text, and for a step frame it
    cannot take: the caller then decodes the text as usual, which also words any error."""
    frame: TypeAdapter[_StepFrame[Any]] = TypeAdapter(_StepFrame[action_cls])  # type: ignore[valid-type]

    def read(text: str) -> Any:
        if '"step"' not in text or may_not_be_finite(text):
            return None
        try:
            return frame.validate_json(text).data
        except ValidationError:
            return None

    return read


class ActionReader:
    """How one environment's actions are read off the wire.

    Args:
        action_cls: The environment's action model.
        tool_calls: Whether a step may also be an MCP tool call (``{"type": "list_tools"}``,
            ``{"type": "call_tool", ...}``), as for MCP environments and those whose action class
            is the base ``Action`` or an MCP action. Their step frames are read in two passes.
    """

    def __init__(self, action_cls: type[Any], *, tool_calls: bool) -> None:
        self.action_cls = action_cls
        self.tool_calls = tool_calls

    def parse(self, data: dict[str, Any]) -> Action:
        """Validate a step's data (raises pydantic's ``ValidationError``)."""
        if self.tool_calls:
            kind = data.get("type")
            if kind == "list_tools":
                return ListToolsAction.model_validate(data)
            if kind == "call_tool":
                return CallToolAction.model_validate(data)
        return self.action_cls.model_validate(data)  # type: ignore[no-any-return]

    @functools.cached_property
    def read_step_frame(self) -> Callable[[str], Action | None]:
        """Read a ``step`` frame and its action in one validation, or give ``None`` (for any
        other frame, one it cannot take, and always for steps that may be tool calls)."""
        if self.tool_calls:
            return _no_step_frame
        try:
            return step_frame_reader(self.action_cls)
        except Exception:  # an action class pydantic cannot nest: the general path still works
            logger.debug("No one-pass step frames for %s", self.action_cls, exc_info=True)
            return _no_step_frame


def _no_step_frame(text: str) -> None:
    return None
