"""The data an environment exchanges: actions, observations, state, and MCP tool messages.

Field names and model configuration follow OpenEnv's wire protocol, so JSON produced here is
read unchanged by OpenEnv clients and servers (see ``docs/protocol.md``).

Layer: core.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Action",
    "CallToolAction",
    "CallToolObservation",
    "EnvironmentMetadata",
    "ListToolsAction",
    "ListToolsObservation",
    "Observation",
    "ReplayFacts",
    "State",
    "StepResult",
    "Tool",
    "ToolError",
    "ToolErrorType",
]

_STRICT = ConfigDict(extra="forbid", validate_assignment=True, arbitrary_types_allowed=True)


class Action(BaseModel):
    """What an agent sends to ``step``. Unknown fields are rejected."""

    model_config = _STRICT

    metadata: dict[str, Any] = Field(default_factory=dict)


class Observation(BaseModel):
    """What an environment returns from ``reset`` and ``step``.

    ``reward`` and ``done`` travel beside the observation on the wire, not inside it.
    """

    model_config = _STRICT
    #: Fields that may differ between two runs of the same episode (a timing, say): a fork by
    #: replay leaves them out when it checks observations against the recording.
    replay_ignores: ClassVar[frozenset[str]] = frozenset()

    done: bool = False
    reward: bool | int | float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class State(BaseModel):
    """Episode bookkeeping returned by ``state``. Subclasses and extra fields are allowed."""

    model_config = ConfigDict(extra="allow", validate_assignment=True, arbitrary_types_allowed=True)

    episode_id: str | None = None
    step_count: int = Field(default=0, ge=0)


ObsT = TypeVar("ObsT")


@dataclass
class StepResult(Generic[ObsT]):
    """A parsed ``reset``/``step`` reply, as a client sees it."""

    observation: ObsT
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class ReplayFacts:
    """What an environment said of replaying its episode, after a reset or step: its
    :meth:`~openenv_hub.environment.Environment.state_digest` and (after a reset)
    :meth:`~openenv_hub.environment.Environment.replay_refusal`."""

    state_digest: str | None = None
    replay_refusal: str | None = None


class EnvironmentMetadata(BaseModel):
    """The body of ``GET /metadata``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    readme_content: str | None = None
    version: str | None = None
    author: str | None = None
    documentation_url: str | None = None
    reward_range: list[float | None] | None = Field(
        default=None,
        description="[low, high] every reward lies in (null: no bound on that side); the server "
        "fills it in from the environment's reward_range or its rubric's range",
    )


class Tool(BaseModel):
    """One MCP tool as listed in a :class:`ListToolsObservation`."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict)


class ToolErrorType(str, Enum):
    EXECUTION_ERROR = "execution_error"
    INVALID_ARGS = "invalid_args"
    TRANSPORT_ERROR = "transport_error"
    TOOL_NOT_FOUND = "tool_not_found"
    TIMEOUT = "timeout"


class ToolError(BaseModel):
    """Why a tool call failed, carried in :attr:`CallToolObservation.error`.

    A pydantic model on the wire (OpenEnv's name), not an exception: the clients' ``call_tool``
    raises :class:`~openenv_hub.errors.ToolCallError` when they receive one.
    """

    model_config = ConfigDict(extra="forbid")

    error_type: ToolErrorType
    message: str


class ListToolsAction(Action):
    """Ask an MCP environment for its tools."""

    type: Literal["list_tools"] = "list_tools"


class CallToolAction(Action):
    """Call one tool of an MCP environment."""

    type: Literal["call_tool"] = "call_tool"
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ListToolsObservation(Observation):
    tools: list[Tool] = Field(default_factory=list)


class CallToolObservation(Observation):
    """The result of a tool call: ``result`` on success, ``error`` on failure."""

    tool_name: str
    result: Any = None
    error: ToolError | None = None
