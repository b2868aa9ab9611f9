"""LocalHub's Space runtime: Docker Spaces built and run as the Hub runs them.

After a change of a Docker Space's ``main`` (an API commit or a ``git push``) the Space is
``BUILDING``: its files at that commit are built with its Dockerfile (``BASE_IMAGE`` and other
build arguments as configured, since tests have no registry), then the image runs with the
Space's variables and secrets as environment (secrets never as build arguments, so never in
the build log) and ``PORT`` set, until ``/health`` answers: ``RUNNING``. A failed build is
``BUILD_ERROR`` with the failing step in ``errorMessage`` and the build log; a container that
does not come up is ``RUNTIME_ERROR`` with its log. Changing variables or secrets restarts the
app; pausing stops it. LocalHub proxies the app's URL to the container (``proxy.py``).

Builds run one at a time in a worker thread. Without a Docker engine (or the ``docker``
package) the runtime is off and says why (:attr:`SpaceRuntime.unavailable`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import tarfile
import tempfile
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import iso_time
from .storage import RepoKey, RepoStore

if TYPE_CHECKING:
    from openenv_hub.providers.docker import DockerProvider

logger = logging.getLogger("openenv_hub.testing.localhub")

__all__ = [
    "BuildFailed",
    "LogLine",
    "SpaceRuntime",
    "build_space_image",
    "engine_problem",
    "space_image_tag",
]

INTERMEDIATE = ("BUILDING", "APP_STARTING", "RUNNING_BUILDING", "RUNNING_APP_STARTING")


@dataclass(frozen=True)
class LogLine:
    timestamp: str
    data: str


@dataclass
class _Space:
    """What the runtime knows of one Space."""

    commit: str | None = None
    image: str | None = None
    app: DockerProvider | None = None
    build_log: list[LogLine] = field(default_factory=list)
    run_log: list[LogLine] = field(default_factory=list)


def engine_problem() -> str | None:
    """Why Spaces cannot run here (no ``docker`` package, no engine), or None."""
    try:
        from openenv_hub.providers.docker import docker_client

        docker_client().ping()
    except Exception as exc:
        return f"{exc}".strip() or type(exc).__name__
    return None


class SpaceRuntime:
    """Builds and runs LocalHub's Docker Spaces.

    Args:
        store: The repos.
        build_args: Docker build arguments, e.g. ``{"BASE_IMAGE": "python-offline:3.11"}``.
        startup_timeout_s: Time a Space's app gets to answer ``/health``.
    """

    def __init__(
        self,
        store: RepoStore,
        *,
        build_args: Mapping[str, str] | None = None,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.store = store
        self.build_args = dict(build_args or {})
        self.startup_timeout_s = startup_timeout_s
        self.unavailable = engine_problem()
        self._spaces: dict[RepoKey, _Space] = {}
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="localhub-space")

    @property
    def enabled(self) -> bool:
        return self.unavailable is None

    # -- events from the API --------------------------------------------------------------

    def changed(self, key: RepoKey) -> None:
        """``main`` of ``key`` may have moved: build and run the new commit."""
        if not self._is_docker_space(key):
            return
        commit = self.store.git(key).resolve("main")
        with self._lock:
            space = self._spaces.setdefault(key, _Space())
            if commit is None or commit == space.commit:
                return
            space.commit = commit
        self._set_stage(key, "BUILDING")
        self._executor.submit(self._build_and_run, key, commit)

    def restart(self, key: RepoKey) -> None:
        """Run the Space's image again (new variables or secrets, or a restart)."""
        with self._lock:
            space = self._spaces.get(key)
        if space is None or space.image is None or not self._is_docker_space(key):
            self.changed(key)
            return
        self._set_stage(key, "APP_STARTING")
        self._executor.submit(self._run, key, space.image)

    def pause(self, key: RepoKey) -> None:
        """Stop the app; its URL answers 503 from now on."""
        with self._lock:
            space = self._spaces.get(key)
        if space is not None:
            self._executor.submit(self._stop_app, space, self._detach(space))

    def forget(self, key: RepoKey) -> None:
        """The Space was deleted: stop its app."""
        with self._lock:
            space = self._spaces.pop(key, None)
        if space is not None:
            self._executor.submit(self._stop_app, space, self._detach(space))

    # -- what the API reads ---------------------------------------------------------------

    def app_url(self, key: RepoKey) -> str | None:
        with self._lock:
            space = self._spaces.get(key)
        app = space.app if space else None
        return app.base_url if app is not None else None

    def logs(self, key: RepoKey, *, build: bool) -> list[LogLine]:
        with self._lock:
            space = self._spaces.get(key)
        if space is None:
            return []
        if build:
            return list(space.build_log)
        if space.app is not None:
            return [LogLine(iso_time(), line) for line in space.app.logs(1000).splitlines()]
        return list(space.run_log)

    def close(self) -> None:
        """Stop every app (LocalHub is stopping)."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            spaces, self._spaces = list(self._spaces.values()), {}
        for space in spaces:
            self._stop_app(space)

    # -- work, in the worker thread ---------------------------------------------------------

    def _build_and_run(self, key: RepoKey, commit: str) -> None:
        space = self._spaces.get(key)
        if space is None or space.commit != commit:
            return  # deleted, or a newer commit is queued
        space.build_log = []
        tag = space_image_tag(key, commit)
        try:
            build_space_image(self.store, key, commit, self.build_args, space.build_log)
        except BuildFailed as failed:
            self._set_stage(key, "BUILD_ERROR", error=str(failed))
            return
        except Exception as exc:  # an engine failure is the Space's failure, never LocalHub's
            logger.exception("Building %s failed", key.repo_id)
            self._set_stage(key, "BUILD_ERROR", error=f"{type(exc).__name__}: {exc}")
            return
        space.image = tag
        self._run(key, tag)

    def _run(self, key: RepoKey, image: str) -> None:
        from openenv_hub.errors import ServerStartError
        from openenv_hub.providers.docker import DockerProvider

        space = self._spaces.get(key)
        if space is None:
            return
        for _ in range(3):  # again if variables or secrets changed while it started
            self._stop_app(space)
            variables, secrets = self._environment(key)
            try:
                space.app = DockerProvider.start(
                    image,
                    env=variables,
                    secrets=secrets,
                    pull="never",
                    runtime="localhub-space",
                    extra_labels={"openenv-hub.space": key.repo_id},
                    startup_timeout_s=self.startup_timeout_s,
                )
            except ServerStartError as exc:
                space.run_log = [LogLine(iso_time(), line) for line in exc.logs.splitlines()]
                self._set_stage(key, "RUNTIME_ERROR", error=str(exc))
                return
            if self._environment(key) == (variables, secrets):
                break
        self._set_stage(key, "RUNNING")

    def _environment(self, key: RepoKey) -> tuple[dict[str, str], dict[str, str]]:
        """The app's variables (with the ``SPACE_*`` ones the Hub sets) and its secrets."""
        meta = self.store.read_meta(key)
        variables = {k: v.value for k, v in meta.variables.items()}
        variables.update(
            SPACE_ID=key.repo_id, SPACE_AUTHOR_NAME=key.namespace, SPACE_REPO_NAME=key.name
        )
        return variables, {k: v.value for k, v in meta.secrets.items()}

    def _detach(self, space: _Space) -> DockerProvider | None:
        """Take the app out of service at once (the proxy stops routing to it)."""
        with self._lock:
            app, space.app = space.app, None
        return app

    def _stop_app(self, space: _Space, app: DockerProvider | None = None) -> None:
        app = app or self._detach(space)
        if app is not None:
            space.run_log = [LogLine(iso_time(), line) for line in app.logs(1000).splitlines()]
            app.stop()

    # -- helpers ----------------------------------------------------------------------------

    def _is_docker_space(self, key: RepoKey) -> bool:
        return key.type == "space" and self.store.exists(key) and self._sdk(key) == "docker"

    def _sdk(self, key: RepoKey) -> str | None:
        return self.store.read_meta(key).sdk

    def _set_stage(self, key: RepoKey, stage: str, *, error: str | None = None) -> None:
        with contextlib.suppress(FileNotFoundError), self.store.edit_meta(key) as meta:
            meta.stage, meta.next_stages, meta.error_message = stage, [], error

    def describe(self) -> dict[str, Any]:
        """For the banner and the control route: on or off, and why."""
        return {"enabled": self.enabled, "reason": self.unavailable, "buildArgs": self.build_args}


class BuildFailed(Exception):
    """A Space's image did not build; the message names the failing step."""


def space_image_tag(key: RepoKey, commit: str) -> str:
    """The tag of a Space's image at ``commit`` (shared by Spaces and Jobs)."""
    return f"localhub-space/{key.namespace}-{key.name}:{commit[:12]}".lower()


def build_space_image(
    store: RepoStore,
    key: RepoKey,
    commit: str,
    build_args: Mapping[str, str],
    log: list[LogLine],
    *,
    reuse: bool = False,
) -> str:
    """Build the Space's Dockerfile at ``commit`` (with ``reuse``, only if its image is not
    there yet); return the tag.

    Raises:
        BuildFailed: No Dockerfile, or a step failed (its lines are in ``log``).
    """
    from openenv_hub.docker import docker_client

    tag = space_image_tag(key, commit)
    client = docker_client()
    if reuse and client.images.list(name=tag):
        return tag
    archive = store.git(key).run("archive", "--format=tar", commit)
    with tempfile.TemporaryDirectory(prefix="localhub-build-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            _extract(tar, tmp)
        if not (Path(tmp) / "Dockerfile").is_file():
            raise BuildFailed("No Dockerfile at the root of the Space.")
        stream = client.api.build(
            path=tmp, tag=tag, buildargs=dict(build_args), network_mode="host",
            rm=True, forcerm=True, decode=True,
        )  # fmt: skip
        for chunk in stream:
            for line in str(chunk.get("stream", "")).splitlines():
                log.append(LogLine(iso_time(), line))
            if "error" in chunk:
                error = str(chunk["error"]).strip()
                log.append(LogLine(iso_time(), error))
                raise BuildFailed(f"Build failed: {error}")
    return tag


def _extract(tar: tarfile.TarFile, target: str) -> None:
    """Unpack a ``git archive`` (the data filter where this Python has it)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(target, filter="data")
    else:  # pragma: no cover - Python < 3.10.12
        tar.extractall(target)
