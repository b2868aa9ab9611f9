"""LocalHub's Space runtime: Docker Spaces built and run as the Hub runs them.

After a change of a Docker Space's ``main`` (an API commit or a ``git push``) the Space is
``BUILDING``: its files at that commit are built with its Dockerfile (``BASE_IMAGE`` and other
build arguments as configured, since tests have no registry), then the image runs with the
Space's variables and secrets as environment (secrets never as build arguments, so never in
the build log) and ``PORT`` set, until ``/health`` answers: ``RUNNING``. A failed build is
``BUILD_ERROR`` with the failing step in ``errorMessage`` and the build log; a container that
does not come up is ``RUNTIME_ERROR`` with its log. Changing variables or secrets restarts the
app; pausing stops it. LocalHub proxies the app's URL to the container (``proxy.py``).

Builds have no network (:mod:`.space_images`: packages come from a wheelhouse). Apps listen
on 127.0.0.1 only: in a network of their own with the port published on 127.0.0.1 where the
engine has a bridge network, else in the host's network with ``OPENENV_HOST=127.0.0.1`` (the
templates' servers bind ``$OPENENV_HOST``; an app that binds ``0.0.0.0`` regardless is reachable
from the network).

Builds run one at a time in a worker thread. Without a Docker engine (or the ``docker``
package) the runtime is off and says why (:attr:`SpaceRuntime.unavailable`).

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .clock import iso_time
from .redaction import redact_mapping
from .space_images import BuildFailed, build_space_image
from .storage import RepoKey, RepoMeta, RepoStore

if TYPE_CHECKING:
    from openenv_hub.runtimes import Provider

logger = logging.getLogger("openenv_hub.localhub")

__all__ = ["STOPPED", "LogLine", "SpaceRuntime", "engine_problem", "without_runtime"]

INTERMEDIATE = ("BUILDING", "APP_STARTING", "RUNNING_BUILDING", "RUNNING_APP_STARTING")
STOPPED = "STOPPED"
"""The stage of a Space that this LocalHub does not run (its runtime is off, or no engine
answers): not the Space's fault. The Hub reports STOPPED for a Space with no hardware running
that is not paused by its owner; ``errorMessage`` says why and what to do."""


def without_runtime(meta: RepoMeta, key: RepoKey) -> None:
    """Mark a new Space (not a static one) of a LocalHub whose Space runtime is off
    (``--no-spaces``, ``run_spaces=False``): ``STOPPED``, saying why, until a test scripts its stage or gives the
    URL of an app started for it (``LocalHub.set_space_runtime``)."""
    meta.stage = STOPPED
    meta.error_message = (
        f"LocalHub does not run Space apps ({key.repo_id}): its Space runtime is off "
        "(--no-spaces, or run_spaces=False). Start LocalHub without --no-spaces where a Docker "
        "engine answers, or serve the app yourself and give LocalHub its URL: "
        "LocalHub.set_space_runtime(repo_id, host=URL)."
    )


@dataclass(frozen=True)
class LogLine:
    timestamp: str
    data: str


@dataclass
class _Space:
    """What the runtime knows of one Space."""

    commit: str | None = None
    image: str | None = None
    app: Provider | None = None
    build_log: list[LogLine] = field(default_factory=list)
    run_log: list[LogLine] = field(default_factory=list)


def engine_problem() -> str | None:
    """Why Spaces cannot run here (no ``docker`` package, no engine) and what to do, or None."""
    try:
        from openenv_hub.docker import docker_client

        docker_client().ping()
    except Exception as exc:
        hint = str(getattr(exc, "hint", "") or "")
        return " ".join(part for part in (str(exc).strip() or type(exc).__name__, hint) if part)
    return None


class SpaceRuntime:
    """Builds and runs LocalHub's Docker Spaces.

    Args:
        store: The repos.
        build_args: Docker build arguments, e.g. ``{"BASE_IMAGE": "python-offline:3.11"}``.
        wheelhouse: A folder of wheels, the packages builds may install (they have no
            network; see :mod:`.space_images`).
        startup_timeout_s: Time a Space's app gets to answer ``/health``.
    """

    def __init__(
        self,
        store: RepoStore,
        *,
        build_args: Mapping[str, str] | None = None,
        wheelhouse: Path | None = None,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.store = store
        self.build_args = dict(build_args or {})
        self.wheelhouse = wheelhouse
        self._network_mode: Literal["host", "bridge"] | None = None
        self.startup_timeout_s = startup_timeout_s
        self.unavailable = engine_problem()
        self._spaces: dict[RepoKey, _Space] = {}
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="localhub-space")

    @property
    def enabled(self) -> bool:
        return self.unavailable is None

    def cannot_run(self, key: RepoKey) -> str:
        """Why this LocalHub cannot run the Space ``key``, and what to install or start."""
        return (
            f"LocalHub cannot run {key.repo_id}: it runs Spaces in Docker. {self.unavailable} "
            "Then restart LocalHub; or serve the app yourself and give LocalHub its URL: "
            "LocalHub.set_space_runtime(repo_id, host=URL)."
        )

    # -- events from the API --------------------------------------------------------------

    def added(self, key: RepoKey) -> None:
        """A new Space, or a copy of one: run it once it has a Dockerfile, as the Hub does."""
        git = self.store.git(key)
        commit = git.resolve("main")
        if not self.enabled or (commit is not None and git.entry(commit, "Dockerfile")):
            self.changed(key)

    def changed(self, key: RepoKey) -> None:
        """``main`` of ``key`` may have moved: build and run the new commit.

        Where no engine answers, the Space is ``STOPPED`` instead, its message saying why.
        """
        if not self._is_docker_space(key):
            return
        if not self.enabled:
            self._set_stage(key, STOPPED, error=self.cannot_run(key))
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
        if space is None or space.image is None or not self.enabled:
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
        from openenv_hub.docker import docker_client
        from openenv_hub.docker.build import space_image_tag

        space = self._spaces.get(key)
        if space is None or space.commit != commit:
            return  # deleted, or a newer commit is queued
        space.build_log = []
        tag = space_image_tag(key.repo_id, commit, prefix="localhub-space")
        archive = self.store.git(key).run("archive", "--format=tar", commit)
        try:
            build_space_image(
                docker_client(), archive, tag, self.build_args,
                lambda line: space.build_log.append(LogLine(iso_time(), line)),
                wheelhouse=self.wheelhouse,
            )  # fmt: skip
        except BuildFailed as failed:
            error = str(failed)
        except Exception as exc:  # an engine failure is the Space's failure, never LocalHub's
            logger.warning("Building %s failed: %s: %s", key.repo_id, type(exc).__name__, exc)
            error = f"{type(exc).__name__}: {exc}"
        else:
            space.image = tag
            if space.commit == commit:  # else a newer commit is queued, and its build runs
                self._run(key, tag)
            return
        if space.commit == commit:  # else the newer commit's build decides the stage
            self._set_stage(key, "BUILD_ERROR", error=error)

    def _run(self, key: RepoKey, image: str) -> None:
        from openenv_hub.errors import ServerStartError
        from openenv_hub.runtimes import start

        space = self._spaces.get(key)
        if space is None:
            return
        network = self._network()
        for _ in range(3):  # again if variables or secrets changed while it started
            self._stop_app(space)
            variables, secrets = self._environment(key)
            loopback_only = {"OPENENV_HOST": "127.0.0.1"} if network == "host" else {}
            try:
                space.app = start(
                    "docker",
                    "image",
                    image,
                    env={**variables, **loopback_only},
                    secrets=secrets,
                    network=network,
                    pull="never",
                    listed_as="localhub-space",
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

    def _network(self) -> Literal["host", "bridge"]:
        """A network of the app's own where the engine has a bridge, else the host's."""
        from openenv_hub.docker import docker_client, has_bridge_network

        if self._network_mode is None:
            self._network_mode = "bridge" if has_bridge_network(docker_client()) else "host"
        return self._network_mode

    def _environment(self, key: RepoKey) -> tuple[dict[str, str], dict[str, str]]:
        """The app's variables (with the ``SPACE_*`` ones the Hub sets) and its secrets."""
        meta = self.store.read_meta(key)
        variables = {k: v.value for k, v in meta.variables.items()}
        variables.update(
            SPACE_ID=key.repo_id, SPACE_AUTHOR_NAME=key.namespace, SPACE_REPO_NAME=key.name
        )
        return variables, {k: v.value for k, v in meta.secrets.items()}

    def _detach(self, space: _Space) -> Provider | None:
        """Take the app out of service at once (the proxy stops routing to it)."""
        with self._lock:
            app, space.app = space.app, None
        return app

    def _stop_app(self, space: _Space, app: Provider | None = None) -> None:
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
        """For the banner and the control route: on or off, and why (credentials hidden)."""
        return {
            "enabled": self.enabled,
            "reason": self.unavailable,
            "buildArgs": redact_mapping(self.build_args),
            "wheelhouse": str(self.wheelhouse) if self.wheelhouse else None,
        }
