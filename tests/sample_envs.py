"""Small environments used across the test suite."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from openenv_hub import Action, Environment, Observation, State


class Message(Action):
    message: str
    delay_s: float = 0.0
    fail: bool = False


class Echoed(Observation):
    echoed_message: str = ""
    message_length: int = 0
    thread: str = ""


class Typed(Environment[Message, Echoed, State]):
    """Typed echo: reward is 0.1 per character; ``delay_s`` sleeps, ``fail`` raises."""

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid.uuid4()))
        self.created_on = threading.current_thread().name
        self.reset_kwargs: dict[str, Any] = {}

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Echoed:
        self.reset_kwargs = {"seed": seed, "episode_id": episode_id, **kwargs}
        self._state = State(episode_id=episode_id or str(uuid.uuid4()))
        return Echoed(echoed_message="ready", reward=0.0)

    def step(self, action: Message, timeout_s: float | None = None, **kwargs: Any) -> Echoed:
        if action.delay_s:
            time.sleep(action.delay_s)
        if action.fail:
            raise RuntimeError(f"asked to fail on {action.message!r}")
        self._state.step_count += 1
        return Echoed(
            echoed_message=action.message,
            message_length=len(action.message),
            reward=len(action.message) * 0.1,
            done=action.message == "bye",
            thread=threading.current_thread().name,
        )

    @property
    def state(self) -> State:
        return self._state


class Narrow(Environment[Message, Echoed, State]):
    """Declares the narrowest signatures: reset() and step(action)."""

    def __init__(self) -> None:
        self._state = State()

    def reset(self) -> Echoed:  # type: ignore[override]
        return Echoed(echoed_message="narrow")

    def step(self, action: Message) -> Echoed:  # type: ignore[override]
        return Echoed(echoed_message=action.message.upper())

    @property
    def state(self) -> State:
        return self._state


class AsyncTyped(Typed):
    """Overrides the async methods: they run on the event loop, not on a thread."""

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Echoed:
        await asyncio.sleep(0)
        return Echoed(echoed_message="async ready", thread=threading.current_thread().name)

    async def step_async(
        self, action: Message, timeout_s: float | None = None, **kwargs: Any
    ) -> Echoed:
        if action.delay_s:
            await asyncio.sleep(action.delay_s)
        return Echoed(echoed_message=action.message, thread=threading.current_thread().name)


class Exclusive(Typed):
    SUPPORTS_CONCURRENT_SESSIONS = False


class Broken(Typed):
    ALLOWS_STEP_BEFORE_RESET = True  # its reset fails: steps and state are tried all the same

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Echoed:
        raise ValueError("reset is broken")

    @property
    def state(self) -> State:
        raise KeyError("no state here")


def failing_factory() -> Typed:
    raise RuntimeError("no GPU today")


class RichState(State):
    score: int = 7


class WithRichState(Typed):
    @property
    def state(self) -> RichState:
        return RichState(episode_id="rich", step_count=1)


ECHO_ENV = Path(__file__).resolve().parents[1] / "envs" / "echo_env"


def slow_echo(folder: Path, start_s: float) -> Path:
    """A copy of echo_env in ``folder`` whose server takes ``start_s`` longer to start."""
    copy = folder / "echo_env"
    shutil.copytree(ECHO_ENV, copy, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    app = copy / "echo_env" / "server" / "app.py"
    app.write_text(app.read_text() + f"\nimport time\n\ntime.sleep({start_s})\n")
    return copy
