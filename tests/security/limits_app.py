"""A server for the limit tests: an environment whose steps can be slow or stuck, and counters
of live environments and threads (``GET /test/counts``). Run as a module to serve it:

    python limits_app.py PORT [STEP_HARD_TIMEOUT_S]
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

from openenv_hub import Action, Environment, Observation, State, create_app, serve_app

CAPACITY = 4


class Work(Action):
    message: str = ""
    seconds: float = 0.0  # how long the step takes
    stuck: bool = False  # a step that never returns (until the process ends)


class Done(Observation):
    message: str = ""
    keywords: list[str] = []


_counts_lock = threading.Lock()
_live = 0
_forever = threading.Event()


class SlowOrStuck(Environment[Work, Done, State]):
    def __init__(self) -> None:
        global _live
        with _counts_lock:
            _live += 1
        self._state = State()

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Done:
        return Done(message="ready", keywords=sorted(kw))

    def step(self, action: Work, timeout_s: float | None = None, **kw: Any) -> Done:
        if action.stuck:
            _forever.wait()
        time.sleep(action.seconds)
        return Done(message=action.message)

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        global _live
        with _counts_lock:
            _live -= 1


class AsyncSlow(SlowOrStuck):
    """The same, with an ``async`` step (it runs on the event loop and can be cancelled)."""

    cancelled = 0

    async def step_async(self, action: Work, timeout_s: float | None = None, **kw: Any) -> Done:
        try:
            await asyncio.sleep(action.seconds)
        except asyncio.CancelledError:
            type(self).cancelled += 1
            raise
        return Done(message=action.message)


def counts() -> dict[str, int]:
    threads = [t for t in threading.enumerate() if t.name.startswith("openenv-session")]
    return {"live_envs": _live, "session_threads": len(threads)}


def make_app(factory: Any = SlowOrStuck, **options: Any) -> Any:
    app = create_app(factory, Work, Done, max_concurrent_envs=CAPACITY, **options)

    @app.get("/test/counts")
    async def counts_route() -> dict[str, int]:
        return {**counts(), "cancelled": AsyncSlow.cancelled}

    return app


if __name__ == "__main__":
    hard_timeout = float(sys.argv[2]) if len(sys.argv) > 2 else None
    serve_app(
        make_app(step_hard_timeout_s=hard_timeout), port=int(sys.argv[1]), log_level="warning"
    )
