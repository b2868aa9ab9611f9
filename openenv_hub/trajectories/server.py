"""Recording on the server: every session's episodes, whoever drives them.

``create_app(..., trajectories="episodes.jsonl")`` attaches a :class:`ServerRecorder` to the
session core. Each session's episode is written when it ends, when the session resets before
the end, or when the session closes (the last two marked ``truncated``); the file is complete
when the server shuts down.

Layer: client.
"""

from __future__ import annotations

from typing import Any

from openenv_hub.trajectories.files import TrajectoryWriter
from openenv_hub.trajectories.records import EpisodeBuffer

__all__ = ["ServerRecorder"]


class ServerRecorder:
    """A session observer writing each session's episodes to a :class:`TrajectoryWriter`."""

    def __init__(self, writer: TrajectoryWriter, env_name: str, env_version: str | None) -> None:
        self.writer = writer
        self.env_name = env_name
        self.env_version = env_version
        self._open: dict[str, EpisodeBuffer] = {}
        self._started = 0  # episodes begun, for numbering

    def on_reset(
        self,
        session_id: str,
        params: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
    ) -> None:
        self._flush(session_id, truncated=True)
        buffer = EpisodeBuffer(self.env_name, self.env_version, self._started, None, "server")
        self._started += 1
        buffer.add(params, payload, started_at=started_at, duration_s=duration_s)
        self._open[session_id] = buffer

    def on_step(
        self,
        session_id: str,
        action: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
    ) -> None:
        buffer = self._open.get(session_id)
        if buffer is None:  # a step without a reset (stateless HTTP): not an episode
            return
        buffer.add(action, payload, started_at=started_at, duration_s=duration_s)
        if payload.get("done"):
            self._flush(session_id, truncated=False)

    def on_close(self, session_id: str) -> None:
        self._flush(session_id, truncated=True)

    def _flush(self, session_id: str, *, truncated: bool) -> None:
        buffer = self._open.pop(session_id, None)
        if buffer is not None and len(buffer.records) > 1:
            self.writer.write_episode(buffer.finish(truncated=truncated))

    def close(self) -> None:
        """Write the episodes still open (as truncated) and finish the file."""
        for session_id in list(self._open):
            self._flush(session_id, truncated=True)
        self.writer.close()
