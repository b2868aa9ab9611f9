"""docs/migrating.md: environments written in OpenEnv's style run on ``openenv_hub.create_app``
with import-path changes only.

The two environments below follow OpenEnv's echo and connect4 environments: a FastMCP server
handed to ``MCPEnvironment.__init__(mcp)``, ``step`` / ``step_async`` overrides that count the
step themselves before calling ``super()``, a ``_step_impl`` for other actions, a client with
``_step_payload`` / ``_parse_result`` / ``_parse_state``, narrow ``reset(self)`` /
``step(self, action)`` signatures and ``super().__init__()``. Only their imports differ.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional
from uuid import uuid4

import httpx
import numpy as np
from doc_blocks import doc_block
from fastmcp import FastMCP  # the [mcp] extra, part of [dev]
from pydantic import Field

# The imports docs/migrating.md shows, exactly (test_the_doc_shows_the_imports_used_here).
# fmt: off
from openenv_hub import (
    Action,
    CallToolAction,
    CallToolObservation,
    EnvClient,
    Environment,
    MCPEnvironment,
    MCPToolClient,
    Observation,
    State,
    StepResult,
    create_app,
)

# fmt: on


def test_the_doc_shows_the_imports_used_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    used = source.split("# fmt: off\n", 1)[1].split("# fmt: on", 1)[0]
    assert used.strip() == doc_block("docs/migrating.md", "imports").code.strip()


class EchoEnvironment(MCPEnvironment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        mcp = FastMCP("echo_env")

        @mcp.tool
        def echo_message(message: str) -> str:
            """Echo back the provided message."""
            return message

        @mcp.tool
        def echo_with_length(message: str) -> dict:
            """Echo back the message with its length."""
            return {"message": message, "length": len(message)}

        super().__init__(mcp)
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any):  # noqa: UP045 - OpenEnv's style
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return Observation(done=False, reward=0.0, metadata={"status": "ready"})

    def _step_impl(self, action, timeout_s=None, **kwargs):
        return Observation(done=False, reward=0.0, metadata={"error": "use MCP actions"})

    def step(self, action, timeout_s=None, **kwargs):
        self._state.step_count += 1
        return super().step(action, timeout_s=timeout_s, **kwargs)

    async def step_async(self, action, timeout_s=None, **kwargs):
        self._state.step_count += 1
        return await super().step_async(action, timeout_s=timeout_s, **kwargs)

    @property
    def state(self):
        return self._state


class Connect4Action(Action):
    column: int


class Connect4Observation(Observation):
    board: list[list[int]] = Field(default_factory=list)
    legal_actions: list[int] = Field(default_factory=list)


class Connect4State(State):
    board: list[list[int]] = Field(default_factory=lambda: [[0] * 7 for _ in range(6)])
    next_player: int = 1


class Connect4Environment(Environment):
    ROWS, COLUMNS = 6, 7

    def __init__(self, opponent=None):
        super().__init__()
        self._opponent = opponent
        self.reset()

    def reset(self):
        self.board = np.zeros((self.ROWS, self.COLUMNS), dtype=np.int8)
        self.next_player = 1
        self._state = Connect4State(board=self.board.tolist(), episode_id=str(uuid4()))
        return self._observe()

    def step(self, action: Connect4Action):
        col, reward, done = action.column, 0.0, False
        if col < 0 or col >= self.COLUMNS or self.board[0, col] != 0:
            reward, done = -1.0, True
        else:
            row = max(r for r in range(self.ROWS) if self.board[r, col] == 0)
            self.board[row, col] = self.next_player
            done = bool(np.all(self.board != 0))
            column = self.board[:, col]
            if any(abs(int(column[r : r + 4].sum())) == 4 for r in range(self.ROWS - 3)):
                reward, done = 1.0, True
        self.next_player *= -1
        self._state = Connect4State(
            board=self.board.tolist(),
            next_player=self.next_player,
            episode_id=self._state.episode_id,
            step_count=self._state.step_count + 1,
        )
        return self._observe(reward, done)

    def _observe(self, reward=0.0, done=False):
        legal = [c for c in range(self.COLUMNS) if self.board[0, c] == 0]
        return Connect4Observation(
            board=self.board.tolist(), legal_actions=legal, reward=reward, done=done
        )

    @property
    def state(self):
        return self._state


class Connect4Env(EnvClient[Connect4Action, Connect4Observation, Connect4State]):
    def _step_payload(self, action):
        return {"column": action.column}

    def _parse_result(self, payload):
        obs = payload.get("observation", {})
        observation = Connect4Observation(
            board=obs.get("board", []),
            legal_actions=obs.get("legal_actions", []),
            done=payload.get("done", False),
            reward=payload.get("reward", 0.0),
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload):
        return Connect4State(**payload)


class EchoEnv(MCPToolClient):
    pass


async def test_openenv_style_echo_counts_each_step_once(serve: Callable[..., Any]) -> None:
    app = create_app(
        EchoEnvironment,
        CallToolAction,
        CallToolObservation,
        env_name="echo_env",
        max_concurrent_envs=8,
    )
    server = serve(app)
    async with EchoEnv(base_url=server.url) as env:
        await env.reset()
        tools = await env.list_tools()
        assert [tool.name for tool in tools] == ["echo_message", "echo_with_length"]
        assert await env.call_tool("echo_message", message="Hi") == "Hi"
        assert await env.call_tool("echo_with_length", message="Hi") == {
            "message": "Hi",
            "length": 2,
        }
        assert (await env.state()).step_count == 3  # list_tools and two calls, once each
    with EchoEnv(base_url=server.url).sync() as env:  # sync path: step() on a worker thread
        env.reset()
        assert env.call_tool("echo_message", message="again") == "again"
        assert env.state().step_count == 1
    async with httpx.AsyncClient(base_url=server.url) as http:
        call = {"name": "echo_with_length", "arguments": {"message": "abc"}}
        mcp = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        )
    assert '"length":3' in mcp.text.replace(" ", ""), mcp.text


async def test_openenv_style_connect4_plays_a_game(serve: Callable[..., Any]) -> None:
    app = create_app(
        Connect4Environment, Connect4Action, Connect4Observation, env_name="connect4_env"
    )
    async with Connect4Env(base_url=serve(app).url) as env:
        result = await env.reset()
        assert result.observation.legal_actions == list(range(7))
        for column in (0, 1, 0, 1, 0, 1):
            result = await env.step(Connect4Action(column=column))
            assert not result.done
        result = await env.step(Connect4Action(column=0))  # four in column 0
        assert result.done and result.reward == 1.0
        state = await env.state()
        assert state.step_count == 7 and state.board[2][0] == 1
