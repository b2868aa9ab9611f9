"""Reference typed (non-MCP) server built on the upstream ``openenv`` package.

Runs only inside the peer virtual environment (see README.md). Shaped like the
environment that ``openenv init`` generates: action ``{"message": str}``,
observation fields ``echoed_message`` and ``message_length``, reward
``len(message) * 0.1``; step metadata carries the original message and the
step number.

    python typed_server.py --port 8124

Binds 127.0.0.1. ``MAX_CONCURRENT_ENVS`` (default 64) bounds the number of
concurrent sessions.
"""

from __future__ import annotations

import argparse
import os
from typing import Any
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class TypedEchoAction(Action):
    """A message to echo."""

    message: str = Field(..., description="Message to echo back")


class TypedEchoObservation(Observation):
    """The echoed message and its length."""

    echoed_message: str = Field(default="", description="The echoed message")
    message_length: int = Field(default=0, description="Length of the echoed message")


class TypedEchoEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        **kwargs: Any,
    ) -> TypedEchoObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TypedEchoObservation(
            echoed_message="Typed Echo environment ready!",
            message_length=0,
            done=False,
            reward=0.0,
        )

    def step(self, action: TypedEchoAction) -> TypedEchoObservation:  # type: ignore[override]
        self._state.step_count += 1
        length = len(action.message)
        return TypedEchoObservation(
            echoed_message=action.message,
            message_length=length,
            done=False,
            reward=length * 0.1,
            metadata={"original_message": action.message, "step": self._state.step_count},
        )

    @property
    def state(self) -> State:
        return self._state


def build_app():
    max_envs = int(os.environ.get("MAX_CONCURRENT_ENVS", "64"))
    return create_app(
        TypedEchoEnvironment,
        TypedEchoAction,
        TypedEchoObservation,
        env_name="typed_echo",
        max_concurrent_envs=max_envs,
    )


app = build_app()


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
