"""Actions on the wire: a ``step`` frame read together with its action in one validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from openenv_hub.protocol.messages import MESSAGE_CONFIG
from openenv_hub.protocol.strict_json import may_not_be_finite

__all__ = ["step_frame_reader"]

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
