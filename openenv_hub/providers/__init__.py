"""Where environment servers run: a local process, a Docker container, a cluster."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Provider"]


@runtime_checkable
class Provider(Protocol):
    """A running environment server that a client can stop when it closes."""

    @property
    def base_url(self) -> str: ...

    def stop(self) -> None: ...
