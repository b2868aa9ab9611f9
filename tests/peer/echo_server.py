"""Reference echo server built on the upstream ``openenv`` package.

Runs only inside the peer virtual environment (see README.md). It mirrors the
shape of the upstream echo environment: an MCP environment whose tools are
registered on a FastMCP server, served by the upstream ``create_app``.

    python echo_server.py --port 8123

Binds 127.0.0.1. ``MAX_CONCURRENT_ENVS`` (default 64) bounds the number of
concurrent sessions.
"""

from __future__ import annotations

import argparse
import os
from typing import Any
from uuid import uuid4

from fastmcp import FastMCP
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
from openenv.core.env_server.types import Action, Observation, State


class PeerEchoEnvironment(MCPEnvironment):
    """Echo environment exposing two tools over MCP."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        server = FastMCP("echo_env")

        @server.tool
        def echo_message(message: str) -> str:
            """Echo back the provided message."""
            return message

        @server.tool
        def echo_with_length(message: str) -> dict:
            """Echo back the message together with its length."""
            return {"message": message, "length": len(message)}

        super().__init__(server)
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        **kwargs: Any,
    ) -> Observation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return Observation(done=False, reward=0.0, metadata={"status": "ready"})

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._state.step_count += 1
        return super().step(action, timeout_s=timeout_s, **kwargs)

    async def step_async(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        self._state.step_count += 1
        return await super().step_async(action, timeout_s=timeout_s, **kwargs)

    def _step_impl(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        return Observation(
            done=False,
            reward=0.0,
            metadata={"error": f"unsupported action type: {type(action).__name__}"},
        )

    @property
    def state(self) -> State:
        return self._state


def build_app():
    max_envs = int(os.environ.get("MAX_CONCURRENT_ENVS", "64"))
    return create_app(
        PeerEchoEnvironment,
        CallToolAction,
        CallToolObservation,
        env_name="echo_env",
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
