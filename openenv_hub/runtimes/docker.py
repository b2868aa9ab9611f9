"""The ``docker`` runtime: an environment server in a Docker container, started from an image
with the docker SDK (an image built first from a folder, or from a Space at a commit).

On an engine without a bridge network (``docker network ls`` shows only ``host`` and
``none``) the container joins the host network and listens on a free port given as ``PORT``;
elsewhere it keeps its own network and its port is published on 127.0.0.1. Variables and
secrets reach the container through the Engine API, never a command line. The container is
labelled (:mod:`openenv_hub.runtimes.labels`) and removed by :meth:`DockerProvider.stop`, at
interpreter exit, or by this process's reaper if the process is killed.

A folder is built with :func:`~openenv_hub.docker.build_image` (its build context staged with
push's file selection); a Space's Dockerfile is built as the Hub builds it, at the commit its
revision names, into ``openenv-space-ns-name-HASH:COMMIT``
(:func:`~openenv_hub.docker.build.space_image_tag`), once per commit. ``BASE_IMAGE`` comes from
``base_image=`` or ``$OPENENV_BASE_IMAGE``, more build arguments from ``build_args=`` or
``$OPENENV_BUILD_ARGS`` (space-separated ``KEY=VALUE``).

Example::

    with DockerProvider.start("openenv-echo-env:latest") as server:
        httpx.get(server.base_url + "/health")

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import openenv_hub.runtimes._reaper as _reaper
import openenv_hub.runtimes.cleanup as cleanup
import openenv_hub.runtimes.labels as labels
from openenv_hub.docker import (
    Network,
    build_image,
    container_name,
    create_container,
    default_tag,
    docker_client,
    has_bridge_network,
    image_config,
    image_port,
    run_command,
    sdk_error,
    sdk_errors,
    space_image_tag,
)
from openenv_hub.errors import ConnectError, ServerStartError
from openenv_hub.runtimes.base import RuntimeBase, SpaceRef, StopsOnExit
from openenv_hub.support.progress import SHORT_WAIT_S, report_progress
from openenv_hub.support.settings import base_image, build_args
from openenv_hub.transport.local_ports import free_port, wait_for_health

if TYPE_CHECKING:
    from openenv_hub.docker.engine import Container, DockerClient
    from openenv_hub.hub import SpaceSource

# docker_client, has_bridge_network, image_config, image_port and run_command live in
# openenv_hub.docker; named here as before
__all__ = [
    "DockerProvider",
    "DockerRuntime",
    "build_folder_image",
    "build_space_image",
    "docker_client",
    "has_bridge_network",
    "image_config",
    "image_port",
    "run_command",
]


class DockerProvider(StopsOnExit):
    """An environment server running in a container this process started."""

    runtime = "docker"

    def __init__(self, client: DockerClient, container: Container, base_url: str) -> None:
        self._client = client
        self.container = container
        self._base_url = base_url
        self._stopped = False
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def base_urls(self) -> list[str]:
        return [self._base_url]

    @property
    def name(self) -> str:
        return str(self.container.name)

    @classmethod
    def start(
        cls,
        image: str,
        *,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        name: str | None = None,
        network: Network = "auto",
        container_port: int | None = None,
        command: list[str] | None = None,
        pull: Literal["missing", "never"] = "missing",
        extra_labels: Mapping[str, str] | None = None,
        runtime: str = "docker",
        startup_timeout_s: float = 120.0,
    ) -> DockerProvider:
        """Run ``image`` and return once its ``/health`` answers.

        Args:
            image: The image, e.g. ``"openenv-echo-env:latest"`` (``openenv build`` makes one).
            port: The host port (default: a free one).
            env: Variables for the container.
            secrets: Variables never shown in messages or commands.
            name: The container's name (default: ``openenv-<image>-<random>``).
            network: ``"host"``, ``"bridge"`` (publish the port), or ``"auto"``: host when the
                engine has no bridge network.
            container_port: The port the server listens on inside its own network (default:
                the image's ``PORT`` variable, else its first exposed port, else 8000).
            command: Replaces the image's command.
            pull: ``"missing"`` pulls an image the engine does not have.
            extra_labels: More labels for the container.
            runtime: The runtime named in labels and messages.
            startup_timeout_s: Time allowed until ``/health`` answers.

        Raises:
            ImageNotFoundError: No such image, and it could not be pulled.
            ServerStartError: The container exited, or did not answer in time; the message has
                the last lines of its log.
            DockerError: No engine answers.
        """
        client = docker_client()
        config = image_config(client, image, pull=pull)
        host_network = network == "host" or (network == "auto" and not has_bridge_network(client))
        inner = container_port or image_port(config)
        port = port or free_port()
        variables = {**(env or {}), "PORT": str(port if host_network else inner)}
        base_url = f"http://127.0.0.1:{port}"
        spec = run_command(
            image,
            port=port,
            container_port=inner,
            host_network=host_network,
            env=variables,
            secret_names=sorted(secrets or {}),
        )
        _reaper.ensure_reaper()  # removes the container if this process dies without stop()
        container = create_container(
            client,
            image,
            name=name or container_name(image),
            environment={**variables, **(secrets or {})},
            labels={
                **labels.labels_for(runtime, source=image, url=base_url),
                **(extra_labels or {}),
            },
            host_network=host_network,
            ports={f"{inner}/tcp": ("127.0.0.1", port)},
            command=command,
        )
        provider = cls(client, container, base_url)
        provider.runtime = runtime
        cleanup.track(provider)
        provider._wait_healthy(spec, startup_timeout_s)
        return provider

    def _wait_healthy(self, spec: str, timeout_s: float) -> None:
        try:
            with report_progress(
                f"container {self.name}", "starting the container", show_after_s=SHORT_WAIT_S
            ) as progress:
                self.container.start()
                progress.stage("waiting for /health")
                wait_for_health(
                    self._base_url, timeout_s=timeout_s, alive=self.running, progress=progress
                )
        except (ConnectError, sdk_error()) as exc:
            logs = self.logs(40)
            status = self.status()
            self.stop()
            why = "exited before answering" if status == "exited" else f"failed: {exc}"
            raise ServerStartError(
                f"The container of {spec.rsplit(' ', 1)[-1]} {why}.",
                runtime=self.runtime,
                command=spec,
                logs=logs,
                url=self._base_url,
                hint="Read the log above; the server must listen on $PORT and answer /health. "
                "Run the image by hand with the command above to debug it.",
            ) from None

    def details(self) -> list[str]:
        return [f"Name  {self.name}  (openenv ps lists it; openenv stop {self.name})"]

    def running(self) -> bool:
        return self.status() in ("created", "running")

    def stopped_from_outside(self) -> str | None:
        """How the container was stopped by someone else (removed, as ``openenv stop`` does, or
        stopped), or None: it runs, it exited on its own, or :meth:`stop` ended it."""
        if self._stopped:
            return None
        status = self.status()
        if status in ("removed", "removing", "dead"):  # dead: killed for removal, not yet gone
            return "its container was removed (by openenv stop or docker rm)"
        state = self.container.attrs["State"]
        if (
            status == "exited"
            and state.get("ExitCode") in (137, 143)
            and not state.get("OOMKilled")
        ):
            return "its container was stopped (by docker stop or docker kill)"
        return None

    def status(self) -> str:
        """The container's state: ``running``, ``exited``, ... or ``removed``."""
        try:
            self.container.reload()
        except sdk_error():
            return "removed"
        return str(self.container.status)

    def logs(self, tail_lines: int = 200) -> str:
        try:
            raw: bytes = self.container.logs(tail=tail_lines)
        except sdk_error():
            return ""
        return raw.decode(errors="replace")

    def stop(self, timeout_s: int = 5) -> None:
        """Stop and remove the container (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        cleanup.untrack(self)
        with contextlib.suppress(*sdk_errors()):
            self.container.stop(timeout=timeout_s)
        with contextlib.suppress(*sdk_errors()):
            self.container.remove(force=True)

    def __repr__(self) -> str:
        return f"DockerProvider({self.name}, {self._base_url})"


#: What starting a container takes (:meth:`DockerProvider.start`).
RUN_OPTIONS = frozenset(
    {"port", "env", "secrets", "name", "network", "container_port", "command", "pull",
     "startup_timeout_s"}
)  # fmt: skip
#: What building an image takes, besides.
BUILD_OPTIONS = frozenset({"base_image", "build_args"})


class DockerRuntime(RuntimeBase):
    """Containers of an image, built from a folder or a Space first; see the module."""

    name = "docker"
    summary = "a container of the image (built first from a folder or a Space)"
    inventory = "openenv_hub.runtimes.inventory:EngineInventory"
    options = {
        "image": RUN_OPTIONS | {"extra_labels", "listed_as"},
        "folder": RUN_OPTIONS | BUILD_OPTIONS | {"tag"},
        "space": frozenset({"env", "secrets", "startup_timeout_s"}) | BUILD_OPTIONS,
    }

    def start_image(self, image: str, **options: Any) -> DockerProvider:
        """``listed_as``: the runtime ``openenv ps`` names (LocalHub's Spaces: localhub-space)."""
        return DockerProvider.start(image, runtime=options.pop("listed_as", "docker"), **options)

    def start_folder(self, path: Path, **options: Any) -> DockerProvider:
        build = {key: options.pop(key) for key in ("tag", *BUILD_OPTIONS) if key in options}
        return DockerProvider.start(build_folder_image(path, **build), pull="never", **options)

    def start_space(self, space: SpaceRef, **options: Any) -> DockerProvider:
        build = {key: options.pop(key) for key in BUILD_OPTIONS if key in options}
        source, tag = build_space_image(space, **build)
        options.setdefault("startup_timeout_s", 120.0)
        return DockerProvider.start(
            tag,
            pull="never",
            extra_labels={"openenv-hub.space": source.repo_id, "openenv-hub.commit": source.commit},
            **options,
        )


def build_folder_image(
    path: Path,
    *,
    tag: str | None = None,
    base_image: str | None = None,
    build_args: Sequence[str] = (),
) -> str:
    """Build the environment folder's image (``openenv-NAME:latest`` unless ``tag``); its tag."""
    from openenv_hub.model.manifest import load_manifest

    tag = tag or default_tag(load_manifest(path).name)
    build_image(
        path,
        tag,
        base_image=_base_image(base_image),
        build_args=_build_args(build_args),
        quiet=True,
    )
    return tag


def build_space_image(
    space: SpaceRef, *, base_image: str | None = None, build_args: Sequence[str] = ()
) -> tuple[SpaceSource, str]:
    """The Space's image at ``space.revision`` (built once per commit, as the Hub builds it),
    and the files it was built from."""
    from openenv_hub.runtimes.space import space_files

    source = space_files(space)
    tag = space_image_tag(source.repo_id, source.commit)
    if not docker_client().images.list(name=tag):
        build_image(
            source.path,
            tag,
            base_image=_base_image(base_image),
            build_args=_build_args(build_args),
            quiet=True,
            include_secrets=("*",),  # published on purpose: the Hub builds them in too
        )
    return source, tag


def _base_image(given: str | None) -> str | None:
    return given or base_image()


def _build_args(given: Sequence[str]) -> list[str]:
    return list(given) or build_args()
