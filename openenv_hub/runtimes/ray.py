"""The ``ray`` runtime: an environment served by N replicas on a Ray cluster, each a Ray actor
running uvicorn.

Each replica is a named actor in the ``openenv-hub`` namespace (``NAME-r0``, ``NAME-r1``, ...)
that serves the environment's app on its node's address with its own session capacity, so
clients connect to each replica directly (an :class:`~openenv_hub.EnvPool` spreads its sessions
over ``base_urls``). Ray restarts a replica whose process dies, up to ``max_restarts`` times, on
a new port; ``replicas()`` reports each one's state and restarts, and ``base_urls`` always lists
where the live replicas serve now.

The cluster is one you started (``ray start --head``, then ``ray start --address`` on other
nodes), given by ``address`` or ``$RAY_ADDRESS``, or the one this process already joined with
``ray.init()``. Replicas die with the process that started them unless ``detached=True``;
``openenv ps`` lists them and ``openenv stop`` removes them either way.

Example::

    with RayProvider.from_folder("envs/echo_env", replicas=2, address="127.0.0.2:6379") as ray_env:
        async with EnvPool(ray_env, size=32) as pool: ...

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import openenv_hub.runtimes.cleanup as cleanup
from openenv_hub.errors import ServerStartError
from openenv_hub.runtimes._ray_replica import ReplicaServer, ReplicaSpec
from openenv_hub.runtimes.base import ReplicaStatus, RuntimeBase, StopsOnExit
from openenv_hub.runtimes.ray_cluster import (
    NAMESPACE,
    actor_record,
    connect,
    ray_module,
    replica_infos,
)
from openenv_hub.support.deprecation import warn_renamed
from openenv_hub.support.progress import SHORT_WAIT_S, Progress, report_progress
from openenv_hub.transport.local_ports import wait_for_health

__all__ = ["NAMESPACE", "RayProvider", "RayRuntime", "ReplicaStatus", "connect", "ray_module"]

_Key = TypeVar("_Key")
logger = logging.getLogger("openenv_hub.runtimes.ray")


class RayProvider(StopsOnExit):
    """Replicas of an environment server as Ray actors; see the module's docstring."""

    runtime = "ray"
    restarts_replicas = True

    def __init__(self, name: str, handles: list[Any], *, address: str) -> None:
        self.name = name
        self.address = address
        self._handles = handles
        self._urls: dict[int, str] = {}
        self._restarts: dict[int, int] = {}
        self.events: list[str] = []  # replicas restarted by Ray, as they were noticed
        self._stopped = False

    @classmethod
    def start(
        cls,
        app: str,
        *,
        replicas: int = 2,
        address: str | None = None,
        env_dir: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        name: str | None = None,
        num_cpus: float = 1.0,
        max_restarts: int = 10,
        max_concurrent_envs: int | None = None,
        detached: bool = False,
        runtime_env: dict[str, Any] | None = None,
        startup_timeout_s: float = 120.0,
        max_sessions: int | None = None,
    ) -> RayProvider:
        """Start ``replicas`` actors serving ``app`` and return once each answers ``/health``.

        Args:
            app: The ASGI app as an import string, e.g. ``"echo_env.server.app:app"``.
            env_dir: A folder put on the replicas' ``sys.path`` (it must exist on every node
                that runs one; otherwise install the environment there, or use ``runtime_env``).
            env, secrets: Variables of the servers' environment (secrets are never printed).
            num_cpus: CPUs Ray reserves for each replica (one process drives one core).
            max_restarts: How often Ray restarts a replica whose process died (-1: always).
            max_concurrent_envs: Sessions each replica serves at once (``MAX_CONCURRENT_ENVS``;
                ``max_sessions`` is its deprecated name).
            detached: Keep the replicas when this process exits (stop them with
                ``openenv stop``).

        Raises:
            ClusterError: No cluster answers at ``address``.
            ServerStartError: A replica failed to start (with its error).
        """
        if max_sessions is not None:
            warn_renamed(
                "RayProvider.start(max_sessions=...)", "max_concurrent_envs=...", removed_in="0.2"
            )
            max_concurrent_envs = max_concurrent_envs or max_sessions
        cluster = connect(address)
        ray = ray_module()
        name = name or f"openenv-{app.split('.', 1)[0].replace('_', '-')}-{uuid.uuid4().hex[:8]}"
        variables = dict(env or {})
        if max_concurrent_envs:
            variables["MAX_CONCURRENT_ENVS"] = str(max_concurrent_envs)
        remote = ray.remote(ReplicaServer)
        handles = []
        for index in range(replicas):
            spec = ReplicaSpec(
                app=app,
                index=index,
                provider_name=name,
                source=app,
                owner_pid=os.getpid(),
                env_dir=str(Path(env_dir).resolve()) if env_dir else None,
                env=variables,
                secrets=dict(secrets or {}),
                startup_timeout_s=startup_timeout_s,
            )
            options: dict[str, Any] = {
                "name": f"{name}-r{index}",
                "namespace": NAMESPACE,
                "max_restarts": max_restarts,
                "num_cpus": num_cpus,
                "scheduling_strategy": "SPREAD",
            }
            if detached:
                options["lifetime"] = "detached"
            if runtime_env:
                options["runtime_env"] = runtime_env
            handles.append(remote.options(**options).remote(spec))
        provider = cls(name, handles, address=cluster)
        cleanup.track(provider)
        provider._wait_started(startup_timeout_s, cpus=replicas * num_cpus)
        return provider

    @classmethod
    def from_folder(cls, path: Path | str, **options: Any) -> RayProvider:
        """Serve the environment folder ``path`` (its manifest names the app and variables)."""
        from openenv_hub.model.manifest import load_manifest

        manifest = load_manifest(path)
        variables = {key: str(value) for key, value in manifest.variables.items()}
        options["env"] = {**variables, **(options.get("env") or {})}
        options.setdefault("max_concurrent_envs", manifest.max_concurrent_envs)
        options.setdefault(
            "name", f"openenv-{manifest.name.replace('_', '-')}-{uuid.uuid4().hex[:8]}"
        )
        return cls.start(manifest.app_path, env_dir=Path(path).resolve(), **options)

    @classmethod
    def attach(cls, name: str, *, address: str | None = None) -> RayProvider:
        """The replicas started under ``name`` (by any process), to watch or stop them.

        Raises:
            LookupError: No replica of that name runs on the cluster.
        """
        cluster = connect(address)
        ray = ray_module()
        names = sorted(
            (n for n in replica_names() if n.rpartition("-r")[0] == name),
            key=lambda n: int(n.rpartition("-r")[2]),
        )
        if not names:
            raise LookupError(name)
        handles = [ray.get_actor(n, namespace=NAMESPACE) for n in names]
        return cls(name, handles, address=cluster)

    def _wait_started(self, timeout_s: float, *, cpus: float = 0.0) -> None:
        ray = ray_module()
        count = len(self._handles)
        try:
            with report_progress(
                f"Ray replicas of {self.name}", f"placing {count} replicas"
            ) as progress:
                infos = _placed(ray, [h.info.remote() for h in self._handles], timeout_s, progress)
                for info in infos:
                    self._urls[info["index"]] = info["url"]
                    progress.stage(f"waiting for /health of replica {info['index'] + 1} of {count}")
                    wait_for_health(info["url"], timeout_s=timeout_s, progress=progress)
        except Exception as exc:
            short = _cpu_shortage(ray, exc, cpus) if cpus else None
            self.stop()
            if short is not None:
                raise ServerStartError(
                    f"The {len(self._handles)} replicas of {self.name} were not placed within "
                    f"{timeout_s:g} s: {short}",
                    runtime=self.runtime,
                    hint="Start fewer replicas or ask fewer CPUs of each (num_cpus), add "
                    "nodes, or stop what holds the CPUs ('openenv ps --ray' lists the "
                    "replicas of this toolkit).",
                ) from None
            raise ServerStartError(
                f"A replica of {self.name} did not start: {_first_line(exc)}",
                runtime=self.runtime,
                logs=_cause(exc),
                hint="Is the environment installed on every node (or its folder there)? "
                "Read the error above.",
            ) from None

    # -- status ------------------------------------------------------------------------

    def details(self) -> list[str]:
        return [f"Name  {self.name}  (openenv ps --ray lists it; openenv stop {self.name})"]

    def replicas(self, *, timeout_s: float = 5.0) -> list[ReplicaStatus]:
        """Each replica's state, URL and restarts; notes restarts in ``events``."""
        records = [actor_record(h._actor_id.hex()) for h in self._handles]
        alive = [i for i, r in enumerate(records) if r.get("State", "ALIVE") == "ALIVE"]
        infos = replica_infos({i: self._handles[i] for i in alive}, timeout_s)
        statuses = []
        for index, record in enumerate(records):
            info = infos.get(index, {})
            if info:
                self._urls[index] = info["url"]
            restarts = int(record.get("NumRestarts", 0))
            self._note_restarts(index, restarts, info.get("url", ""))
            statuses.append(
                ReplicaStatus(
                    index=index,
                    name=f"{self.name}-r{index}",
                    state=str(record.get("State", "ALIVE" if info else "UNKNOWN")),
                    url=str(info.get("url", "")),
                    pid=info.get("pid") or record.get("Pid") or None,
                    node_ip=str(info.get("node_ip", "")),
                    restarts=restarts,
                )
            )
        return statuses

    def _note_restarts(self, index: int, restarts: int, url: str) -> None:
        if restarts > self._restarts.get(index, 0):
            where = f", now at {url}" if url else ""
            event = (
                f"Replica {index} of {self.name} was restarted by Ray ({restarts} so far){where}"
            )
            self.events.append(event)
            logger.warning("%s", event)
        self._restarts[index] = max(restarts, self._restarts.get(index, 0))

    @property
    def base_urls(self) -> list[str]:
        """The URLs of the replicas that answer now (a restarted one at its new port)."""
        if self._stopped:
            return []
        return [status.url for status in self.replicas() if status.url]

    @property
    def base_url(self) -> str:
        urls = self.base_urls
        if not urls:
            raise ServerStartError("No replica is running.", runtime=self.runtime)
        return urls[0]

    def wait_ready(self, *, timeout_s: float = 120.0) -> list[str]:
        """Wait until every replica answers ``/health`` (e.g. after Ray restarted one)."""
        deadline = time.monotonic() + timeout_s
        count = len(self._handles)
        with report_progress(
            f"Ray replicas of {self.name}", "asking for their state", show_after_s=SHORT_WAIT_S
        ) as progress:
            while True:
                statuses = self.replicas()
                urls = [s.url for s in statuses if s.state == "ALIVE" and s.url]
                progress.stage(f"{len(urls)} of {count} replicas running")
                if len(urls) == count:
                    progress.stage("waiting for /health")
                    for url in urls:
                        left = max(1.0, deadline - time.monotonic())
                        wait_for_health(url, timeout_s=left, progress=progress)
                    return urls
                if time.monotonic() > deadline:
                    states = ", ".join(f"r{s.index}: {s.state}" for s in statuses)
                    raise ServerStartError(
                        f"Not every replica of {self.name} runs after {timeout_s:g} s ({states}).",
                        runtime=self.runtime,
                        logs=self.logs(40),
                    )
                time.sleep(0.2)

    def logs(self, tail_lines: int = 200) -> str:
        """The last lines each live replica logged, prefixed with its index."""
        ray = ray_module()
        lines: list[str] = []
        for index, handle in enumerate(self._handles):
            with contextlib.suppress(Exception):
                text = ray.get(handle.logs.remote(tail_lines), timeout=5)
                lines += [f"[r{index}] {line}" for line in str(text).splitlines()]
        return "\n".join(lines[-tail_lines:])

    def stop(self) -> None:
        """Kill every replica (no restart); idempotent."""
        if self._stopped:
            return
        self._stopped = True
        cleanup.untrack(self)
        with contextlib.suppress(Exception):
            ray = ray_module()
            for handle in self._handles:
                with contextlib.suppress(Exception):
                    ray.kill(handle, no_restart=True)


def replica_names() -> list[str]:
    """The names of every replica actor in the ``openenv-hub`` namespace."""
    ray = ray_module()
    return sorted(
        entry["name"]
        for entry in ray.util.list_named_actors(all_namespaces=True)
        if entry.get("namespace") == NAMESPACE
    )


def _placed(ray: Any, refs: list[Any], timeout_s: float, progress: Progress) -> list[Any]:
    """What ``refs`` return, once every replica started; the progress says how many did.

    Raises:
        GetTimeoutError: Not all of them started within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    pending = list(refs)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ray.exceptions.GetTimeoutError(f"{len(pending)} replicas did not start")
        _, pending = ray.wait(pending, num_returns=len(pending), timeout=min(0.5, left))
        started = len(refs) - len(pending)
        progress.stage(f"placing {len(refs)} replicas ({started} started)")
    return list(ray.get(refs))


def _cpu_shortage(ray: Any, exc: Exception, cpus: float) -> str | None:
    """For a wait that timed out on a cluster without the CPUs asked for: how many were asked
    for and how many are free (None when that is not why)."""
    if not isinstance(exc, ray.exceptions.GetTimeoutError):
        return None
    free = float(ray.available_resources().get("CPU", 0.0))
    total = float(ray.cluster_resources().get("CPU", 0.0))
    if free >= cpus:
        return None
    return (
        f"they ask for {cpus:g} CPUs in all, and the cluster has {total:g}, of which {free:g} "
        "are free now (besides those the replicas that did start hold)."
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _cause(exc: BaseException) -> str:
    return "\n".join(str(exc).splitlines()[-20:])


#: What starting replicas takes (:meth:`RayProvider.from_folder`).
REPLICA_OPTIONS = frozenset(
    {"replicas", "address", "env", "secrets", "name", "num_cpus", "max_restarts",
     "max_concurrent_envs", "detached", "runtime_env", "startup_timeout_s"}
)  # fmt: skip


class RayRuntime(RuntimeBase):
    """Replicas of an environment folder's server on a Ray cluster; see the module."""

    name = "ray"
    summary = "N replicas on the Ray cluster at address= (or $RAY_ADDRESS)"
    inventory = "openenv_hub.runtimes.ray_inventory:ReplicaInventory"
    options = {"folder": REPLICA_OPTIONS}

    def start_folder(self, path: Path, **options: Any) -> RayProvider:
        return RayProvider.from_folder(path, **options)
