"""Environments the UI tests serve: a typed echo and one whose action uses every field kind."""

from __future__ import annotations

import base64
import enum
import io
import uuid
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from openenv_hub import Action, Environment, MCPEnvironment, Observation, State, tool


class TypedEchoAction(Action):
    """What ``openenv init`` generates: one message to echo."""

    message: str = Field(..., description="Message to echo back")


class TypedEchoObservation(Observation):
    echoed_message: str = Field(default="", description="The echoed message")
    message_length: int = Field(default=0, description="Length of the echoed message")


class TypedEchoEnvironment(Environment[TypedEchoAction, TypedEchoObservation, State]):
    """Echoes the message; reward is a tenth of its length."""

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid.uuid4()))

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> TypedEchoObservation:
        self._state = State(episode_id=episode_id or str(uuid.uuid4()))
        return TypedEchoObservation(echoed_message="Typed Echo environment ready!", reward=0.0)

    def step(
        self, action: TypedEchoAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TypedEchoObservation:
        self._state.step_count += 1
        length = len(action.message)
        return TypedEchoObservation(
            echoed_message=action.message, message_length=length, reward=length * 0.1
        )

    @property
    def state(self) -> State:
        return self._state


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: float = 0.0


class AllFieldsAction(Action):
    """One field of every kind the form generator knows."""

    text: str = Field(..., description="Any text; 'boom' makes the environment raise")
    count: int = Field(3, ge=0, le=10, description="A bounded integer")
    ratio: float = Field(0.5, gt=0, lt=1, description="Strictly between 0 and 1")
    flag: bool = Field(False, description="A switch")
    mode: Literal["fast", "slow"] = Field("fast", description="A Literal")
    color: Color = Field(Color.RED, description="An Enum")
    items: list[int] = Field(default_factory=list, description="A list of integers")
    weights: dict[str, float] = Field(default_factory=dict, description="A mapping")
    point: Point = Field(default_factory=lambda: Point(x=0), description="A nested model")
    limit: int | None = Field(None, description="Optional, no default value")


class AllFieldsObservation(Observation):
    summary: str = ""
    frame: list[list[list[int]]] = Field(default_factory=list)
    thumbnail: str = ""
    log: str = ""


class AllFieldsEnvironment(Environment[AllFieldsAction, AllFieldsObservation, State]):
    """Records every action it receives (in ``received``) and returns an image and long text."""

    received: ClassVar[list[AllFieldsAction]] = []

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid.uuid4()))

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> AllFieldsObservation:
        self._state = State(episode_id=episode_id or str(uuid.uuid4()), seed=seed)
        return AllFieldsObservation(summary=f"reset with seed {seed}", reward=0.0)

    def step(
        self, action: AllFieldsAction, timeout_s: float | None = None, **kwargs: Any
    ) -> AllFieldsObservation:
        if action.text == "boom":
            raise RuntimeError("boom went the environment")
        type(self).received.append(action)
        self._state.step_count += 1
        level = 40 * action.count
        frame = [[[level, 255 - level, 128] for _ in range(12)] for _ in range(8)]
        log = "\n".join(f"line {i}: {action.text}" for i in range(12))
        return AllFieldsObservation(
            summary=f"{action.mode}/{action.color.value}",
            frame=frame,
            thumbnail=_png_data_uri(),
            log=log,
            reward=float(action.count),
            done=action.flag,
        )

    @property
    def state(self) -> State:
        return self._state


def _png_data_uri() -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (6, 4), (200, 30, 30)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


class NoteAction(Action):
    """An action of its own, next to the tools."""

    note: str = Field(..., description="Anything to write down")


class NoteObservation(Observation):
    notes: list[str] = Field(default_factory=list)


class CalculatorEnvironment(MCPEnvironment):
    """MCP tools plus a typed action, so tool calls go through ``call_tool``, not ``step``."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[str] = []

    @tool
    def divide(self, a: float, b: float = 1.0) -> float:
        """Divide a by b."""
        return a / b

    @tool
    def scale(self, values: list[float], factor: float = 2.0) -> list[float]:
        """Multiply every value by a factor."""
        return [v * factor for v in values]

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        assert isinstance(action, NoteAction)
        self.notes.append(action.note)
        return NoteObservation(notes=list(self.notes), reward=1.0)
