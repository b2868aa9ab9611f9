"""The sections of ``openenv.yaml`` that describe tasks and quality: ``taskset`` (where an
environment's tasks are) and ``quality`` (what ``openenv validate --level quality`` plays).
:mod:`openenv_hub.model.manifest` holds the manifest itself, and re-exports these.

Layer: model.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["Quality", "QualityCost", "QualityOracle", "Taskset"]

_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def _function(value: str | None) -> str | None:
    if value is not None and not _FUNCTION.match(value):
        raise ValueError(f"'{value}' is not a function path like 'package.module:function'")
    return value


class Taskset(BaseModel):
    """Where an environment's tasks are: ``source`` (a folder of JSON Lines inside the
    environment folder, or a Hub dataset ``hf://datasets/NS/NAME``), or ``generator`` (a
    function that makes the task of a seed). Exactly one of the two."""

    model_config = ConfigDict(extra="forbid")

    source: str | None = Field(
        None,
        description="A folder of .jsonl files in the environment folder (one file per split), "
        "or hf://datasets/NS/NAME.",
    )
    splits: list[str] = Field(
        default_factory=list, description="The splits of source to use (default: every split)."
    )
    key: str | None = Field(
        None,
        description="The column holding each task's key (default: the first of key, task_id, id).",
    )
    generator: str | None = Field(
        None,
        description="'module:function' taking a seed and returning the task's row (prompt, "
        "reset, ...); the task with id N is the one of seed N.",
    )
    split: str = Field("test", description="The split the generator's tasks belong to.")
    size: int = Field(
        100, ge=1, description="Seeds 0 to size - 1 are the generator's tasks (default 100)."
    )

    @field_validator("generator")
    @classmethod
    def _generator_path(cls, value: str | None) -> str | None:
        return _function(value)

    @model_validator(mode="after")
    def _one_kind(self) -> Taskset:
        if (self.source is None) == (self.generator is None):
            raise ValueError("give exactly one of 'source' (tasks in files) and 'generator'")
        return self


class QualityOracle(BaseModel):
    """What solves the tasks for ``openenv validate --level quality``: a ``policy`` or recorded
    ``solutions``, exactly one; and the ``secrets`` no observation may show."""

    model_config = ConfigDict(extra="forbid")

    policy: str | None = Field(
        default=None,
        description="'module:function': a policy as openenv eval plays it, "
        "(messages, tools, seed) -> message.",
    )
    solutions: str | None = Field(
        default=None,
        description="A JSON Lines file in the environment folder, a row per task: "
        '{"key": ..., "actions": [...]} (the actions a solution sends).',
    )
    secrets: str | None = Field(
        default=None,
        description="'module:function' (task) -> list of strings the agent must never read "
        "(hidden tests); the oracle's own answers are looked for too.",
    )

    @field_validator("policy", "secrets")
    @classmethod
    def _function_path(cls, value: str | None) -> str | None:
        return _function(value)

    @model_validator(mode="after")
    def _one_kind(self) -> QualityOracle:
        if (self.policy is None) == (self.solutions is None):
            raise ValueError("give exactly one of 'policy' (module:function) and 'solutions'")
        return self


class QualityCost(BaseModel):
    """Bounds of the cost check; a bound left out is measured and not held."""

    model_config = ConfigDict(extra="forbid")

    reset_p50_s: float = Field(default=1.0, gt=0, description="Median seconds of a reset.")
    step_p50_s: float = Field(default=1.0, gt=0, description="Median seconds of a step.")
    memory_per_session_mb: float | None = Field(
        default=None, gt=0, description="MB each session adds."
    )
    start_s: float | None = Field(
        default=None, gt=0, description="Seconds until the server is healthy."
    )


class Quality(BaseModel):
    """What ``openenv validate --level quality`` plays and holds the environment to; every
    field has a default, so an environment without this section is checked too."""

    model_config = ConfigDict(extra="forbid")

    oracle: QualityOracle | None = Field(default=None, description="What solves the tasks.")
    tasks: int | list[str] = Field(
        default=3, description="How many tasks to play (the first ones), or their keys."
    )
    pass_threshold: float | None = Field(
        default=None,
        description="The return that solves a task (default: the top of the declared reward "
        "range, when it has one).",
    )
    margin: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="How far below the oracle every non-solution stays, as a fraction of the "
        "oracle's return.",
    )
    degenerate: str | None = Field(
        default=None,
        description="'module:function' (task) -> [{name, actions}]: more non-solutions to play.",
    )
    exempt: dict[str, str] = Field(
        default_factory=dict,
        description="Non-solutions that solve this environment's tasks by design: "
        "{policy name: why}.",
    )
    answer_tool: str | None = Field(
        default=None, description="The tool (or action) the non-solutions answer with."
    )
    seeded: bool = Field(
        default=False,
        description="reset(seed=N) starts one of many episodes, so seeds must differ.",
    )
    max_steps: int = Field(default=10, ge=1, le=100_000, description="Most steps of an episode.")
    sessions: int = Field(
        default=3, ge=2, le=64, description="Sessions played at once (isolation)."
    )
    cost: QualityCost = Field(
        default_factory=lambda: QualityCost(), description="Bounds of the cost."
    )

    @field_validator("degenerate")
    @classmethod
    def _function_path(cls, value: str | None) -> str | None:
        return _function(value)
