"""Episodes the quality checks play: a reset, then the actions a source chooses, each answer
kept with its time.

The environment's answers are results, whatever they are: an observation, or an action it
refused (a validation error, an exception of its own). What the instrument ran into is not: a
connection that failed or closed, a reply that did not come in time, a server at capacity raise
:class:`CouldNotCheck`, and :func:`play` tries such an episode once more before it gives up.

Layer: client.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from openenv_hub.client import GenericEnvClient
from openenv_hub.errors import (
    ServerReplyError,
    SessionCapacityError,
    SessionError,
    TransportError,
)
from openenv_hub.eval import Task

__all__ = [
    "REQUEST_TIMEOUT_S",
    "ActionSource",
    "CouldNotCheck",
    "Episode",
    "Scripted",
    "Step",
    "Timings",
    "instrument",
    "open_client",
    "play",
    "reset_episode",
    "string_leaves",
    "take_step",
]

#: Seconds one request may take before the episode could not be checked.
REQUEST_TIMEOUT_S = 60.0
#: Seconds to wait before playing an episode again after the instrument failed.
RETRY_AFTER_S = 1.0


class CouldNotCheck(Exception):
    """The instrument failed (a connection, a timeout, a full server), not the environment."""


@dataclass
class Step:
    """One action and the environment's answer: an observation, or why it refused."""

    action: dict[str, Any]
    observation: dict[str, Any] | None
    reward: float | None
    done: bool
    refused: str | None = None


@dataclass
class Episode:
    """One played episode.

    Attributes:
        policy: Who chose the actions (``oracle``, ``random``, ``empty answer``, ...).
        task: The task.
        reset: The arguments of its reset.
        first: The reset's observation (None when the reset was refused).
        first_reward: The reset's reward.
        refused: Why the reset was refused, if it was.
        steps: The steps.
        state: The state read after the episode, when asked for.
    """

    policy: str
    task: Task
    reset: dict[str, Any]
    first: dict[str, Any] | None = None
    first_reward: float | None = None
    refused: str | None = None
    steps: list[Step] = field(default_factory=list)
    state: dict[str, Any] | None = None

    @property
    def total(self) -> float:
        """The return: the sum of the rewards of the reset and the steps."""
        rewards = [self.first_reward, *(step.reward for step in self.steps)]
        return float(sum(r for r in rewards if r is not None))

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [step.action for step in self.steps]

    @property
    def done(self) -> bool:
        return bool(self.steps and self.steps[-1].done)

    def rewards(self) -> Iterator[tuple[str, float]]:
        """Every reward with where it was given (``reset``, ``step 1``, ...)."""
        if self.first_reward is not None:
            yield "reset", self.first_reward
        for number, step in enumerate(self.steps, 1):
            if step.reward is not None:
                yield f"step {number}", step.reward


class ActionSource(Protocol):
    """Chooses an episode's next action, or None to end it."""

    async def next(self, episode: Episode) -> dict[str, Any] | None: ...


@dataclass
class Scripted:
    """Actions given in advance: a recorded solution, a non-solution, a replay."""

    actions: list[dict[str, Any]]

    async def next(self, episode: Episode) -> dict[str, Any] | None:
        played = len(episode.steps)
        return self.actions[played] if played < len(self.actions) else None


@dataclass
class Timings:
    """Seconds of every reset and step answered, for the cost check."""

    resets: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)


def open_client(url: str, timeout_s: float = REQUEST_TIMEOUT_S) -> GenericEnvClient:
    """A client whose every request gets ``timeout_s``."""
    return GenericEnvClient(url, message_timeout_s=timeout_s, ping_interval_s=None)


async def play(
    url: str,
    policy: str,
    task: Task,
    reset: dict[str, Any],
    source: ActionSource,
    *,
    max_steps: int,
    timings: Timings,
    read_state: bool = False,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> Episode:
    """One episode in a session of its own; played again once if the instrument failed.

    Raises:
        CouldNotCheck: The instrument failed twice.
    """
    episode = Episode(policy, task, reset)
    try:
        return await _play(url, episode, source, max_steps, timings, read_state, timeout_s)
    except CouldNotCheck:
        await asyncio.sleep(RETRY_AFTER_S)
    episode = Episode(policy, task, reset)
    return await _play(url, episode, source, max_steps, timings, read_state, timeout_s)


async def _play(
    url: str,
    episode: Episode,
    source: ActionSource,
    max_steps: int,
    timings: Timings,
    read_state: bool,
    timeout_s: float,
) -> Episode:
    with instrument(f"playing {episode.policy} on {episode.task.key}"):
        async with open_client(url, timeout_s) as client:
            await reset_episode(client, episode, timings)
            while episode.first is not None and len(episode.steps) < max_steps:
                if episode.done:
                    break
                action = await source.next(episode)
                if action is None:
                    break
                episode.steps.append(await take_step(client, action, timings))
            if read_state and episode.first is not None:
                episode.state = dict(await client.state())
    return episode


async def reset_episode(client: GenericEnvClient, episode: Episode, timings: Timings) -> None:
    """Reset ``client``'s session with the episode's arguments; a refusal is kept, not raised."""
    started = time.monotonic()
    try:
        result = await client.reset(**episode.reset)
    except ServerReplyError as exc:
        if _instrumental(exc):
            raise
        episode.refused = f"{type(exc).__name__}: {exc}"
        return
    timings.resets.append(time.monotonic() - started)
    episode.first, episode.first_reward = dict(result.observation), result.reward


async def take_step(client: GenericEnvClient, action: dict[str, Any], timings: Timings) -> Step:
    """One step; an action the environment refuses is a step with ``refused`` set."""
    started = time.monotonic()
    try:
        result = await client.step(action)
    except ServerReplyError as exc:
        if _instrumental(exc):
            raise
        return Step(action, None, None, False, refused=f"{type(exc).__name__}: {exc}")
    timings.steps.append(time.monotonic() - started)
    return Step(action, dict(result.observation), result.reward, bool(result.done))


@contextlib.contextmanager
def instrument(doing: str) -> Iterator[None]:
    """Turns what the instrument ran into while ``doing`` something (a transport, a session,
    a full server) into :class:`CouldNotCheck`; the environment's own answers pass through."""
    try:
        yield
    except CouldNotCheck:
        raise
    except (TransportError, OSError, asyncio.TimeoutError, httpx.HTTPError) as exc:
        raise CouldNotCheck(f"{type(exc).__name__} while {doing}: {exc}") from exc
    except ServerReplyError as exc:
        if _instrumental(exc):
            raise CouldNotCheck(f"{type(exc).__name__} while {doing}: {exc}") from exc
        raise


def _instrumental(exc: ServerReplyError) -> bool:
    """A reply about the server's sessions, not about the environment's episode."""
    return isinstance(exc, SessionError | SessionCapacityError)


def string_leaves(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` (dicts, lists), with its path (``metadata.answer``)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from string_leaves(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from string_leaves(item, f"{where}[{index}]")
