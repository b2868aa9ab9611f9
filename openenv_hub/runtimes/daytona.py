"""The ``daytona`` runtime: environment servers in Daytona sandboxes, driven by the ``daytona``
SDK (``pip install "openenv-hub[daytona]"``).

``from_docker_image(image, runtime="daytona")`` creates a sandbox from the image (variables,
resources, labels, auto-stop), starts the server in it with the image's command through the
toolbox (Daytona does not run an image's command), waits until ``/health`` answers through the
sandbox's preview URL, and connects. ``from_hub("NS/NAME", runtime="daytona")`` does the same
with the Space's image, built on this machine's Docker engine from the Space's files at the
commit its revision names (once per commit, with consent, as the ``docker`` runtime builds it);
Daytona must be able to pull that image (the local Daytona of :mod:`openenv_hub.localdaytona`
runs the engine's own images). Where Daytona is comes from ``api_key``, ``api_url`` and
``target``, or ``DAYTONA_API_KEY``, ``DAYTONA_API_URL`` and ``DAYTONA_TARGET``.

A sandbox's preview URL needs its token unless ``public=True``: the client sends it in the
handshake's ``x-daytona-preview-token`` header (:meth:`DaytonaProvider.headers_for`), never in a
URL. Variables (``env``) become the sandbox's environment; ``secrets`` go only to the server's
process, as the environment of the command that starts it: never a command line, a log, or
what the API shows of the sandbox. Sandboxes have no network (``networkBlockAll``) unless
``network=True`` or the Space's ``openenv.yaml`` says ``network: true``. Each stops by itself
after ``auto_stop`` minutes without activity (15 unless you say; 0: never).

``replicas=N`` runs N sandboxes; :attr:`DaytonaProvider.base_urls` lists those still serving,
so an ``EnvPool`` over the provider moves the sessions of a sandbox that went away to the others
on its next ``reset_all()``; :meth:`DaytonaProvider.failures` says which went and why, and
:meth:`DaytonaProvider.replace` (or ``replace_failed=True``) starts another.

Closing the client (or ``stop()``, or the end of the interpreter) deletes the sandboxes; if the
process is killed, its Daytona reaper (:mod:`openenv_hub.runtimes._daytona_reaper`) deletes
them. Every sandbox is labelled (``openenv-hub=true``, the owner, the source), so ``openenv ps
--daytona`` lists them and ``openenv stop --daytona`` deletes them.

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import openenv_hub.runtimes._daytona_server as server
import openenv_hub.runtimes.cleanup as cleanup
import openenv_hub.runtimes.labels as labels
from openenv_hub.errors import ConfigurationError, ServerStartError
from openenv_hub.runtimes._daytona_api import (
    MANAGED_LABEL,
    OWNER_LABEL,
    DaytonaSettings,
    label_value,
)
from openenv_hub.runtimes._daytona_reaper import watch_sandboxes
from openenv_hub.runtimes.base import RuntimeBase, SpaceRef, StopsOnExit
from openenv_hub.support.progress import SHORT_WAIT_S, report_progress

__all__ = [
    "DEFAULT_AUTO_STOP_MINUTES",
    "DaytonaProvider",
    "DaytonaRuntime",
    "DaytonaSettings",
    "ReplicaFailure",
]

#: Minutes without activity after which a sandbox stops by itself, unless ``auto_stop`` says.
DEFAULT_AUTO_STOP_MINUTES = 15
_LOG = logging.getLogger(__name__)
START_LABEL = "openenv-hub-start"  # one per creation, to find a sandbox whose start failed


@dataclass(frozen=True)
class ReplicaFailure:
    """A sandbox of the provider that stopped serving: its state, why, its last log lines."""

    sandbox_id: str
    state: str
    reason: str | None
    last_lines: tuple[str, ...]

    def __str__(self) -> str:
        said = f": {self.reason}" if self.reason else ""
        tail = "\n".join(f"  {line}" for line in self.last_lines)
        return f"Sandbox {self.sandbox_id} is {self.state}{said}" + (f"\n{tail}" if tail else "")


@dataclass
class _Replica:
    sandbox: Any
    url: str = ""
    token: str = ""


class DaytonaProvider(StopsOnExit):
    """Environment servers in Daytona sandboxes; see the module."""

    runtime = "daytona"

    def __init__(
        self, settings: DaytonaSettings, image: str, *, command: list[str],
        workdir: str | None = None, port: int = 8000, env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None, cpu: int | None = None,
        memory: int | None = None, disk: int | None = None, network: bool = False,
        auto_stop: int = DEFAULT_AUTO_STOP_MINUTES, public: bool = False,
        startup_timeout_s: float = 300.0, replace_failed: bool = False, source: str = "",
    ) -> None:  # fmt: skip
        if auto_stop < 0:
            raise ConfigurationError(f"auto_stop is minutes, 0 (never) or more, not {auto_stop}.")
        self.settings = settings
        self.client = settings.client()
        self.image, self.command, self.workdir, self.port = image, list(command), workdir, port
        self._env = {**(env or {}), "PORT": str(port)}
        self._secrets = dict(secrets or {})
        self.resources = {"cpu": cpu, "memory": memory, "disk": disk}
        self.network, self.auto_stop, self.public = network, auto_stop, public
        self.startup_timeout_s = startup_timeout_s
        self.replace_failed = replace_failed
        self.source = source or image
        self._replicas: dict[str, _Replica] = {}  # sandbox id -> replica, in start order
        self._ended: dict[str, ReplicaFailure] = {}
        self._stopped = False
        self._lock = threading.RLock()

    @classmethod
    def start(
        cls, image: str, *, replicas: int = 1, api_key: str | None = None,
        api_url: str | None = None, target: str | None = None,
        command: list[str] | str | None = None, **options: Any,
    ) -> DaytonaProvider:  # fmt: skip
        """Create ``replicas`` sandboxes of ``image`` and return once each answers ``/health``.

        Raises:
            ServerStartError: A sandbox was not created, or its server did not answer in time
                (its state and last log lines are in the message); every sandbox is deleted.
        """
        if replicas < 1:
            raise ConfigurationError(f"replicas must be at least 1, not {replicas}.")
        settings = DaytonaSettings.resolve(api_key, api_url, target)
        if command is None:
            command, workdir = server.image_command(image)
            options.setdefault("workdir", workdir)
        elif isinstance(command, str):
            command = ["sh", "-c", command]
        provider = cls(settings, image, command=command, **options)
        cleanup.track(provider)
        try:
            provider._add(replicas)
        except BaseException:
            provider.stop()
            raise
        return provider

    @classmethod
    def from_hub(
        cls, repo_id: str, *, revision: str | None = None, token: str | None = None,
        endpoint: str | None = None, trust_remote_code: bool = False, **options: Any,
    ) -> DaytonaProvider:  # fmt: skip
        """Run the Space ``repo_id`` in sandboxes (``replicas``, ``cpu``, ... as for
        ``from_hub(runtime="daytona")``), for an ``EnvPool``::

            with DaytonaProvider.from_hub("alice/echo_env", replicas=2) as sandboxes:
                async with EnvPool(sandboxes, size=16) as pool: ...
        """
        space = SpaceRef(repo_id, revision, token, endpoint, trust_remote_code)
        return DaytonaRuntime().start_space(space, **options)

    # -- what clients and pools read ---------------------------------------------------------

    @property
    def sandbox_ids(self) -> list[str]:
        """The provider's sandboxes, serving or not, in the order they were created."""
        with self._lock:
            return list(self._replicas)

    def details(self) -> list[str]:
        return [
            f"Sandboxes {', '.join(self.sandbox_ids)} (openenv ps --daytona lists them). Their "
            "URLs need each sandbox's preview token in the x-daytona-preview-token header "
            "(from_hub(runtime='daytona') and EnvPool over DaytonaProvider send it)."
        ]

    def headers_for(self, url: str) -> dict[str, str]:
        """What a client of the replica at ``url`` sends with each connection: that sandbox's
        preview token, unless the sandboxes are public."""
        if self.public:
            return {}
        with self._lock:
            token = next((r.token for r in self._replicas.values() if r.url == url), "")
        return {server.PREVIEW_TOKEN_HEADER: token} if token else {}

    @property
    def headers(self) -> dict[str, str]:
        """What a client of the first sandbox sends (its preview token, unless public)."""
        with self._lock:
            first = next(iter(self._replicas.values()), None)
        if self.public or first is None or not first.token:
            return {}
        return {server.PREVIEW_TOKEN_HEADER: first.token}

    @property
    def base_url(self) -> str:
        urls = self.base_urls
        with self._lock:
            return urls[0] if urls else next(iter(self._replicas.values())).url

    @property
    def base_urls(self) -> list[str]:
        """The URLs of the sandboxes still serving (with ``replace_failed``, replacing those
        that went away first)."""
        failures = self.failures()
        if failures and self.replace_failed and not self._stopped:
            for failure in failures:
                if failure.sandbox_id in self._replicas:
                    self.replace(failure.sandbox_id)
        with self._lock:
            return [r.url for i, r in self._replicas.items() if i not in self._ended and r.url]

    def failures(self) -> list[ReplicaFailure]:
        """The provider's sandboxes that stopped serving (asked of Daytona now)."""
        with self._lock:
            replicas = [(i, r) for i, r in self._replicas.items() if i not in self._ended]
        for sandbox_id, replica in replicas:
            failure = self._failure_of(replica)
            if failure is not None:
                self._ended[sandbox_id] = failure
        return [self._ended[i] for i in self.sandbox_ids if i in self._ended]

    def _failure_of(self, replica: _Replica) -> ReplicaFailure | None:
        from daytona import DaytonaNotFoundError

        try:
            replica.sandbox.refresh_data()
        except DaytonaNotFoundError:
            return ReplicaFailure(replica.sandbox.id, "destroyed", "it was deleted", ())
        state = str(getattr(replica.sandbox.state, "value", replica.sandbox.state))
        if state in ("started", "starting", "creating"):
            return None
        lines = tuple(server.last_lines(replica.sandbox, 20)) if state == "error" else ()
        return ReplicaFailure(replica.sandbox.id, state, replica.sandbox.error_reason, lines)

    def replace(self, sandbox_id: str) -> str:
        """Delete the sandbox ``sandbox_id`` (if it is still there) and start another in its
        place; return the new sandbox's id once it answers."""
        with self._lock:
            replica = self._replicas.pop(sandbox_id, None)
        if replica is not None:
            self._delete(replica)
        (new_id,) = self._add(1)
        return new_id

    def running(self) -> bool:
        """Whether a sandbox still serves (``openenv serve`` follows until none does)."""
        return bool(self.base_urls)

    def logs(self, tail_lines: int = 200) -> str:
        with self._lock:
            replicas = list(self._replicas.values())
        parts = [
            f"== Sandbox {r.sandbox.id} ==\n" + "\n".join(server.last_lines(r.sandbox, tail_lines))
            for r in replicas
        ]
        return "\n".join(parts)

    def stop(self) -> None:
        """Delete every sandbox (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            replicas = list(self._replicas.values())
        cleanup.untrack(self)
        for replica in replicas:
            self._delete(replica)

    def _delete(self, replica: _Replica) -> None:
        """Delete the sandbox; one gone already is fine, any other failure is logged (the
        reaper tries again at the end) so that a sandbox left running is seen."""
        from daytona import DaytonaNotFoundError

        try:
            self.client.delete(replica.sandbox)
        except DaytonaNotFoundError:
            pass
        except Exception as exc:  # whatever the SDK raised, the stop goes on
            key = self.settings.api_key
            why = (str(exc).replace(key, "***") if key else str(exc))[:300]
            _LOG.warning(
                "Could not delete the Daytona sandbox %s (it may still run and bill): %s: %s",
                replica.sandbox.id, type(exc).__name__, why,
            )  # fmt: skip

    # -- starting ----------------------------------------------------------------------------

    def _add(self, count: int) -> list[str]:
        """Start ``count`` sandboxes at once and wait until each answers; their ids."""
        watch_sandboxes(self.settings.api_url, self.settings.api_key, self.settings.target)
        with ThreadPoolExecutor(max_workers=count) as pool:
            started = [pool.submit(self._start_one) for _ in range(count)]
            return [future.result() for future in started]

    def _start_one(self) -> str:
        with report_progress(
            f"Daytona sandbox of {self.source}", "creating the sandbox", show_after_s=SHORT_WAIT_S
        ) as progress:
            replica = _Replica(self._create())
            with self._lock:
                stopped = self._stopped
                if not stopped:
                    self._replicas[replica.sandbox.id] = replica
            if stopped:  # stop() ran meanwhile, without this sandbox
                self._delete(replica)
                raise ServerStartError("Stopped while starting.", runtime="daytona")
            progress.stage("starting the server")
            server.launch(replica.sandbox, self.command, secrets=self._secrets, cwd=self.workdir)
            link = replica.sandbox.get_preview_link(self.port)
            replica.url, replica.token = str(link.url).rstrip("/"), str(link.token)
            progress.stage("waiting for /health")
            why = server.wait_healthy(
                replica.sandbox, replica.url, replica.token, timeout_s=self.startup_timeout_s,
                progress=progress, stopped=lambda: self._stopped,
            )  # fmt: skip
            if why:
                raise self._start_error(replica, why)
        return str(replica.sandbox.id)

    def _create(self) -> Any:
        from daytona import CreateSandboxFromImageParams, DaytonaError, Resources

        attempt = uuid.uuid4().hex
        given: dict[str, Any] = {k: v for k, v in self.resources.items() if v is not None}
        params = CreateSandboxFromImageParams(
            image=self.image, env_vars=self._env, labels={**self._labels(), START_LABEL: attempt},
            resources=Resources(**given) if given else None, auto_stop_interval=self.auto_stop,
            network_block_all=not self.network, public=self.public,
        )  # fmt: skip
        try:
            return self.client.create(params, timeout=self.startup_timeout_s)
        except DaytonaError as exc:
            self._delete_attempt(attempt)
            raise ServerStartError(
                f"Daytona did not start a sandbox of {self.image}: {exc}",
                runtime="daytona",
                command=f"create(image={self.image!r}, network_block_all={not self.network})",
                hint="Daytona must be able to pull the image; read the reason above.",
            ) from None

    def _delete_attempt(self, attempt: str) -> None:
        from daytona import ListSandboxesQuery

        query = ListSandboxesQuery(labels={START_LABEL: attempt})
        with contextlib.suppress(Exception):
            for sandbox in list(self.client.list(query)):
                self.client.delete(sandbox)

    def _labels(self) -> dict[str, str]:
        return {
            MANAGED_LABEL: "true",
            OWNER_LABEL: labels.owner_id(),
            "openenv-hub-runtime": "daytona",
            "openenv-hub-source": label_value(self.source),
        }

    def _start_error(self, replica: _Replica, why: str) -> ServerStartError:
        sandbox = replica.sandbox
        state = str(getattr(sandbox.state, "value", sandbox.state))
        reason = f", {sandbox.error_reason}" if sandbox.error_reason else ""
        return ServerStartError(
            f"The server in sandbox {sandbox.id} of {self.source} {why} (sandbox {state}{reason}).",
            runtime="daytona",
            command=server.launch_line(self.command),
            logs="\n".join(server.last_lines(sandbox, 40)),
            url=replica.url or None,
            hint=f"Read the log above; the server must listen on $PORT ({self.port}) and "
            "answer /health.",
        )

    def __repr__(self) -> str:
        return f"DaytonaProvider({self.source}, sandboxes={self.sandbox_ids})"


#: What starting sandboxes takes.
OPTIONS = frozenset(
    {"replicas", "port", "env", "secrets", "command", "cpu", "memory", "disk", "network",
     "auto_stop", "public", "startup_timeout_s", "replace_failed", "api_key",
     "api_url", "target"}
)  # fmt: skip


class DaytonaRuntime(RuntimeBase):
    """Daytona sandboxes; see the module."""

    name = "daytona"
    summary = "Daytona sandboxes (the image; its server reached through the preview URL)"
    inventory = "openenv_hub.runtimes.daytona_inventory:SandboxInventory"
    options = {"image": OPTIONS, "space": OPTIONS | {"base_image", "build_args"}}

    def start_image(self, image: str, **options: Any) -> DaytonaProvider:
        return DaytonaProvider.start(image, **options)

    def start_space(self, space: SpaceRef, **options: Any) -> DaytonaProvider:
        from openenv_hub.model.manifest import load_manifest
        from openenv_hub.runtimes.docker import build_space_image

        build = {key: options.pop(key) for key in ("base_image", "build_args") if key in options}
        source, tag = build_space_image(space, **build)
        manifest = load_manifest(source.path)
        options.setdefault("network", manifest.network)
        return DaytonaProvider.start(tag, source=source.repo_id, **options)
