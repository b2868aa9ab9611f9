"""LocalHub's Jobs: each Job a container on the local Docker engine, as the Hub runs them.

A Job is ``SCHEDULING`` while its image is made ready (a Space's image is built from the
Space's Dockerfile at the commit asked for, as LocalHub builds Spaces; a Docker image must be
on the engine or pullable), ``RUNNING`` once its container started, and then ``COMPLETED``
(exit code 0), ``ERROR`` (another exit code, a failed build, a missing image, or its timeout
passed) or ``CANCELED``. A finished Job's container is removed and its log kept.

The engine has no bridge network here, so containers use the host network: each exposed port
``P`` is served on a free port of 127.0.0.1, which the container is told as ``PORT`` (the first
exposed port; a Space's server listens on ``$PORT``). LocalHub's expose proxy
(``jobs_proxy.py``) maps ``/_localhub/expose/<job_id>--P`` to it. Variables and secrets reach the
container through the Engine API as its environment, never a command line; secret values are
never returned by the API nor written to a log.

Every container is labelled as this process's (``openenv-hub.runtime=localhub-job``), so the
reaper of the process running LocalHub removes it if that process is killed.

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import secrets as random_secrets
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import iso_time
from .errors import HubError
from .space_images import BuildFailed, build_space_image
from .space_runtime import LogLine
from .storage import RepoKey, RepoStore

if TYPE_CHECKING:
    from openenv_hub.docker.engine import Container

__all__ = ["HARDWARE", "TERMINAL", "Job", "JobRunner", "JobSpec"]

logger = logging.getLogger("openenv_hub.localhub")

TERMINAL = frozenset({"COMPLETED", "CANCELED", "ERROR", "DELETED"})
RUNTIME_LABEL = "localhub-job"


def _flavor(name: str, pretty: str, cpu: str, ram: str, usd_per_hour: float) -> dict[str, Any]:
    per_minute = usd_per_hour / 60
    return {
        "name": name, "prettyName": pretty, "cpu": cpu, "ram": ram,
        "ephemeralStorage": "50 GB", "accelerator": None,
        "unitCostMicroUSD": round(per_minute * 1_000_000), "unitCostUSD": round(per_minute, 6),
        "unitLabel": "minute",
    }  # fmt: skip


#: The flavors LocalHub offers, with prices in the shape the Hub lists them (illustrative:
#: every flavor runs the same container here, without an accelerator).
HARDWARE: list[dict[str, Any]] = [
    _flavor("cpu-basic", "CPU Basic", "2 vCPU", "16 GB", 0.01),
    _flavor("cpu-upgrade", "CPU Upgrade", "8 vCPU", "32 GB", 0.03),
    _flavor("t4-small", "Nvidia T4 - small", "4 vCPU", "15 GB", 0.40),
    _flavor("a10g-small", "Nvidia A10G - small", "4 vCPU", "15 GB", 1.00),
    _flavor("a100-large", "Nvidia A100 - large", "12 vCPU", "142 GB", 2.50),
]
_FLAVORS = {flavor["name"] for flavor in HARDWARE}
_LABEL_KEY = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9._-]{0,100}$")


@dataclass(frozen=True)
class JobSpec:
    """What was asked for: the image (a Docker image, or a Space at a revision), the command,
    the environment, the flavor, the timeout, labels and exposed ports."""

    docker_image: str | None
    space_id: str | None
    command: list[str]
    arguments: list[str]
    environment: dict[str, str]
    secrets: dict[str, str]
    flavor: str
    timeout_s: int | None
    labels: dict[str, str]
    ports: list[int]
    ports_public: list[int]

    @classmethod
    def parse(cls, body: Mapping[str, Any]) -> JobSpec:
        """The spec of a ``POST /api/jobs/{namespace}`` body.

        Raises:
            HubError: 400 naming what is wrong (no image, an unknown flavor, a bad label...).
        """
        docker_image, space_id = body.get("dockerImage"), body.get("spaceId")
        if bool(docker_image) == bool(space_id):
            raise HubError.bad_request("A Job needs one of dockerImage or spaceId.")
        flavor = str(body.get("flavor") or "cpu-basic")
        if flavor not in _FLAVORS:
            raise HubError.bad_request(
                f"Unknown flavor {flavor!r}; use one of {', '.join(sorted(_FLAVORS))}."
            )
        labels = {str(k): str(v) for k, v in (body.get("labels") or {}).items()}
        bad = [k for k, v in labels.items() if not (_LABEL_KEY.match(k) and _LABEL_VALUE.match(v))]
        if bad:
            raise HubError.bad_request(
                f"Invalid label {bad[0]!r}: keys and values are at most 100 letters, digits, "
                "dashes and underscores."
            )
        expose = body.get("expose") or {}
        ports = [int(p) for p in expose.get("ports") or []]
        public = [int(p) for p in expose.get("portsPublic") or []]
        timeout = body.get("timeoutSeconds")
        return cls(
            docker_image=docker_image, space_id=space_id,
            command=[str(c) for c in body.get("command") or []],
            arguments=[str(a) for a in body.get("arguments") or []],
            environment={str(k): str(v) for k, v in (body.get("environment") or {}).items()},
            secrets={str(k): str(v) for k, v in (body.get("secrets") or {}).items()},
            flavor=flavor, timeout_s=int(timeout) if timeout else None, labels=labels,
            ports=list(dict.fromkeys([*ports, *public])), ports_public=public,
        )  # fmt: skip

    def with_expose(self, ports: list[int], public: list[int]) -> JobSpec:
        from dataclasses import replace

        return replace(self, ports=list(dict.fromkeys([*ports, *public])), ports_public=public)


@dataclass
class Job:
    """One Job: its spec, owner, stage, container and log."""

    id: str
    namespace: str
    spec: JobSpec
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    stage: str = "SCHEDULING"
    message: str | None = None
    container: Container | None = None
    host_ports: dict[int, int] = field(default_factory=dict)
    log: list[LogLine] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.stage in TERMINAL


class JobRunner:
    """Runs LocalHub's Jobs on the Docker engine; see the module.

    Args:
        store: The repos (Space images are built from them).
        build_args: Docker build arguments of Space images.
        poll_s: How often running containers are checked for their end and their timeout.
    """

    def __init__(
        self,
        store: RepoStore,
        *,
        build_args: Mapping[str, str] | None = None,
        wheelhouse: Path | None = None,
        poll_s: float = 0.5,
    ) -> None:
        self.store = store
        self.build_args = dict(build_args or {})
        self.wheelhouse = wheelhouse
        self.poll_s = poll_s
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._starts = ThreadPoolExecutor(max_workers=4, thread_name_prefix="localhub-job")
        self._monitor = threading.Thread(target=self._watch, name="localhub-jobs", daemon=True)
        self._monitor.start()

    # -- what the API asks -------------------------------------------------------------------

    def create(self, namespace: str, spec: JobSpec) -> Job:
        """Schedule a Job; its container starts in a worker thread."""
        job = Job(id=random_secrets.token_hex(12), namespace=namespace, spec=spec)
        with self._lock:
            self._jobs[job.id] = job
        self._starts.submit(self._start, job)
        return job

    def get(self, namespace: str, job_id: str) -> Job:
        """The Job ``job_id`` of ``namespace``.

        Raises:
            HubError: 404 if there is no such Job there.
        """
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None or job.namespace != namespace:
            raise HubError(404, f"Job not found: {namespace}/{job_id}")
        return job

    def of_namespace(self, namespace: str) -> list[Job]:
        with self._lock:
            return [job for job in self._jobs.values() if job.namespace == namespace]

    def find(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def cancel(self, job: Job) -> None:
        """Stop the Job (nothing happens to a finished one)."""
        self._finish(job, "CANCELED", None)

    def expose(self, job: Job, ports: list[int], public: list[int]) -> None:
        """Replace the exposed ports; a port new to a running Job gets no server (it is told
        its ports when it starts)."""
        job.spec = job.spec.with_expose(ports, public)

    def logs(self, job: Job) -> list[LogLine]:
        """The Job's log so far: the start line, the build's lines (a Space), its output."""
        container = job.container
        if container is None or job.finished:
            return list(job.log)
        return list(job.log) + _container_log(container)

    def upstream(self, job: Job, port: int) -> str | None:
        """Where the container serves the exposed ``port``, while the Job runs."""
        host_port = job.host_ports.get(port)
        if job.stage != "RUNNING" or host_port is None or port not in job.spec.ports:
            return None
        return f"http://127.0.0.1:{host_port}"

    def close(self) -> None:
        """Cancel every Job still running and remove its container (LocalHub is stopping)."""
        self._closed.set()
        self._starts.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            self.cancel(job)
        self._monitor.join(timeout=5)

    # -- work, in worker threads ----------------------------------------------------------------

    def _start(self, job: Job) -> None:
        job.log.append(LogLine(iso_time(), f"===== Job started at {iso_time()} ====="))
        try:
            image = self._image(job)
            container = self._run(job, image)
        except (BuildFailed, HubError) as exc:
            self._finish(job, "ERROR", str(exc))
            return
        except Exception as exc:  # an engine failure is the Job's, never LocalHub's
            logger.exception("Starting Job %s failed", job.id)
            self._finish(job, "ERROR", f"{type(exc).__name__}: {exc}")
            return
        with self._lock:
            canceled = job.finished
            if not canceled:
                job.container, job.stage, job.started_at = container, "RUNNING", time.time()
        if canceled:
            _remove(container)

    def _image(self, job: Job) -> str:
        spec = job.spec
        if spec.docker_image:
            from openenv_hub.docker import docker_client, image_config

            try:
                image_config(docker_client(), spec.docker_image, pull="missing")
            except Exception as exc:
                raise HubError(404, f"Image {spec.docker_image} not found: {exc}") from None
            return spec.docker_image
        key, revision = _space_of(str(spec.space_id))
        if not self.store.exists(key):
            raise HubError(404, f"Space {key.repo_id} not found.")
        commit = self.store.git(key).resolve(revision)
        if commit is None:
            raise HubError(404, f"Space {key.repo_id} has no revision {revision!r}.")
        return self._space_image(key, commit, job)

    def _space_image(self, key: RepoKey, commit: str, job: Job) -> str:
        """The Space's image at ``commit``, built as LocalHub builds Spaces (no network) when
        it is not there yet; its lines go to the Job's log."""
        from openenv_hub.docker import docker_client, space_image_tag

        tag = space_image_tag(key.repo_id, commit, prefix="localhub-space")
        client = docker_client()
        if client.images.list(name=tag):
            return tag
        archive = self.store.git(key).run("archive", "--format=tar", commit)
        build_space_image(
            client, archive, tag, self.build_args,
            lambda line: job.log.append(LogLine(iso_time(), line)),
            wheelhouse=self.wheelhouse,
        )  # fmt: skip
        return tag

    def _run(self, job: Job, image: str) -> Container:
        from openenv_hub.docker import container_name, create_container, docker_client
        from openenv_hub.runtimes import cleanup, labels
        from openenv_hub.transport.local_ports import free_port

        spec = job.spec
        job.host_ports = {port: free_port() for port in spec.ports}
        environment = {**spec.environment, **spec.secrets, "JOB_ID": job.id}
        if spec.ports:
            environment["PORT"] = str(job.host_ports[spec.ports[0]])
        command = [*spec.command, *spec.arguments] or None
        cleanup.ensure_reaper()
        container = create_container(
            docker_client(), image, name=container_name(image),
            environment=environment,
            labels=labels.labels_for(RUNTIME_LABEL, source=image, job=job.id),
            host_network=True, ports={}, command=command,
        )  # fmt: skip
        container.start()
        return container

    def _watch(self) -> None:
        while not self._closed.wait(self.poll_s):
            with self._lock:
                running = [job for job in self._jobs.values() if job.stage == "RUNNING"]
            for job in running:
                with contextlib.suppress(Exception):
                    self._check(job)

    def _check(self, job: Job) -> None:
        timeout_s = job.spec.timeout_s
        if timeout_s and job.started_at and time.time() - job.started_at > timeout_s:
            self._finish(job, "ERROR", f"Job timed out after {timeout_s} s")
            return
        container = job.container
        if container is None:
            return
        container.reload()
        if container.status in ("exited", "dead"):
            code = int(container.attrs.get("State", {}).get("ExitCode", -1))
            stage = "COMPLETED" if code == 0 else "ERROR"
            self._finish(job, stage, None if code == 0 else f"Exited with code {code}")

    def _finish(self, job: Job, stage: str, message: str | None) -> None:
        """Move ``job`` to the terminal ``stage`` (once), keep its log, remove its container."""
        with self._lock:
            if job.finished:
                return
            job.stage, job.message, job.finished_at = stage, message, time.time()
            container, job.container = job.container, None
        if container is not None:
            job.log.extend(_container_log(container))
            _remove(container)


def _space_of(space_id: str) -> tuple[RepoKey, str]:
    """The Space and revision of a Job's ``spaceId`` (``NS/NAME`` or ``NS/NAME@REVISION``)."""
    repo_id, _, revision = space_id.partition("@")
    namespace, _, name = repo_id.strip("/").partition("/")
    if not namespace or not name or "/" in name:
        raise HubError.bad_request(f"spaceId must be 'namespace/name[@revision]', not {space_id!r}")
    return RepoKey("space", namespace, name), revision or "main"


def _container_log(container: Container) -> list[LogLine]:
    try:
        raw: bytes = container.logs(timestamps=True)
    except Exception:
        return []
    lines = []
    for line in raw.decode(errors="replace").splitlines():
        stamp, _, text = line.partition(" ")
        lines.append(LogLine(_log_time(stamp), text))
    return lines


def _log_time(stamp: str) -> str:
    """The engine's RFC 3339 time of a log line (nanoseconds, trailing zeros cut) as the Hub
    writes times."""
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    try:
        moment = dt.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return iso_time()
    return iso_time(moment.timestamp() + float(f"0.{fraction or 0}"))


def _remove(container: Container) -> None:
    with contextlib.suppress(Exception):
        container.remove(force=True)
