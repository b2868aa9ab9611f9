"""The {{ cookiecutter.title }} environment: echoes each message, rewarding its length."""

from __future__ import annotations

import math
from typing import Any
from uuid import uuid4

from openenv_hub import Environment, State
from openenv_hub.types import EnvironmentMetadata

from {{ cookiecutter.name }}.models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation


class {{ cookiecutter.class_prefix }}Environment(Environment[{{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation, State]):
    """Echoes the message of each action; the reward is ``len(message) * 0.1``."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    # Each call takes microseconds and uses no thread-bound library, so the server runs it on
    # its event loop instead of a thread per session. Set False once a call can take more than
    # about a millisecond: meanwhile every other session would wait (the server logs it once).
    RUNS_ON_EVENT_LOOP = True
    # Every reward lies here (published in /metadata; the server flags one outside it).
    reward_range = (0.0, math.inf)
    # The server answers a step or state before the first reset with ResetRequiredError; set
    # ALLOWS_STEP_BEFORE_RESET = True if steps need no reset.

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> {{ cookiecutter.class_prefix }}Observation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return {{ cookiecutter.class_prefix }}Observation(
            echoed_message="{{ cookiecutter.title }} environment ready!", message_length=0, reward=0.0
        )

    def step(
        self, action: {{ cookiecutter.class_prefix }}Action, timeout_s: float | None = None, **kwargs: Any
    ) -> {{ cookiecutter.class_prefix }}Observation:
        self._state.step_count += 1
        length = len(action.message)
        return {{ cookiecutter.class_prefix }}Observation(
            echoed_message=action.message,
            message_length=length,
            reward=length * 0.1,
            metadata={"original_message": action.message, "step": self._state.step_count},
        )

    @property
    def state(self) -> State:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="{{ cookiecutter.name }}", description={{ cookiecutter.description | tojson }}, version="0.1.0"
        )
