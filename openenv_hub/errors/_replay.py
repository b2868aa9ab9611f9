"""Errors of replaying a recorded episode: a record that cannot be replayed, and a replay that
does not reproduce what was recorded."""

from __future__ import annotations

from typing import Any

from openenv_hub.errors._base import ConfigurationError, OpenEnvError


class EpisodeRecordError(ConfigurationError):
    """The records given are not one replayable episode, or the step is not among them."""


class ReplayMismatchError(OpenEnvError):
    """Replaying a recorded episode gave another observation than the recording at ``step``.

    Attributes:
        step: The step (0 is the reset) whose observation differs.
        expected: What the recording holds (``observation``, ``reward``, ``done``).
        got: What the replay gave, in the same shape.
    """

    def __init__(self, step: int, expected: dict[str, Any], got: dict[str, Any]) -> None:
        self.step, self.expected, self.got = step, expected, got
        differs = sorted(k for k in set(expected) | set(got) if expected.get(k) != got.get(k))
        super().__init__(
            f"Replay differs from the recording at step {step} in {', '.join(differs)}: "
            f"recorded {_short(expected)}, replayed {_short(got)}",
            hint="The environment is not deterministic under the recorded seed and options, "
            "or it changed since the recording; fork at an earlier step or record again.",
        )


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
