"""Running a coroutine to its end from synchronous code, even inside a running event loop
(where ``asyncio.run`` refuses to start), without touching the calling thread's loop.

Layer: core.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_to_end"]

_T = TypeVar("_T")


def run_to_end(coroutine: Coroutine[Any, Any, _T], *, thread_name: str) -> _T:
    """The result of ``coroutine``, run on a loop of its own in a helper thread named
    ``thread_name``; its exception, if any, is raised here."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # raised again on the calling thread
            box["error"] = exc

    thread = threading.Thread(target=run, name=thread_name)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
