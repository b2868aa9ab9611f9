"""The episodes behind a scorecard, played once and shared by the checks.

Phases, in order: read the server (``/metadata``, its tools), choose the tasks, play the oracle
on each, play every non-solution on each (reading the state after doing nothing), replay the
oracle's and the random episodes in fresh sessions, reset with other seeds, and replay episodes
in several sessions at once. Every episode of a task resets with the same arguments (its seed
included), so their first observations must agree. A phase the instrument could not finish is
recorded in :attr:`QualityRun.errors` and the checks that need it say they could not check.

Layer: client.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import Task, Toolset, declared_tasks, server_tasks
from openenv_hub.validation.quality.episodes import (
    REQUEST_TIMEOUT_S,
    ActionSource,
    CouldNotCheck,
    Episode,
    Scripted,
    Timings,
    instrument,
    play,
)
from openenv_hub.validation.quality.policies import (
    BUILT_IN,
    ChatOracle,
    RandomActions,
    answer_tool,
    one_answer,
    prompt_of,
)
from openenv_hub.validation.quality.spec import QualitySpec

__all__ = [
    "PHASES",
    "QualityRun",
    "choose_tasks",
    "play_floors",
    "play_oracle",
    "read_server",
    "replay_alone",
    "reset_every_task",
    "reset_other_seeds",
]

PHASES = ("server", "tasks", "oracle", "floor", "every_task", "replay", "seeds", "isolation")
#: The most tasks of a taskset reset once each (the first ones), besides those played.
EVERY_TASK_LIMIT = 20
#: Seeds tried besides each task's own, where the manifest says seeds choose the start.
OTHER_SEEDS = (101, 202, 303)


@dataclass
class QualityRun:
    """What the phases played and measured; the checks read it."""

    url: str
    spec: QualitySpec
    deadline: float
    request_timeout_s: float = REQUEST_TIMEOUT_S
    pid: int | None = None
    start_s: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)
    toolset: Toolset | None = None
    reward_range: tuple[float, float] | None = None
    tasks: list[Task] = field(default_factory=list)
    listed: list[Task] = field(default_factory=list)
    task_source: str = ""
    timings: Timings = field(default_factory=Timings)
    oracle: dict[str, Episode] = field(default_factory=dict)
    floors: dict[str, dict[str, Episode]] = field(default_factory=dict)
    not_played: dict[str, str] = field(default_factory=dict)
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    replays: list[tuple[Episode, Episode]] = field(default_factory=list)
    seed_starts: list[Episode] = field(default_factory=list)
    task_starts: list[Episode] = field(default_factory=list)
    isolation: list[tuple[Episode, Episode]] = field(default_factory=list)
    isolation_note: str = ""
    memory: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def reset_of(self, task: Task) -> dict[str, Any]:
        """The arguments every episode of ``task`` resets with: its own, and a seed."""
        seed = task.reset.get("seed", self.tasks.index(task) if task in self.tasks else 0)
        return {**task.reset, "seed": seed}

    def episodes(self) -> list[Episode]:
        """Every episode played, the replays included."""
        played = [*self.oracle.values(), *(e for by in self.floors.values() for e in by.values())]
        played += [replay for _, replay in [*self.replays, *self.isolation]]
        return played + self.seed_starts + self.task_starts

    async def play(
        self,
        policy: str,
        task: Task,
        source: ActionSource,
        *,
        max_steps: int,
        reset: dict[str, Any] | None = None,
        read_state: bool = False,
    ) -> Episode:
        """One episode of ``task`` (reset with its own arguments unless ``reset`` is given)."""
        self.check_time()
        return await play(
            self.url, policy, task, self.reset_of(task) if reset is None else reset, source,
            max_steps=max_steps, timings=self.timings, read_state=read_state,
            timeout_s=self.request_timeout_s,
        )  # fmt: skip

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise CouldNotCheck("the scorecard's time limit passed before it was done")


async def read_server(run: QualityRun) -> None:
    with instrument("reading the server"):
        async with httpx.AsyncClient(base_url=run.url, timeout=30.0, trust_env=False) as http:
            metadata = await http.get("/metadata")
            schema = await http.get("/schema")
        metadata.raise_for_status()
        schema.raise_for_status()
    run.metadata, run.schema = metadata.json(), schema.json()
    bounds = run.metadata.get("reward_range")
    if isinstance(bounds, list) and len(bounds) == 2:
        low, high = bounds
        run.reward_range = (
            float("-inf") if low is None else float(low),
            float("inf") if high is None else float(high),
        )
    else:
        run.reward_range = run.spec.declared_range
    try:
        with instrument("listing the tools"):
            run.toolset = await Toolset.of(run.url)
    except ConfigurationError as exc:
        raise CouldNotCheck(f"listing the tools: {exc}") from exc


async def choose_tasks(run: QualityRun) -> None:
    quality = run.spec.quality
    keys = quality.tasks if isinstance(quality.tasks, list) else None
    count = None if keys is not None else int(quality.tasks)  # type: ignore[arg-type]
    limit = None if count is None else max(count, EVERY_TASK_LIMIT)
    try:
        found, run.task_source = await asyncio.to_thread(_listed_tasks, run, limit, count)
    except ConfigurationError as exc:
        run.problems["tasks"] = str(exc)
        raise CouldNotCheck(f"choosing the tasks: {exc}") from exc
    run.listed = found[:EVERY_TASK_LIMIT]
    if keys is None:
        run.tasks = found[:count]
        return
    by_key = {task.key: task for task in found}
    missing = [key for key in keys if key not in by_key]
    if missing:
        run.problems["tasks"] = f"quality.tasks names {', '.join(missing)}, not tasks here"
        raise CouldNotCheck(run.problems["tasks"])
    run.tasks = [by_key[key] for key in keys]


def _listed_tasks(run: QualityRun, limit: int | None, count: int | None) -> tuple[list[Task], str]:
    """The tasks the manifest declares (the first ``limit``), else those the server lists,
    else ``count`` seeds."""
    spec = run.spec
    if spec.root is not None and spec.manifest is not None and spec.manifest.taskset is not None:
        declared = declared_tasks(spec.root, limit=limit)
        assert declared is not None
        return declared.tasks, "taskset"
    name = str(run.metadata.get("name") or spec.name)
    try:
        return server_tasks(run.url, name), "server"
    except ConfigurationError:
        pass  # the server lists no tasks: its seeds are its tasks
    except httpx.HTTPError as exc:
        raise CouldNotCheck(f"listing the server's tasks: {type(exc).__name__}: {exc}") from exc
    if count is None:
        raise ConfigurationError("quality.tasks names tasks, but the environment declares none.")
    return [Task(key=f"seed-{n}", split="seeds", reset={"seed": n}) for n in range(count)], "seeds"


async def play_oracle(run: QualityRun) -> None:
    spec, toolset = run.spec, run.toolset
    assert toolset is not None
    try:
        policy, solutions = spec.oracle_policy(), spec.solutions()
    except ConfigurationError as exc:
        run.problems["oracle"] = f"{exc} {exc.hint}".strip()
        return
    if policy is None and solutions is None:
        return
    for number, task in enumerate(run.tasks):
        run.check_time()
        if solutions is not None and task.key not in solutions:
            run.problems.setdefault("oracle", f"no recorded solution for task {task.key}")
            continue
        source = (
            Scripted(solutions[task.key])
            if solutions is not None
            else ChatOracle(policy, toolset, seed=number)  # type: ignore[arg-type]
        )
        run.oracle[task.key] = await run.play(
            "oracle", task, source, max_steps=spec.quality.max_steps
        )


async def play_floors(run: QualityRun) -> None:
    toolset, quality = run.toolset, run.spec.quality
    assert toolset is not None
    try:
        tool = answer_tool(toolset, quality.answer_tool)
    except ValueError as exc:
        run.problems["floor"] = str(exc)
        tool = None
    for task in run.tasks:
        run.check_time()
        nothing = await run.play("do-nothing", task, Scripted([]), max_steps=0, read_state=True)
        run.floors.setdefault("do-nothing", {})[task.key] = nothing
        for name, source in _non_solutions(run, task, tool, prompt_of(nothing)):
            run.check_time()
            steps = quality.max_steps if name == "random" else max(1, len(source.actions))
            episode = await run.play(
                name, task, source, max_steps=steps, read_state=name == "random"
            )
            run.floors.setdefault(name, {})[task.key] = episode


def _non_solutions(
    run: QualityRun, task: Task, tool: dict[str, Any] | None, prompt: str
) -> list[tuple[str, Any]]:
    """``(name, action source)`` of each non-solution of ``task`` to play besides doing
    nothing (those the manifest exempts too: their episodes count for the other checks)."""
    toolset = run.toolset
    assert toolset is not None
    played: list[tuple[str, Any]] = [("random", RandomActions(toolset, run.tasks.index(task)))]
    for name in BUILT_IN[2:] if tool is not None else ():
        assert tool is not None
        source = one_answer(toolset, tool, name, prompt)
        if source is None:
            run.not_played[name] = f"the answer ({tool['name']}) takes no text"
        else:
            played.append((name, source))
    try:
        own = run.spec.degenerate_of(task)
    except ConfigurationError as exc:
        run.problems["floor"] = f"{exc} {exc.hint}".strip()
        own = []
    for name, actions, note in own:
        played.append((name, Scripted(actions)))
        if note:
            run.notes[(name, task.key)] = note
    return played


async def reset_every_task(run: QualityRun) -> None:
    """Each listed task not played, reset once: every task of a taskset must start (the first
    :data:`EVERY_TASK_LIMIT` of a larger one)."""
    for task in run.listed:
        if task not in run.tasks:
            run.task_starts.append(await run.play("reset", task, Scripted([]), max_steps=0))


async def replay_alone(run: QualityRun) -> None:
    """The oracle's and the random episodes again, each in a fresh session."""
    originals = [*run.oracle.values(), *run.floors.get("random", {}).values()]
    for original in originals:
        run.check_time()
        if original.first is None or not original.steps:
            continue
        replay = await run.play(
            f"{original.policy}, replayed", original.task, Scripted(original.actions),
            max_steps=len(original.steps), reset=original.reset,
        )  # fmt: skip
        run.replays.append((original, replay))


async def reset_other_seeds(run: QualityRun) -> None:
    """The first task reset with other seeds, where seeds are said to choose the start."""
    if not run.spec.quality.seeded:
        return
    task = run.tasks[0]
    for seed in OTHER_SEEDS:
        run.check_time()
        reset = {**run.reset_of(task), "seed": seed}
        episode = await run.play(f"seed {seed}", task, Scripted([]), max_steps=0, reset=reset)
        run.seed_starts.append(episode)
