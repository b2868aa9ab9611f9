"""Recording on the server: every session's episodes, whoever drives them.

``create_app(..., trajectories="episodes.jsonl")`` attaches a :class:`ServerRecorder` to the
session core. Each session's episode is written when it ends, when the session resets before
the end, or when the session closes (the last two marked ``truncated``); the file is complete
when the server shuts down. Where the environment takes snapshots, each record holds the id of
the one the server kept after that step, so a fork at it is exact while the server runs, and
the environment's state digest and, on the reset's, why it would not replay (if it says); an
episode a session continues from a restored snapshot is not recorded (it has no reset to
replay it from). The latest episodes written are also kept in memory
(:attr:`ServerRecorder.recent`), for the web UI's Replay tab and for forks while the server runs.
An episode the web UI replays to make a fork (:meth:`ServerRecorder.mark_fork`) is recorded
with ``forked_from`` saying what it forks, and kept apart (:attr:`ServerRecorder.recent_forks`):
forks never push the original episodes out of memory.

Layer: client.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from openenv_hub.trajectories.files import TrajectoryWriter
from openenv_hub.trajectories.records import EpisodeBuffer
from openenv_hub.types import ReplayFacts

__all__ = ["RECENT_EPISODES", "ServerRecorder", "server_recorder"]

RECENT_EPISODES = 50  # the latest episodes written, kept in memory


class ServerRecorder:
    """A session observer writing each session's episodes to a :class:`TrajectoryWriter`."""

    wants_snapshots = True

    def __init__(self, writer: TrajectoryWriter, env_name: str, env_version: str | None) -> None:
        self.writer = writer
        self.env_name = env_name
        self.env_version = env_version
        self._open: dict[str, EpisodeBuffer] = {}
        self._forks: dict[str, str] = {}  # session id: what its next episode forks
        self._started = 0  # episodes begun, for numbering
        #: The latest episodes written, oldest first: each its records, as read_records gives.
        self.recent: deque[list[dict[str, Any]]] = deque(maxlen=RECENT_EPISODES)
        #: The latest forks written (episodes that replay another), apart from :attr:`recent`.
        self.recent_forks: deque[list[dict[str, Any]]] = deque(maxlen=RECENT_EPISODES)

    def mark_fork(self, session_id: str, origin: str | None) -> None:
        """The next episode ``session_id`` begins replays ``origin`` to make a fork; None:
        no longer (its reset failed)."""
        if origin is None:
            self._forks.pop(session_id, None)
        else:
            self._forks[session_id] = origin

    def on_reset(
        self,
        session_id: str,
        params: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
        snapshot: str | None = None,
        replay: ReplayFacts | None = None,
    ) -> None:
        self._flush(session_id, truncated=True)
        buffer = EpisodeBuffer(
            self.env_name, self.env_version, self._started, None, "server",
            forked_from=self._forks.pop(session_id, None),
        )  # fmt: skip
        self._started += 1
        facts = replay or ReplayFacts()
        buffer.add(
            params, payload, started_at=started_at, duration_s=duration_s, snapshot=snapshot,
            state_digest=facts.state_digest, replay_refusal=facts.replay_refusal,
        )  # fmt: skip
        self._open[session_id] = buffer

    def on_step(
        self,
        session_id: str,
        action: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
        snapshot: str | None = None,
        replay: ReplayFacts | None = None,
    ) -> None:
        buffer = self._open.get(session_id)
        if buffer is None:  # a step without a reset (stateless HTTP, a restored session)
            return
        digest = None if replay is None else replay.state_digest
        buffer.add(
            action, payload, started_at=started_at, duration_s=duration_s, snapshot=snapshot,
            state_digest=digest,
        )  # fmt: skip
        if payload.get("done"):
            self._flush(session_id, truncated=False)

    def on_restore(self, session_id: str, step: int, payload: dict[str, Any]) -> None:
        """The session was brought to a snapshot: its episode so far ends here."""
        self._flush(session_id, truncated=True)

    def on_close(self, session_id: str) -> None:
        self._forks.pop(session_id, None)
        self._flush(session_id, truncated=True)

    def _flush(self, session_id: str, *, truncated: bool) -> None:
        buffer = self._open.pop(session_id, None)
        if buffer is not None and len(buffer.records) > 1:
            records = buffer.finish(truncated=truncated)
            self.writer.write_episode(records)
            kept = self.recent_forks if buffer.forked_from else self.recent
            kept.append([record.as_dict() for record in records])

    def close(self) -> None:
        """Write the episodes still open (as truncated) and finish the file."""
        for session_id in list(self._open):
            self._flush(session_id, truncated=True)
        self.writer.close()


def server_recorder(observers: Iterable[object]) -> ServerRecorder | None:
    """The recorder among a session core's observers, if the server records episodes."""
    return next((o for o in observers if isinstance(o, ServerRecorder)), None)
