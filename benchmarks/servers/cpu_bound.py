"""An environment whose step is pure-Python work (about 5 ms on an idle core), for scaling runs.

The app is ``cpu_bound:app`` (with this folder on ``sys.path``), its calls on a thread per
session; ``cpu_bound:inline_app`` runs them on the event loop. ``WORK_ITERATIONS`` (default
40000 loop turns) sets the work; ``step`` reports the time it took in ``work_ms``.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from openenv_hub import Action, Environment, Observation, State, create_app

ITERATIONS = int(os.environ.get("WORK_ITERATIONS", "40000"))


class Work(Action):
    seed: int = 0


class Worked(Observation):
    checksum: int = 0
    work_ms: float = 0.0


def busy(seed: int, iterations: int = ITERATIONS) -> int:
    """Pure-Python arithmetic that holds the GIL, like a simulator written in Python."""
    value = seed
    for i in range(iterations):
        value = (value * 31 + i) % 1_000_003
    return value


class CpuBound(Environment[Work, Worked, State]):
    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid.uuid4()))

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Worked:
        self._state = State(episode_id=episode_id or str(uuid.uuid4()))
        return Worked(reward=0.0)

    def step(self, action: Work, timeout_s: float | None = None, **kwargs: Any) -> Worked:
        started = time.perf_counter()
        checksum = busy(action.seed)
        self._state.step_count += 1
        return Worked(checksum=checksum, work_ms=(time.perf_counter() - started) * 1000, reward=1.0)

    @property
    def state(self) -> State:
        return self._state


app = create_app(CpuBound, Work, Worked, env_name="cpu_bound", max_concurrent_envs=64)
# Pure-Python work holds the GIL: a thread per session adds no throughput, only hand-offs.
inline_app = create_app(
    CpuBound, Work, Worked, env_name="cpu_bound", max_concurrent_envs=64, run_on_event_loop=True
)
