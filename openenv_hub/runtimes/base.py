"""What a runtime is (:class:`Runtime`), and what it starts: a :class:`Provider` of one or more
servers, that can be stopped.

A runtime starts servers from a folder, an image or a Space at a revision, as far as it can
(:attr:`Runtime.options` says which); :mod:`openenv_hub.runtimes.registry` finds it by name. What
it returns, once the servers answer ``/health``, is a provider: the URLs of its servers, their
logs, and ``stop()``, which is idempotent and runs by itself at interpreter exit and when the
client that owns the provider closes.

A provider that cannot start raises :class:`~openenv_hub.errors.ServerStartError`, which names
the runtime, what it ran, and the last lines of the server's log.

Everything a provider starts outside this process (containers, services) carries the labels of
:mod:`openenv_hub.runtimes.labels`, so ``openenv ps`` lists it and ``openenv stop --all``
removes it, also after the process that started it crashed.

Layer: runtimes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from openenv_hub.errors import ConfigurationError

__all__ = [
    "SOURCE_WORDS",
    "Provider",
    "Runtime",
    "RuntimeBase",
    "Source",
    "SpaceRef",
    "StopsOnExit",
]

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


Source = Literal["folder", "image", "space"]
"""What a server starts from: an environment folder, an image, or a Space at a revision."""

SOURCE_WORDS: dict[Source, str] = {"folder": "a folder", "image": "an image", "space": "a Space"}


@dataclass(frozen=True)
class SpaceRef:
    """A Space at a revision (a version tag, a branch or a commit; ``None``: its main branch),
    the Hub that has it, and whether its code may run here."""

    repo_id: str
    revision: str | None = None
    token: str | None = None
    endpoint: str | None = None
    trust_remote_code: bool = False


class Runtime(Protocol):
    """A place where environment servers run, registered by ``name`` (see
    :mod:`openenv_hub.runtimes.registry`).

    ``options`` says what the runtime starts from and which keyword arguments each start takes:
    a source it lacks is one it cannot start from, and the registry refuses options not listed
    (naming those it takes) before anything starts. Each start returns once the servers answer
    ``/health``, as a :class:`Provider`; it raises
    :class:`~openenv_hub.errors.ServerStartError` (with the server's log) when they do not.
    """

    name: str
    #: One line for ``openenv serve --help`` and for errors: where the server runs.
    summary: str

    @property
    def options(self) -> Mapping[Source, frozenset[str]]:
        """For each source the runtime starts from, the options its start takes."""
        ...

    def start_folder(self, path: Path, **options: Any) -> Provider:
        """Serve the environment folder ``path`` (it holds an ``openenv.yaml``)."""
        ...

    def start_image(self, image: str, **options: Any) -> Provider:
        """Serve the image ``image`` (a Space image: it listens on ``$PORT``)."""
        ...

    def start_space(self, space: SpaceRef, **options: Any) -> Provider:
        """Serve the Space at ``space.revision`` (running its code only with consent)."""
        ...


class RuntimeBase:
    """What a runtime class may start from: each start it does not define says so.

    A runtime lists in ``options`` only the sources it defines a start for; the registry checks
    that first, so these refusals are a last guard for direct calls.
    """

    name = ""
    summary = ""
    options: Mapping[Source, frozenset[str]] = {}

    def start_folder(self, path: Path, **options: Any) -> Provider:
        raise self._cannot("folder")

    def start_image(self, image: str, **options: Any) -> Provider:
        raise self._cannot("image")

    def start_space(self, space: SpaceRef, **options: Any) -> Provider:
        raise self._cannot("space")

    def _cannot(self, source: Source) -> ConfigurationError:
        return ConfigurationError(
            f"The {self.name} runtime cannot start from {SOURCE_WORDS[source]}."
        )
