"""The ``jobs`` runtime: environment servers as Hugging Face Jobs, each the Space's image (or
any image) with the server's port exposed through the Jobs proxy.

``from_hub("NS/NAME", runtime="jobs", flavor="cpu-basic")`` runs the Space's image (at the
commit ``revision`` names, when given) as a Job, waits until ``/health`` answers through the
proxy, and connects. The port is token-protected unless ``public=True``: the client sends the
token in the handshake's ``Authorization`` header (:attr:`JobsProvider.headers`), never in a
URL. Variables and secrets reach the Job as its environment and its secrets, never its command.

``replicas=N`` runs N Jobs; :attr:`JobsProvider.base_urls` lists those still running, so an
``EnvPool`` over the provider moves the sessions of a Job that ended to the others on its next
``reset_all()``; :meth:`JobsProvider.failures` says which ended and why (stage, message, last
log lines), and :meth:`JobsProvider.replace` (or ``replace_failed=True``) starts another.
``warm=N`` starts N more Jobs ahead that wait, answering, until :meth:`JobsProvider.take` (or
a replacement) hands one out; another is then started ahead in its place.

Closing the client (or ``stop()``, or the end of the interpreter) cancels the Jobs; if the
process is killed, its Jobs reaper (:mod:`openenv_hub.runtimes._jobs_reaper`) cancels them.
Every Job is labelled (``openenv-hub=true``, the owner, the source) so ``openenv ps --jobs``
lists them and ``openenv stop --jobs`` cancels them.

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

import openenv_hub.runtimes.cleanup as cleanup
import openenv_hub.runtimes.labels as labels
from openenv_hub.errors import ConfigurationError, ServerStartError
from openenv_hub.runtimes._jobs_reaper import OWNER_LABEL, watch_jobs
from openenv_hub.runtimes.base import RuntimeBase, SpaceRef, StopsOnExit

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "JOBS_PROXY_HOSTS",
    "MANAGED_LABEL",
    "JobsProvider",
    "JobsRuntime",
    "ReplicaFailure",
]

#: A Job's longest run unless ``timeout`` says otherwise: an hour, so a forgotten one stops.
DEFAULT_TIMEOUT_S = 3600
#: The names the Jobs proxy serves exposed ports at (``https://ID--PORT.hf.jobs``), which a
#: server must answer (it refuses other ``Host`` names than addresses and its own: see
#: :mod:`openenv_hub.server.browsers`); ``env`` may say otherwise.
JOBS_PROXY_HOSTS = ".hf.jobs"
#: The label of every Job this toolkit runs (``openenv-hub=true``).
MANAGED_LABEL = "openenv-hub"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class ReplicaFailure:
    """A Job of the provider that ended: its stage, the Hub's message and its last log lines."""

    job_id: str
    stage: str
    message: str | None
    last_lines: tuple[str, ...]

    def __str__(self) -> str:
        said = f": {self.message}" if self.message else ""
        tail = "\n".join(f"  {line}" for line in self.last_lines)
        return f"Job {self.job_id} is {self.stage}{said}" + (f"\n{tail}" if tail else "")


def timeout_seconds(timeout: int | float | str | None) -> int:
    """``timeout`` (seconds, or ``"30m"``, ``"2h"``...) in seconds; the default when None."""
    if timeout is None:
        return DEFAULT_TIMEOUT_S
    text = str(timeout).strip()
    factor = _UNITS.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in _UNITS else text
    try:
        seconds = int(float(number) * factor)
    except ValueError:
        seconds = 0
    if seconds <= 0:
        raise ConfigurationError(
            f"timeout={timeout!r} is not a duration; give seconds or e.g. '30m', '2h'."
        )
    return seconds


class JobsProvider(StopsOnExit):
    """Environment servers running as Jobs; see the module."""

    runtime = "jobs"

    def __init__(
        self, client: Any, image: str, *, port: int = 8000, flavor: str = "cpu-basic",
        timeout: int | float | str | None = None, env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None, public: bool = False,
        startup_timeout_s: float = 300.0, replace_failed: bool = False, source: str = "",
        detached: bool = False, warm: int = 0,
    ) -> None:  # fmt: skip
        self.client = client
        self.image = image
        self.port = port
        self.flavor = flavor
        self.timeout_s = timeout_seconds(timeout)
        self._env = {"OPENENV_ALLOWED_HOSTS": JOBS_PROXY_HOSTS, **(env or {}), "PORT": str(port)}
        self._secrets = dict(secrets or {})
        self.public = public
        self.startup_timeout_s = startup_timeout_s
        self.replace_failed = replace_failed
        self.source = source or image
        #: Left running when this process ends (until their timeout, or ``openenv stop``).
        self.detached = detached
        self.job_ids: list[str] = []
        #: Jobs started ahead and already answering, handed out by :meth:`take`.
        self.warm_ids: list[str] = []
        self.warm = warm
        self._refills: list[threading.Thread] = []
        self._urls: dict[str, str] = {}
        self._ended: dict[str, ReplicaFailure] = {}
        self._stopped = False
        self._lock = threading.RLock()

    @classmethod
    def start(cls, client: Any, image: str, *, replicas: int = 1, **options: Any) -> JobsProvider:
        """Run ``replicas`` Jobs of ``image`` and return once each answers ``/health``.

        Raises:
            ServerStartError: A Job ended or did not answer in time (its stage and last log
                lines are in the message); every Job started is cancelled then.
        """
        if replicas < 1:
            raise ConfigurationError(f"replicas must be at least 1, not {replicas}.")
        provider = cls(client, image, **options)
        if not provider.detached:
            cleanup.track(provider)
        try:
            provider._add(replicas + provider.warm)
            with provider._lock:  # the last ones wait, warm, for take()
                if provider.warm:
                    provider.warm_ids = provider.job_ids[-provider.warm :]
                    provider.job_ids = provider.job_ids[: -provider.warm]
        except BaseException:
            provider.stop()
            raise
        return provider

    @classmethod
    def from_hub(
        cls, repo_id: str, *, revision: str | None = None, token: str | None = None,
        endpoint: str | None = None, **options: Any,
    ) -> JobsProvider:  # fmt: skip
        """Run the Space ``repo_id`` as Jobs (``replicas``, ``flavor``, ... as for
        ``from_hub(runtime="jobs")``), for an ``EnvPool``::

            with JobsProvider.from_hub("alice/echo_env", replicas=2) as jobs:
                async with EnvPool(jobs, size=16) as pool: ...
        """
        space = SpaceRef(repo_id, revision, token, endpoint)
        return JobsRuntime().start_space(space, **options)

    # -- what clients and pools read ---------------------------------------------------------

    @property
    def headers(self) -> dict[str, str]:
        """What a client sends with each connection: the token, unless the port is public."""
        return {} if self.public else {"Authorization": f"Bearer {self.client.token}"}

    @property
    def base_url(self) -> str:
        urls = self.base_urls
        return urls[0] if urls else self._urls[self.job_ids[0]]

    @property
    def base_urls(self) -> list[str]:
        """The URLs of the Jobs still running (with ``replace_failed``, ended ones replaced)."""
        if self.failures() and self.replace_failed and not self._stopped:
            for failure in list(self._ended.values()):
                if failure.job_id in self.job_ids:
                    self.replace(failure.job_id)
        with self._lock:
            return [self._urls[j] for j in self.job_ids if j not in self._ended]

    def failures(self) -> list[ReplicaFailure]:
        """The provider's Jobs that ended (asked of the Hub now)."""
        for job_id in list(self.job_ids):
            if job_id not in self._ended:
                state = self.client.inspect(job_id)
                if state.finished:
                    self._ended[job_id] = self._failure(state)
        return [self._ended[j] for j in self.job_ids if j in self._ended]

    def take(self) -> str:
        """One more replica, serving now: a warm Job if one waits (another is started ahead in
        its place, in the background), else a new one; return its URL."""
        with self._lock:
            job_id = self.warm_ids.pop(0) if self.warm_ids else None
            if job_id is not None:
                self.job_ids.append(job_id)
        if job_id is None:
            (job_id,) = self._add(1)
        else:
            refill = threading.Thread(target=self._refill, name="openenv-jobs-warm", daemon=True)
            self._refills.append(refill)
            refill.start()
        return self._urls[job_id]

    def wait_warm(self, timeout_s: float = 300.0) -> bool:
        """Wait until the warm pool is full again (after :meth:`take`); whether it is."""
        deadline = time.monotonic() + timeout_s
        for refill in list(self._refills):
            refill.join(max(0.0, deadline - time.monotonic()))
        return len(self.warm_ids) >= self.warm

    def _refill(self) -> None:
        with contextlib.suppress(Exception):
            (job_id,) = self._add(1, serving=False)
            with self._lock:
                if self._stopped:
                    self.client.cancel(job_id)
                else:
                    self.warm_ids.append(job_id)

    def replace(self, job_id: str) -> str:
        """Cancel the Job ``job_id`` (if it still runs) and put another in its place (a warm
        one if one waits); return the new Job's id once it answers."""
        self.client.cancel(job_id)
        new_url = self.take()
        new_id = next(j for j, url in self._urls.items() if url == new_url)
        with self._lock:
            if job_id in self.job_ids:
                self.job_ids.remove(job_id)
        return new_id

    def logs(self, tail_lines: int = 200) -> str:
        parts = []
        for job_id in self.job_ids:
            lines = self.client.logs(job_id, tail=tail_lines)
            parts.append(f"== Job {job_id} ==\n" + "\n".join(lines))
        return "\n".join(parts)

    def hourly_cost_usd(self) -> float | None:
        """What an hour of all the provider's Jobs costs (None if the flavor has no price)."""
        each = self.client.hourly_cost_usd(self.flavor)
        return None if each is None else each * len(self.job_ids)

    def stop(self) -> None:
        """Cancel every Job (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        cleanup.untrack(self)
        for job_id in [*self.job_ids, *self.warm_ids]:
            if job_id not in self._ended:
                with contextlib.suppress(Exception):  # the reaper tries again at the end
                    self.client.cancel(job_id)

    # -- starting ----------------------------------------------------------------------------

    def _add(self, count: int, *, serving: bool = True) -> list[str]:
        """Start ``count`` Jobs and wait until each answers (serving, or to be kept warm)."""
        if not self.detached:
            watch_jobs(self.client.endpoint, self.client.namespace, self.client.token)
        states = [self._run_one() for _ in range(count)]
        if serving:
            with self._lock:
                self.job_ids += [state.id for state in states]
        with ThreadPoolExecutor(max_workers=count) as pool:
            urls = list(pool.map(self._wait_healthy, states))
        with self._lock:
            self._urls.update({state.id: url for state, url in zip(states, urls, strict=True)})
        return [state.id for state in states]

    def _run_one(self) -> Any:
        return self.client.run(
            self.image, env=self._env, secrets=self._secrets, flavor=self.flavor,
            timeout_s=self.timeout_s, labels=self._labels(),
            expose=None if self.public else [self.port],
            expose_public=[self.port] if self.public else None,
        )  # fmt: skip

    def _labels(self) -> dict[str, str]:
        from openenv_hub.hub import job_label

        return {
            MANAGED_LABEL: "true",
            OWNER_LABEL: "detached" if self.detached else labels.owner_id(),
            "openenv-hub-runtime": "jobs",
            "openenv-hub-source": job_label(self.source),
        }

    def _wait_healthy(self, state: Any) -> str:
        """Poll the Job until its server answers ``/health`` through the proxy; its URL."""
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client(headers=self.headers, timeout=5.0, trust_env=False) as http:
            while time.monotonic() < deadline and not self._stopped:
                if state.finished:
                    raise self._start_error(state, f"ended before answering ({state.stage})")
                url = state.urls[0] if state.urls else None
                if state.stage == "RUNNING" and url and _answers(http, url, state):
                    return str(url)
                time.sleep(0.3)
                state = self.client.inspect(state.id)
        raise self._start_error(state, f"did not answer within {self.startup_timeout_s:g} s")

    def _failure(self, state: Any) -> ReplicaFailure:
        try:
            lines = tuple(self.client.logs(state.id, tail=20))
        except Exception:
            lines = ()
        return ReplicaFailure(state.id, state.stage, state.message, lines)

    def _start_error(self, state: Any, why: str) -> ServerStartError:
        failure = self._failure(state)
        said = f" ({state.message})" if state.message else ""
        return ServerStartError(
            f"Job {state.id} of {self.source} {why}{said}.",
            runtime="jobs",
            command=f"run_job(image={self.image!r}, flavor={self.flavor!r}, expose=[{self.port}])",
            logs="\n".join(failure.last_lines),
            url=state.urls[0] if state.urls else None,
            hint="Read the log above; the server must listen on $PORT and answer /health.",
        )

    def __repr__(self) -> str:
        return f"JobsProvider({self.source}, jobs={self.job_ids})"


def _answers(http: httpx.Client, url: str, state: Any) -> bool:
    """Whether ``/health`` answers 200; a refused token is an error at once."""
    try:
        response = http.get(f"{url}/health")
    except httpx.HTTPError:
        return False
    if response.status_code in (401, 403):
        raise ServerStartError(
            f"The Jobs proxy refused the token for Job {state.id} (HTTP {response.status_code}).",
            runtime="jobs",
            url=url,
            hint="Use a token that can read the Job's namespace, or public=True.",
        )
    return response.status_code == 200


#: What starting Jobs takes.
OPTIONS = frozenset(
    {"replicas", "flavor", "timeout", "env", "secrets", "public", "port", "startup_timeout_s",
     "replace_failed", "namespace", "detached", "warm"}
)  # fmt: skip


class JobsRuntime(RuntimeBase):
    """Jobs on Hugging Face compute; see the module."""

    name = "jobs"
    summary = "Jobs on Hugging Face compute (the Space's image, its port exposed)"
    inventory = "openenv_hub.runtimes.jobs_inventory:JobsInventory"
    options = {"space": OPTIONS, "image": OPTIONS | {"token", "endpoint"}}

    def start_space(self, space: SpaceRef, **options: Any) -> JobsProvider:
        from openenv_hub.hub import JobsClient

        namespace = options.pop("namespace", None)
        client = JobsClient(endpoint=space.endpoint, token=space.token, namespace=namespace)
        image = client.space_image(space.repo_id, space.revision)
        return JobsProvider.start(client, image, source=space.repo_id, **options)

    def start_image(self, image: str, **options: Any) -> JobsProvider:
        from openenv_hub.hub import JobsClient

        client = JobsClient(
            endpoint=options.pop("endpoint", None),
            token=options.pop("token", None),
            namespace=options.pop("namespace", None),
        )
        return JobsProvider.start(client, image, **options)
