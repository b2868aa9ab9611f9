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

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from openenv_hub.errors import ConfigurationError

__all__ = [
    "SOURCE_WORDS",
    "Inventory",
    "Provider",
    "ReplicaStatus",
    "Running",
    "Runtime",
    "RuntimeBase",
    "Source",
    "SpaceRef",
    "StopsOnExit",
    "process_runs",
]

_Started = TypeVar("_Started", bound="StopsOnExit")


@dataclass(frozen=True)
class ReplicaStatus:
    """One replica of a provider as its runtime sees it now."""

    index: int
    name: str
    state: str  # ALIVE, RESTARTING, PENDING_CREATION, DEAD
    url: str
    pid: int | None
    node_ip: str
    restarts: int


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

    #: Whether the runtime restarts replicas that die (Ray): ``openenv serve`` then follows the
    #: replicas' states and :attr:`events` rather than a log.
    restarts_replicas: bool

    @property
    def events(self) -> Sequence[str]:
        """What happened to the replicas since they started (restarts), oldest first."""
        ...

    def logs(self, tail_lines: int = 200) -> str:
        """The last ``tail_lines`` lines the server(s) printed."""
        ...

    def replicas(self) -> list[ReplicaStatus]:
        """Each replica as the runtime sees it now."""
        ...

    def running(self) -> bool:
        """Whether the server still runs (as far as this process can tell)."""
        ...

    def details(self) -> list[str]:
        """What a user is told of the servers besides their URLs, one line each: the name
        ``openenv stop`` takes, a Service's address, what a URL needs."""
        ...

    def stopped_from_outside(self) -> str | None:
        """How another process stopped the server (``openenv stop``, a signal), or None."""
        ...

    def stop(self) -> None:
        """Stop and remove what was started. Safe to call more than once."""
        ...

    def __enter__(self) -> Provider: ...

    def __exit__(self, *exc_info: object) -> None:
        """``with provider:`` stops it when the block ends, however it ends."""
        ...


class StopsOnExit:
    """Base of the providers: ``with provider:`` stops it when the block ends, however it ends;
    what a provider does not know of itself (that it stopped, restarts) is answered here."""

    runtime = ""
    restarts_replicas = False
    events: Sequence[str] = ()

    @property
    def base_urls(self) -> list[str]:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def running(self) -> bool:
        return True

    def replicas(self) -> list[ReplicaStatus]:
        """One replica per URL, alive while :meth:`running` (a runtime that knows more says)."""
        state = "ALIVE" if self.running() else "DEAD"
        return [
            ReplicaStatus(i, f"{self.runtime}-{i}", state, url, None, "", 0)
            for i, url in enumerate(self.base_urls)
        ]

    def details(self) -> list[str]:
        return []

    def stopped_from_outside(self) -> str | None:
        return None

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
    #: ``"module:Class"`` of the :class:`Inventory` that lists and stops what this runtime
    #: started, from any process (``openenv ps``, ``openenv stop``); ``""``: it starts nothing
    #: that runs on (the app of ``space`` runs on the Hub).
    inventory: str

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


@dataclass(frozen=True)
class Running:
    """A server a runtime started, as its inventory lists it (``openenv ps``)."""

    kind: str  # "container", "service", "actor" (a Ray replica), "process", "job", ...
    id: str
    name: str
    runtime: str
    status: str
    url: str
    source: str
    owner_pid: int | None

    @property
    def owner_alive(self) -> bool:
        """Whether the process that started it still runs (False: it was left behind)."""
        return process_runs(self.owner_pid)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "owner_alive": self.owner_alive}


class Inventory(Protocol):
    """What lists and stops the servers of one or more runtimes, whichever process started
    them (``openenv ps``, ``openenv stop``)."""

    #: What it lists, in a few words (``"containers and Swarm services"``), for messages.
    lists: str

    def asked_by_default(self, *, address: str | None = None) -> bool:
        """Whether plain ``openenv ps`` asks it: it asks only this machine, for free, or a
        cluster this process knows (``address``); the others (a cloud's) are asked when named
        (``openenv ps --runtime NAME``)."""
        ...

    def running(self, *, address: str | None = None) -> list[Running]:
        """What runs now (``address``: the cluster to ask, where the runtime has one).

        Raises:
            OpenEnvError: It cannot be asked (a package missing, nothing answers), with a hint.
        """
        ...

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        """Stop and remove ``items`` (some of those :meth:`running` returned)."""
        ...


class RuntimeBase:
    """What a runtime class may start from: each start it does not define says so.

    A runtime lists in ``options`` only the sources it defines a start for; the registry checks
    that first, so these refusals are a last guard for direct calls.
    """

    name = ""
    summary = ""
    inventory = ""
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


def process_runs(pid: int | None) -> bool:
    """Whether the process ``pid`` runs on this machine (a process of another user's counts)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
