"""Errors of replaying a recorded episode: a record that cannot be replayed, a replay that does
not reproduce what was recorded, and a replay refused because it could not be trusted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openenv_hub.errors._base import ConfigurationError, OpenEnvError

#: Fields named in a mismatch's message, at most (the rest are counted).
_MAX_NAMED = 4
#: Characters of a value shown in a mismatch's message, at most.
_MAX_SHOWN = 60


class EpisodeRecordError(ConfigurationError):
    """The records given are not one replayable episode, or the step is not among them."""


class ReplayRefusedError(ConfigurationError):
    """A replay fork was refused before anything was sent: the episode would not replay
    exactly (its environment said why when it was recorded, e.g. no seed given at reset).

    Attributes:
        reason: The environment's reason.
    """

    def __init__(self, reason: str, *, snapshot_named: bool = False) -> None:
        self.reason = reason
        where = (
            "the server no longer holds the snapshot the recording names, and "
            if snapshot_named
            else ""
        )
        super().__init__(
            f"Cannot fork this episode by replay: {where}{reason}",
            hint="Fork on the server that recorded it while it runs (it restores its snapshot), "
            "record the episode again with a seed, or pass allow_inexact_replay=True to replay "
            "anyway (every observation is still checked, but the state may differ unseen).",
        )


class ReplayMismatchError(OpenEnvError):
    """Replaying a recorded episode gave another reply than the recording at ``step``.

    Attributes:
        step: The step (0 is the reset) whose reply differs.
        expected: What the recording holds (``observation``, ``reward``, ``done``; or
            ``state_digest`` where the environment's own digests differ).
        got: What the replay gave, in the same shape.
        fields: The paths of the fields that differ, e.g. ``["observation.frame_number"]``.
    """

    def __init__(
        self,
        step: int,
        expected: dict[str, Any],
        got: dict[str, Any],
        *,
        compared: tuple[dict[str, Any], dict[str, Any]] | None = None,
    ) -> None:
        self.step, self.expected, self.got = step, expected, got
        left, right = compared if compared is not None else (expected, got)
        differences = differing_fields(left, right)
        self.fields = [path for path, _, _ in differences]
        super().__init__(_message(step, differences), hint=_hint(self.fields))


def differing_fields(expected: Any, got: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """The fields where ``got`` differs from ``expected``: (path, expected, got), dicts looked
    into key by key (``observation.frame_number``), anything else compared whole."""
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        found: list[tuple[str, Any, Any]] = []
        for key in list(expected) + [k for k in got if k not in expected]:
            inner = f"{path}.{key}" if path else str(key)
            found += differing_fields(expected.get(key), got.get(key), inner)
        return found
    return [] if expected == got else [(path or "value", expected, got)]


def _message(step: int, differences: list[tuple[str, Any, Any]]) -> str:
    if not differences:  # compared values were equal: nothing to name (not expected)
        return f"Replay differs from the recording at step {step}"
    shown = [
        f"{path} differs at step {step}: recorded {shown_value(left)}, replayed "
        f"{shown_value(right)}"
        for path, left, right in differences[:_MAX_NAMED]
    ]
    more = len(differences) - _MAX_NAMED
    return "; ".join(shown) + (f"; and {more} more field(s)" if more > 0 else "")


def _hint(fields: list[str]) -> str:
    if fields == ["state_digest"]:
        return (
            "The observations match but the environment's own state does not: it holds state "
            "the recorded seed and actions do not fix (a random generator, a clock). Fork at an "
            "earlier step, or from the snapshot of the server that recorded it."
        )
    return (
        "A field that counts something outside the episode (frames since the game was "
        "loaded, a timing) belongs in the observation class's replay_ignores; otherwise the "
        "environment, its settings or its version changed since the recording. Fork at an "
        "earlier step, or from the snapshot of the server that recorded it."
    )


def shown_value(value: Any, limit: int = _MAX_SHOWN) -> str:
    """``value`` as a message shows it: a long text (an image's base64) by its length only,
    anything else cut to ``limit`` characters."""
    if isinstance(value, str) and len(value) > limit:
        kind = "a PNG image" if value.startswith(("iVBORw0KGgo", "data:image")) else "a text"
        return f"<{kind} of {len(value):,} characters>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
