"""Recording episodes from the client side: a policy plays, every reset and step is kept.

Example::

    def policy(observation: dict) -> dict:
        return {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "hi"}}

    with TrajectoryWriter("echo.jsonl") as writer:
        summary = asyncio.run(
            record_episodes("http://127.0.0.1:8000", policy, writer, episodes=3, max_steps=5)
        )

Layer: client.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from openenv_hub.client.generic import GenericEnvClient
from openenv_hub.protocol.urls import http_url
from openenv_hub.trajectories.files import TrajectoryWriter
from openenv_hub.trajectories.records import EpisodeBuffer
from openenv_hub.types import StepResult

__all__ = [
    "EnvironmentInfo",
    "EpisodeSummary",
    "RecordingSummary",
    "StepError",
    "environment_info",
    "record_episodes",
]

#: A policy maps an observation (a dict, as the server sent it) to an action (a dict or a
#: pydantic model); it may be ``async``.
Policy = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class EnvironmentInfo:
    name: str
    version: str | None


def environment_info(base_url: str, *, timeout_s: float = 10.0) -> EnvironmentInfo:
    """The environment's name and version, from its ``/metadata``."""
    url = http_url(base_url) + "/metadata"
    response = httpx.get(url, timeout=timeout_s, trust_env=False)
    response.raise_for_status()
    body = response.json()
    return EnvironmentInfo(name=str(body.get("name") or "environment"), version=body.get("version"))


@dataclass(frozen=True)
class EpisodeSummary:
    """One recorded episode: its steps, its return, and whether it ended (``done``) or hit
    the step limit (``truncated``)."""

    number: int
    steps: int
    total_reward: float
    done: bool


@dataclass(frozen=True)
class StepError:
    """A step the environment answered with an ``error`` in its observation (a tool called
    with wrong arguments, say): recorded as sent, reported so it is not missed."""

    episode: int
    step: int
    message: str


@dataclass
class RecordingSummary:
    """What :func:`record_episodes` recorded."""

    env: EnvironmentInfo
    episodes: int = 0
    steps: int = 0
    returns: list[float] = field(default_factory=list)
    per_episode: list[EpisodeSummary] = field(default_factory=list)
    errors: list[StepError] = field(default_factory=list)

    @property
    def mean_return(self) -> float:
        return sum(self.returns) / len(self.returns) if self.returns else 0.0

    def add(self, episode: EpisodeSummary) -> None:
        self.episodes += 1
        self.steps += episode.steps
        self.returns.append(episode.total_reward)
        self.per_episode.append(episode)


def _payload(result: StepResult[dict[str, Any]]) -> dict[str, Any]:
    return {"observation": result.observation, "reward": result.reward, "done": result.done}


def _error_of(observation: Any) -> str | None:
    """The ``error`` an observation carries (MCP tool observations do), as one line."""
    error = observation.get("error") if isinstance(observation, dict) else None
    if not error:
        return None
    if isinstance(error, dict):
        kind, message = error.get("error_type"), str(error.get("message") or "")
        error = f"{kind}: {message}" if kind else message
    return " ".join(str(error).split())[:300]


async def _act(policy: Policy, observation: dict[str, Any]) -> Any:
    action = policy(observation)
    if inspect.isawaitable(action):
        action = await action
    return action


async def record_episodes(
    base_url: str,
    policy: Policy,
    writer: TrajectoryWriter,
    *,
    episodes: int,
    max_steps: int = 100,
    seed: int | None = None,
    policy_name: str | None = None,
    env: EnvironmentInfo | None = None,
    **client_options: Any,
) -> RecordingSummary:
    """Play ``episodes`` episodes with ``policy`` and write each one to ``writer``.

    An episode ends when the environment says ``done``, or after ``max_steps`` steps (its last
    record is then marked ``truncated``).

    Args:
        base_url: The environment server.
        policy: Chooses each action from the latest observation.
        writer: Where the episodes go.
        episodes: How many to play.
        max_steps: The step limit of an episode.
        seed: Seed of the first episode's reset; episode ``i`` gets ``seed + i``.
        policy_name: Stored with each record (e.g. ``"my_policies:greedy"``).
        env: Name and version to store; read from ``/metadata`` when not given.
        client_options: Passed to :class:`~openenv_hub.GenericEnvClient`.
    """
    info = env or environment_info(base_url)
    summary = RecordingSummary(env=info)
    async with GenericEnvClient(base_url, **client_options) as client:
        for number in range(episodes):
            buffer = EpisodeBuffer(info.name, info.version, number, policy_name, "client")
            params = {} if seed is None else {"seed": seed + number}
            started, clock = time.time(), time.perf_counter()
            result = await client.reset(**params)
            buffer.add(params, _payload(result), started_at=started, duration_s=_since(clock))
            steps = 0
            while not result.done and steps < max_steps:
                action = await _act(policy, result.observation)
                started, clock = time.time(), time.perf_counter()
                result = await client.step(action)
                sent = action if isinstance(action, dict) else client._step_payload(action)
                buffer.add(sent, _payload(result), started_at=started, duration_s=_since(clock))
                steps += 1
                error = _error_of(result.observation)
                if error is not None:
                    summary.errors.append(StepError(number, steps, error))
            records = buffer.finish(truncated=not result.done)
            writer.write_episode(records)
            total = sum(r.reward or 0.0 for r in records[1:])
            summary.add(EpisodeSummary(number, steps, total, bool(result.done)))
    return summary


def _since(clock: float) -> float:
    return time.perf_counter() - clock
