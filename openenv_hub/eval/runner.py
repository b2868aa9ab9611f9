"""The evaluation loop: every (task, sample) pair not yet in the results folder is played once,
``concurrency`` at a time, each worker on an environment session of its own
(:mod:`openenv_hub.eval.rollout` plays one).

Infrastructure errors are retried: a model request by the policy itself, a rollout whose
environment failed (its session lost, its server gone) or that ran past ``rollout_timeout_s``
by playing it again from its start on a fresh session, after a back-off. A rollout that still
fails is written as an error row (``finish: "error"``), which the summary does not count and
``--resume`` plays again.

Layer: client.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.client import GenericEnvClient
from openenv_hub.eval.failures import Backoff, InfrastructureError
from openenv_hub.eval.policies import Policy
from openenv_hub.eval.results import ResultsFolder
from openenv_hub.eval.rollout import Rollout, error_row, rollout_row
from openenv_hub.eval.tasksets import Task
from openenv_hub.eval.toolset import Toolset

__all__ = ["EvalPlan", "check_environment", "missing_pairs", "rollout_seed", "run_eval"]

#: Errors after which the rollout is played again from its start (a model request that failed
#: was already retried by the policy).
REPLAYED_KINDS = frozenset({"environment", "rollout_timeout"})


@dataclass(frozen=True)
class EvalPlan:
    """What to play, and how.

    Attributes:
        tasks: The tasks.
        rollouts_per_task: Samples of each task (K).
        concurrency: Rollouts played at once (N).
        max_turns: Model turns allowed in one rollout.
        pass_threshold: The return at or above which a rollout passes.
        seed: The base seed; each rollout's seed is derived from it, the task and the sample.
        system_prompt: A system message put before the task's prompt ("" for none).
        backoff: How a failed rollout is played again (``max_retries`` times at most).
        rollout_timeout_s: Bound of one play of a rollout (None: none).
        keep_errors: Whether rollouts written with an error count as played.
    """

    tasks: list[Task]
    rollouts_per_task: int = 1
    concurrency: int = 4
    max_turns: int = 8
    pass_threshold: float = 1.0
    seed: int = 0
    system_prompt: str = ""
    backoff: Backoff = field(default_factory=Backoff)
    rollout_timeout_s: float | None = None
    keep_errors: bool = False


def rollout_seed(seed: int, task: Task, sample: int) -> int:
    """The seed of one rollout: stable across runs and resumes, different for each pair."""
    digest = hashlib.sha256(f"{seed}:{task.split}:{task.key}:{sample}".encode()).hexdigest()
    return int(digest[:8], 16)


def missing_pairs(plan: EvalPlan, results: ResultsFolder) -> list[tuple[Task, int]]:
    """The (task, sample) pairs the results folder does not hold yet (or holds as an error,
    unless the plan keeps errors)."""
    done = results.done(keep_errors=plan.keep_errors)
    return [
        (task, sample)
        for task in plan.tasks
        for sample in range(plan.rollouts_per_task)
        if (task.split, task.key, sample) not in done
    ]


async def check_environment(base_url: str, task: Task) -> None:
    """One reset of ``task`` on a session of its own.

    Raises:
        InfrastructureError: The environment could not be reached or did not reset.
    """
    rollout = Rollout(task, seed=0)
    async with _Session(base_url) as session:
        await rollout.play(await session.client(), _NO_TOOLS, _no_policy, max_turns=0)


async def run_eval(
    base_url: str,
    plan: EvalPlan,
    policy: Policy,
    results: ResultsFolder,
    *,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_retry: Callable[[InfrastructureError], None] | None = None,
) -> int:
    """Play every missing pair, writing each rollout as it ends; returns how many were played."""
    pairs = missing_pairs(plan, results)
    if not pairs:
        return 0
    toolset = await Toolset.of(base_url)
    queue: asyncio.Queue[tuple[Task, int]] = asyncio.Queue()
    for pair in pairs:
        queue.put_nowait(pair)

    writes: list[asyncio.Task[None]] = []

    async def write(row: dict[str, Any]) -> None:
        await asyncio.to_thread(results.append, row)  # its fsync off the loop
        if on_row is not None:
            on_row(row)

    async def worker() -> None:
        async with _Session(base_url) as session:
            while not queue.empty():
                task, sample = queue.get_nowait()
                player = _Player(session, toolset, policy, plan, on_retry)
                row = await player.play(task, sample)
                writes.append(asyncio.create_task(write(row)))  # the next rollout starts now

    try:
        await asyncio.gather(*(worker() for _ in range(min(plan.concurrency, len(pairs)))))
    finally:
        await asyncio.gather(*writes, return_exceptions=True)  # every row ended is written
    for done in writes:
        done.result()  # a write that failed fails the run
    return len(pairs)


@dataclass
class _Player:
    session: _Session
    toolset: Toolset
    policy: Policy
    plan: EvalPlan
    on_retry: Callable[[InfrastructureError], None] | None

    async def play(self, task: Task, sample: int) -> dict[str, Any]:
        """The row of one rollout: played again from its start after an error it may recover
        from, up to ``max_retries`` times."""
        seed = rollout_seed(self.plan.seed, task, sample)
        started, replays = time.monotonic(), 0
        discarded: list[dict[str, Any]] = []  # the model's turns of the attempts played again
        while True:
            rollout = Rollout(task, seed)
            try:
                await self._attempt(rollout)
            except InfrastructureError as error:
                error.at(_where(task, sample, rollout))
                if error.kind in REPLAYED_KINDS:
                    await self.session.discard()  # the next play opens a fresh session
                if error.kind not in REPLAYED_KINDS or replays == self.plan.backoff.max_retries:
                    row = error_row(rollout, sample=sample, error=error)
                    return self._row(row, started, replays, discarded)
                if self.on_retry is not None:
                    self.on_retry(error)
                discarded.extend(rollout.usage)
                await asyncio.sleep(self.plan.backoff.delay_s(replays, error.retry_after_s))
                replays += 1
                continue
            row = rollout_row(rollout, sample=sample, pass_threshold=self.plan.pass_threshold)
            return self._row(row, started, replays, discarded)

    async def _attempt(self, rollout: Rollout) -> None:
        play = rollout.play(
            await self.session.client(),
            self.toolset,
            self.policy,
            max_turns=self.plan.max_turns,
            system_prompt=self.plan.system_prompt,
        )
        if self.plan.rollout_timeout_s is None:
            await play
            return
        try:
            await asyncio.wait_for(play, self.plan.rollout_timeout_s)
        except asyncio.TimeoutError:
            raise InfrastructureError(
                "rollout_timeout",
                f"the rollout took longer than --rollout-timeout {self.plan.rollout_timeout_s:g} s",
            ) from None

    @staticmethod
    def _row(
        row: dict[str, Any], started: float, replays: int, discarded: list[dict[str, Any]]
    ) -> dict[str, Any]:
        row["retries"] += replays
        row["duration_s"] = round(time.monotonic() - started, 4)
        # What the attempts played again cost (billed, though in no result): counted, not kept.
        row["discarded_turns"] = len(discarded)
        row["discarded_prompt_tokens"] = _known_sum(u["prompt_tokens"] for u in discarded)
        row["discarded_completion_tokens"] = _known_sum(u["completion_tokens"] for u in discarded)
        return row


def _known_sum(values: Iterable[int | None]) -> int:
    return sum(value for value in values if value is not None)


def _where(task: Task, sample: int, rollout: Rollout) -> str:
    turn = f"turn {rollout.turns}" if rollout.turns else "at reset"
    return f"task {task.split}/{task.key}, sample {sample}, {turn}"


class _Session:
    """A worker's environment session: opened when first needed, discarded after a failure
    (the next rollout opens a fresh one)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._client: GenericEnvClient | None = None

    async def client(self) -> GenericEnvClient:
        if self._client is None:
            client = GenericEnvClient(self.base_url)
            try:
                await client.connect()
            except Exception as exc:
                with contextlib.suppress(Exception):
                    await client.close()
                raise InfrastructureError(
                    "environment", f"{self.base_url} could not open a session: {exc}"
                ) from exc
            self._client = client
        return self._client

    async def discard(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), 5.0)

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.discard()


_NO_TOOLS = Toolset([], mcp=False)


async def _no_policy(*args: Any) -> Any:  # pragma: no cover (max_turns=0 never asks)
    raise AssertionError("no policy in an environment check")
