"""Counting the calls that go through a function a test wraps (a wake-up, a write)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class CallTally:
    """How many calls went through the functions made by :meth:`counting`, together."""

    def __init__(self) -> None:
        self.count = 0

    def counting(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn``, counted at each call."""

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return fn(*args, **kwargs)

        return counted
