"""Where environment servers run: a local process, a Docker container, a cluster.

Every runtime is a :class:`Provider`: something started from a spec (an app, an image, a Space
at a revision), already healthy when its start function returns, that gives the URLs of the
servers it runs, their logs, and stops them. ``stop()`` is idempotent.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Provider"]


@runtime_checkable
class Provider(Protocol):
    """A running environment server (or several replicas of one) that can be stopped.

    ``base_url`` is the first (often the only) server; ``base_urls`` lists every replica, for
    clients that spread sessions across them.
    """

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
