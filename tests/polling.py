"""Waiting for a condition with a deadline, instead of sleeping for a guessed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], timeout_s: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_s:g} s: {what or predicate}")
        time.sleep(0.01)


async def eventually(
    predicate: Callable[[], object], timeout_s: float = 10.0, what: str = ""
) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_s:g} s: {what or predicate}")
        await asyncio.sleep(0.01)
