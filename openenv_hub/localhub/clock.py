"""Timestamps in the one format ``huggingface_hub`` parses (``...T...Z``).

Layer: runtimes.
"""

from __future__ import annotations

import datetime as dt


def iso_time(timestamp: float | None = None) -> str:
    """Format a POSIX ``timestamp`` (default: now) as ``2024-01-31T12:00:00.000Z``."""
    moment = (
        dt.datetime.now(dt.timezone.utc)
        if timestamp is None
        else dt.datetime.fromtimestamp(timestamp, dt.timezone.utc)
    )
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
