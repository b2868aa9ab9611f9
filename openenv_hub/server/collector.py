"""The cyclic garbage collector's thresholds in a server process.

Every request in flight holds a handful of tracked objects: its task and coroutine frames, a
future, the action and the observation, the frames' dicts. With Python's thresholds (a young
collection every 700 net allocations, an older one every tenth of those), a server stepping a
hundred sessions frees each request's objects before a collection sees them. With thousands of
sessions stepping at once, a request lives through many young collections, so its objects are
promoted to the oldest generation; a full collection then runs each time a quarter of that
generation is new, and each one walks every live object, the sessions' own included. At 4,096
sessions that cost the server more CPU than the steps did (``benchmarks/README.md``, run 5).

:func:`tune_collector`, called by :func:`~openenv_hub.server.app.serve_app` and ``openenv serve``,
makes the young generation large enough for the requests of thousands of sessions to end in
it. A young collection costs in proportion to what survives it, so this saves work at every
size; cyclic garbage waits longer for its collection (a few MB at most).

Layer: server.
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["YOUNG_GENERATION_THRESHOLD", "tune_collector"]

#: Net allocations of tracked objects between young collections (Python's default is 700).
YOUNG_GENERATION_THRESHOLD: Final = 50_000


def tune_collector() -> tuple[int, ...]:
    """Raise the young generation's threshold to :data:`YOUNG_GENERATION_THRESHOLD`. A higher
    one, or 0 (automatic collection off), set by the process already, is kept; so are the older
    generations' thresholds.

    Returns:
        The thresholds now in force (``gc.get_threshold()``).
    """
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_GENERATION_THRESHOLD:
        gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *older)
    return gc.get_threshold()
