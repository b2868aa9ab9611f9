"""The coding environment's action, observation and state."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from openenv_hub.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
)

__all__ = [
    "CallToolAction",
    "CallToolObservation",
    "CodeAction",
    "CodeObservation",
    "CodingState",
    "ExecutionError",
    "ListToolsAction",
    "ListToolsObservation",
]

MAX_CODE_CHARS = 1_000_000


class CodeAction(Action):
    """Run Python in the session's interpreter; names persist until ``reset``."""

    code: str = Field(
        description="Python source. A trailing expression's value is returned, as in a REPL.",
        max_length=MAX_CODE_CHARS,
    )


class ExecutionError(BaseModel):
    """An exception raised by the agent's code, with the traceback lines of that code only."""

    model_config = ConfigDict(extra="forbid")

    type: str
    message: str
    traceback: list[str] = Field(default_factory=list)


class CodeObservation(Observation):
    """What one step did. Flags say which limit, if any, ended it."""

    #: A step's duration differs from run to run: a fork by replay does not compare it.
    replay_ignores: ClassVar[frozenset[str]] = frozenset({"duration_s"})

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    result: str | None = Field(default=None, description="repr() of a trailing expression")
    error: ExecutionError | None = None
    duration_s: float = 0.0
    timed_out: bool = False
    memory_exceeded: bool = False
    output_truncated: bool = False
    context_lost: bool = Field(
        default=False, description="The interpreter was restarted: earlier names and files are gone"
    )
    message: str = Field(default="", description="Why a limit ended the step, or what reset did")
    task_id: str | None = None
    prompt: str | None = None
    passed: bool | None = Field(
        default=None, description="Every hidden test passed (None: no task loaded)"
    )
    tests_total: int | None = None


class CodingState(State):
    task_id: str | None = None
    sandbox: str = ""
    context_restarts: int = 0
