"""The ``space`` runtime (a Space's own app, where the Hub runs it), and a Space's files at a
commit for the runtimes that run a Space on this machine.

``from_hub(repo_id)`` talks to the app the Hub runs for the Space: nothing starts here, and
:class:`SpaceApp` only says where it is. A ``revision`` must be the one the Space runs
(:class:`~openenv_hub.errors.RevisionNotServedError` otherwise), and a Space that is not
running says so with its stage.

The ``local``, ``uv`` and ``docker`` runtimes run a Space here: :func:`space_files` downloads its
files at the commit the revision names into the cache (``$OPENENV_HUB_CACHE/spaces``), once per
commit and only with the user's consent; :func:`made_from` names what is made from them (an
environment, an image) after that commit.

Layer: runtimes.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from openenv_hub.runtimes.base import RuntimeBase, SpaceRef, StopsOnExit
from openenv_hub.support.settings import cache_dir

if TYPE_CHECKING:
    from openenv_hub.hub import SpaceSource

__all__ = ["SpaceApp", "SpaceRuntime", "made_from", "space_files"]


class SpaceApp(StopsOnExit):
    """The app the Hub runs for a Space. Nothing was started here, so ``stop()`` does nothing."""

    runtime = "space"

    def __init__(self, repo_id: str, url: str) -> None:
        self.name = repo_id
        self._url = url

    @property
    def base_url(self) -> str:
        return self._url

    @property
    def base_urls(self) -> list[str]:
        return [self._url]

    def logs(self, tail_lines: int = 200) -> str:
        return ""  # the Hub keeps the Space's logs (its page shows them)

    def stop(self) -> None:
        """Nothing to stop: the Space runs on the Hub."""

    def __repr__(self) -> str:
        return f"SpaceApp({self.name}, {self._url})"


class SpaceRuntime(RuntimeBase):
    """A Space's app as the Hub runs it; see the module."""

    name = "space"
    summary = "the Space's own app, where the Hub runs it"
    inventory = ""  # starts nothing: the app runs on the Hub
    options = {"space": frozenset()}

    def start_space(self, space: SpaceRef, **options: Any) -> SpaceApp:
        from openenv_hub.hub import app_url

        url = app_url(space.repo_id, space.revision, token=space.token, endpoint=space.endpoint)
        return SpaceApp(space.repo_id, url)


def space_files(space: SpaceRef) -> SpaceSource:
    """The Space's files at the commit ``space.revision`` names, in the cache (downloaded once
    per commit, after consent)."""
    from openenv_hub.hub import download_space

    return download_space(
        space.repo_id,
        space.revision,
        into=cache_dir("spaces"),
        endpoint=space.endpoint,
        token=space.token,
        trust_remote_code=space.trust_remote_code,
    )


def made_from(source: SpaceSource) -> str:
    """A name for what is made from this commit of the Space (a uv environment)."""
    digest = hashlib.sha256(f"{source.repo_id}@{source.commit}".encode()).hexdigest()[:16]
    return f"space-{digest}"
