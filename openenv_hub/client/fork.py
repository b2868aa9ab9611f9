"""Forking a recorded episode: a session of your own at the state the episode had at a step.

Where the record of that step names a snapshot (a server that records episodes keeps one after
every step of an environment with ``snapshot()``/``restore()``), the session is first asked to
restore it (``openenv/session/restore``): an exact copy, in one call. Where the server cannot
(another server, restarted, or an environment without snapshots), the session is re-created by
replay: reset with the recorded parameters (seed and options), then each recorded action in
turn. Either way every observation received, the reset's included, is checked against the
recording; the first one that differs raises :class:`~openenv_hub.errors.ReplayMismatchError`
(a mismatch is reported, never hidden, naming the fields that differ). Fields an observation
class names in ``replay_ignores`` (timings, say) are left out of the comparison.

A replay is refused before anything is sent (:class:`~openenv_hub.errors.ReplayRefusedError`)
where the environment said, when the episode was recorded, that it would not replay exactly
(the ``replay_refusal`` column: no seed, say), or says so after the replay's reset; pass
``allow_inexact_replay=True`` to replay anyway. Where the recording holds the environment's
state digests, the replaying server is asked for its own after each step
(``openenv/session/replay_facts``) and they must match too: hidden state that went another way
is caught where it does. The result (:class:`ForkedResult`) says which way the fork was made
(``method``: ``"snapshot"`` or ``"replay"``), and it is logged.

Deciding before a fork (the web UI does): ``plan = ForkPlan.of(records, step)``; the fork
restores where ``plan.snapshot`` names one the server still holds, and otherwise replays,
which ``plan.replayable`` allows (``plan.replay_refusal`` says why not).

An episode is its records, as :func:`openenv_hub.trajectories.read_records` or a loaded dataset
gives them (dicts with the columns of :class:`~openenv_hub.trajectories.StepRecord`), or the
records themselves. The plan is I/O-free; :func:`fork_episode` and :func:`fork_episode_sync`
drive an async and a sync client through it.

Layer: client.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from openenv_hub.client._core import Codec
from openenv_hub.errors import (
    EpisodeRecordError,
    ReplayMismatchError,
    ReplayRefusedError,
    ServerReplyError,
)
from openenv_hub.protocol.connection import ClientConnection
from openenv_hub.types import StepResult

__all__ = [
    "REPLAY",
    "REPLAY_FACTS_METHOD",
    "RESTORE_METHOD",
    "SNAPSHOT",
    "ForkPlan",
    "ForkedResult",
    "fork_episode",
    "fork_episode_sync",
    "replay_facts",
    "restored_payload",
]

#: The JSON-RPC method that brings a session to a snapshot the server kept.
RESTORE_METHOD = "openenv/session/restore"
#: The JSON-RPC method that tells a session's state digest and why it would not replay.
REPLAY_FACTS_METHOD = "openenv/session/replay_facts"
REPLAY_FACTS_CALL = {"jsonrpc": "2.0", "id": 1, "method": REPLAY_FACTS_METHOD, "params": {}}

ObsT = TypeVar("ObsT")
ForkMethod = Literal["snapshot", "replay"]
#: A fork restored from the snapshot the server kept at the step.
SNAPSHOT: ForkMethod = "snapshot"
#: A fork made by replaying the recording (reset, then each action), every reply checked.
REPLAY: ForkMethod = "replay"

logger = logging.getLogger("openenv_hub.client")


@dataclass
class ForkedResult(StepResult[ObsT]):
    """The result of the step a fork reached, and how the fork was made.

    Attributes:
        method: ``"snapshot"`` (restored from the snapshot the server kept at that step: an
            exact copy) or ``"replay"`` (reset with the recorded parameters, then each action,
            every observation checked against the recording).
        step: The step forked at.
        digests_checked: Steps whose state digest was also checked (replay only).
    """

    method: ForkMethod = REPLAY
    step: int = 0
    digests_checked: int = 0

    @property
    def how(self) -> str:
        """How the fork was made, as a sentence's end: "from the server's snapshot" or
        "by replay of 5 steps (state digests checked)"."""
        if self.method == SNAPSHOT:
            return "from the server's snapshot"
        checked = " (state digests checked)" if self.digests_checked else ""
        return f"by replay of {self.step} step{'s' if self.step != 1 else ''}{checked}"


_Parse = Callable[[dict[str, Any]], StepResult[Any]]


class _AsyncSession(Protocol):
    """What forking needs of an async client (:class:`~openenv_hub.client.EnvClient`)."""

    @property
    def _exchange(self) -> ClientConnection: ...
    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Any]: ...
    async def _request(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]: ...
    async def reset(self, **kwargs: Any) -> StepResult[Any]: ...
    async def step(self, action: Any) -> StepResult[Any]: ...


class _SyncSession(Protocol):
    """What forking needs of a sync client (:class:`~openenv_hub.client.SyncEnvClient`)."""

    codec: Codec[Any, Any, Any]

    @property
    def _exchange(self) -> ClientConnection: ...

    def _request(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]: ...
    def reset(self, **kwargs: Any) -> StepResult[Any]: ...
    def step(self, action: Any) -> StepResult[Any]: ...


@dataclass(frozen=True)
class ForkPlan:
    """What to send to re-create an episode at ``step``, and what each reply must be.

    Attributes:
        step: The step to stop at (0 is the reset).
        reset_params: The recorded reset's keyword arguments.
        actions: The recorded actions of steps 1 to ``step``, as sent.
        payloads: The recorded replies of steps 0 to ``step`` (``observation``, ``reward``,
            ``done``).
        snapshot: The id of the snapshot the recording server kept at ``step``, if any.
        replay_refusal: Why the environment said, when it recorded the episode, that it would
            not replay exactly (None: it would, or it did not say).
        digests: The environment's state digests recorded at steps 0 to ``step`` (None where
            it gave none).
    """

    step: int
    reset_params: dict[str, Any]
    actions: list[dict[str, Any]]
    payloads: list[dict[str, Any]]
    snapshot: str | None = None
    replay_refusal: str | None = None
    digests: tuple[str | None, ...] = ()

    @property
    def replayable(self) -> bool:
        """Whether a fork by replay is allowed without ``allow_inexact_replay``."""
        return not self.replay_refusal

    @classmethod
    def of(cls, episode: Sequence[Any], step: int) -> ForkPlan:
        """The plan for ``episode`` (its records, in any order) at ``step``."""
        records = sorted((_as_dict(r) for r in episode), key=lambda r: int(r["step"]))
        if not records:
            raise EpisodeRecordError("The episode has no records; pass the rows of one episode.")
        if len({r.get("episode_id") for r in records}) > 1:
            raise EpisodeRecordError(
                "The records hold more than one episode; pass the rows of one episode_id "
                "(e.g. [r for r in records if r['episode'] == 0])."
            )
        if [int(r["step"]) for r in records] != list(range(len(records))):
            raise EpisodeRecordError("The episode's steps are not 0, 1, 2, ... without gaps.")
        if not 0 <= step < len(records):
            raise EpisodeRecordError(
                f"Step {step} is not in the episode: it has steps 0 to {len(records) - 1}."
            )
        chosen = records[: step + 1]
        return cls(
            step=step,
            reset_params=_loads(chosen[0]["action"]),
            actions=[_action(_loads(r["action"])) for r in chosen[1:]],
            payloads=[_payload(r) for r in chosen],
            snapshot=chosen[-1].get("snapshot") or None,
            replay_refusal=chosen[0].get("replay_refusal") or None,
            digests=tuple(r.get("state_digest") or None for r in chosen),
        )

    def check(self, parse: _Parse, step: int, got: StepResult[Any]) -> None:
        """Raise :class:`ReplayMismatchError` unless ``got`` is what was recorded at ``step``
        (the recording read by ``parse``, the client's own reading of a reply)."""
        expected = parse(self.payloads[step])
        recorded, replayed = _compared(expected), _compared(got)
        if recorded != replayed:
            compared = (_named(recorded), _named(replayed))
            raise ReplayMismatchError(step, _shown(expected), _shown(got), compared=compared)

    def refuse_unless(self, allow_inexact_replay: bool) -> None:
        """Raise :class:`ReplayRefusedError` where the recording says the episode would not
        replay exactly, unless ``allow_inexact_replay``."""
        if self.replay_refusal and not allow_inexact_replay:
            raise ReplayRefusedError(self.replay_refusal, snapshot_named=bool(self.snapshot))

    def after_reset(self, facts: dict[str, Any] | None, allow_inexact_replay: bool) -> bool:
        """Check what the replaying server's environment said after the reset (``facts``, from
        ``openenv/session/replay_facts``; None where it does not speak it): refuse where it
        says the episode would not replay exactly (a recording that did not carry it), and
        compare the reset's digest. Whether to ask again after each step (digests recorded)."""
        if facts is None:
            return False
        refusal = facts.get("replay_refusal")
        if refusal and not allow_inexact_replay:
            raise ReplayRefusedError(str(refusal))
        self.check_digest(0, facts)
        return any(self.digests) and bool(facts.get("state_digest"))

    def check_digest(self, step: int, facts: dict[str, Any] | None) -> None:
        """Raise :class:`ReplayMismatchError` where the environment's state digest at ``step``
        differs from the recorded one (nothing to compare where either is missing)."""
        recorded = self.digests[step] if step < len(self.digests) else None
        replayed = None if facts is None else facts.get("state_digest")
        if recorded and replayed and recorded != replayed:
            expected, got = {"state_digest": recorded}, {"state_digest": replayed}
            raise ReplayMismatchError(step, expected, got)

    def forked(self, result: StepResult[Any], method: ForkMethod) -> ForkedResult[Any]:
        """``result`` as the fork's, saying how it was made (also logged)."""
        forked = ForkedResult(
            result.observation, result.reward, result.done, result.metadata,
            method=method, step=self.step,
            digests_checked=sum(1 for d in self.digests if d) if method == REPLAY else 0,
        )  # fmt: skip
        logger.info("Forked at step %d %s", self.step, forked.how)
        return forked

    def restore_call(self) -> dict[str, Any]:
        """The ``mcp`` request that restores :attr:`snapshot`."""
        params = {"snapshot": self.snapshot}
        return {"jsonrpc": "2.0", "id": 1, "method": RESTORE_METHOD, "params": params}


def replay_facts(reply: dict[str, Any]) -> dict[str, Any] | None:
    """What ``openenv/session/replay_facts`` answered, or None (a server without it)."""
    result = reply.get("result")
    return result if isinstance(result, dict) and "state_digest" in result else None


def restored_payload(reply: dict[str, Any]) -> dict[str, Any] | None:
    """The reply a restore gave, or None when the server could not restore (an error)."""
    result = reply.get("result")
    return result if isinstance(result, dict) and "observation" in result else None


async def fork_episode(
    client: _AsyncSession,
    episode: Sequence[Any],
    step: int,
    *,
    allow_inexact_replay: bool = False,
) -> ForkedResult[Any]:
    """Bring ``client``'s session to ``episode``'s state at ``step`` and return that step's
    result, saying how it was made; the session plays on from there."""
    plan = ForkPlan.of(episode, step)
    if plan.snapshot:
        try:
            payload = restored_payload(await client._request("mcp", plan.restore_call()))
        except ServerReplyError:  # a server that does not speak it: replay
            payload = None
        if payload is not None:
            client._exchange.episode_restored()
            result = client._parse_result(payload)
            plan.check(client._parse_result, step, result)
            return plan.forked(result, SNAPSHOT)
    plan.refuse_unless(allow_inexact_replay)

    async def facts() -> dict[str, Any] | None:
        try:
            return replay_facts(await client._request("mcp", REPLAY_FACTS_CALL))
        except ServerReplyError:
            return None

    result = await client.reset(**plan.reset_params)
    plan.check(client._parse_result, 0, result)
    asks = plan.after_reset(await facts(), allow_inexact_replay)
    for index, action in enumerate(plan.actions, start=1):
        result = await client.step(action)
        plan.check(client._parse_result, index, result)
        if asks:
            plan.check_digest(index, await facts())
    return plan.forked(result, REPLAY)


def fork_episode_sync(
    client: _SyncSession,
    episode: Sequence[Any],
    step: int,
    *,
    allow_inexact_replay: bool = False,
) -> ForkedResult[Any]:
    """:func:`fork_episode` for a synchronous client."""
    plan = ForkPlan.of(episode, step)
    parse = client.codec._parse_result
    if plan.snapshot:
        try:
            payload = restored_payload(client._request("mcp", plan.restore_call()))
        except ServerReplyError:  # a server that does not speak it: replay
            payload = None
        if payload is not None:
            client._exchange.episode_restored()
            result = parse(payload)
            plan.check(parse, step, result)
            return plan.forked(result, SNAPSHOT)
    plan.refuse_unless(allow_inexact_replay)

    def facts() -> dict[str, Any] | None:
        try:
            return replay_facts(client._request("mcp", REPLAY_FACTS_CALL))
        except ServerReplyError:
            return None

    result = client.reset(**plan.reset_params)
    plan.check(parse, 0, result)
    asks = plan.after_reset(facts(), allow_inexact_replay)
    for index, action in enumerate(plan.actions, start=1):
        result = client.step(action)
        plan.check(parse, index, result)
        if asks:
            plan.check_digest(index, facts())
    return plan.forked(result, REPLAY)


def _as_dict(record: Any) -> dict[str, Any]:
    if isinstance(record, Mapping):
        return dict(record)
    if hasattr(record, "as_dict"):
        return dict(record.as_dict())
    raise EpisodeRecordError(
        f"A record is a {type(record).__name__}; pass dicts (read_records) or StepRecords."
    )


def _loads(text: Any) -> dict[str, Any]:
    value = json.loads(text) if isinstance(text, str) else text
    return dict(value or {})


def _action(sent: dict[str, Any]) -> dict[str, Any]:
    """The action as the client sends it (an empty ``metadata`` left out, as the codec does)."""
    if not sent.get("metadata"):
        sent.pop("metadata", None)
    return sent


def _payload(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "observation": _loads(record["observation"]),
        "reward": record.get("reward"),
        "done": bool(record.get("done")),
    }


def _compared(result: StepResult[Any]) -> tuple[Any, Any, bool]:
    """What must match: the observation as the wire carries it (images as PNG text, so arrays
    compare whole), less the fields its class names in ``replay_ignores``; the reward; done."""
    observation = result.observation
    if hasattr(observation, "model_dump"):
        ignored = set(getattr(type(observation), "replay_ignores", ()))
        observation = observation.model_dump(mode="json", exclude=ignored)
    return observation, result.reward, result.done


def _named(compared: tuple[Any, Any, bool]) -> dict[str, Any]:
    observation, reward, done = compared
    return {"observation": observation, "reward": reward, "done": done}


def _shown(result: StepResult[Any]) -> dict[str, Any]:
    observation = result.observation
    if hasattr(observation, "model_dump"):
        observation = observation.model_dump(mode="json")
    return {"observation": observation, "reward": result.reward, "done": result.done}
