"""What every runtime starts: a :class:`Provider` of one or more servers, that can be stopped.

A provider is started from a spec (an app, a folder, an image, a Space at a revision) by a
``start``-like class method that returns once the server answers ``/health``. A provider gives the URLs of the servers it runs, their logs, and stops
them. ``stop()`` is idempotent, and runs by itself at interpreter exit and when the client that
owns the provider closes.

A provider that cannot start raises :class:`~openenv_hub.errors.ServerStartError`, which names
the runtime, what it ran, and the last lines of the server's log.

Everything a provider starts outside this process (containers, services) carries the labels of
:mod:`openenv_hub.runtimes.labels`, so ``openenv ps`` lists it and ``openenv stop --all``
removes it, also after the process that started it crashed.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

__all__ = ["Provider", "StopsOnExit"]

_Started = TypeVar("_Started", bound="StopsOnExit")


@runtime_checkable
class Provider(Protocol):
    """A running environment server (or several replicas of one) that can be stopped.

    ``runtime`` names the kind of provider (``"local"``, ``"uv"``, ``"docker"``, ``"swarm"``,
    ``"ray"``, ``"kubernetes"``, ...), for messages and listings. ``base_url`` is the first
    (often the only) server; ``base_urls`` lists every replica, for clients that spread sessions
    across them.
    """

    runtime: str

    @property
    def base_url(self) -> str: ...

    @property
    def base_urls(self) -> list[str]: ...

    def logs(self, tail_lines: int = 200) -> str:
        """The last ``tail_lines`` lines the server(s) printed."""
        ...

    def stop(self) -> None:
        """Stop and remove what was started. Safe to call more than once."""
        ...


class StopsOnExit:
    """Base of the providers: ``with provider:`` stops it when the block ends, however it ends."""

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Started) -> _Started:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
