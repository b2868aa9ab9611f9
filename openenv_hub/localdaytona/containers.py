"""Sandboxes as containers on the Docker engine: created, started, stopped, removed, and
commands run in them (the toolbox's ``process/execute``).

A sandbox's container runs the image with its entrypoint replaced by the daemon of
:mod:`.sandbox_daemon` (as Daytona runs its own daemon: the image's command does not run;
clients start their server through the toolbox). The daemon and its socket live in a folder of
the host shared with the container, which is how the preview proxy reaches ports inside even
when the sandbox has no network. A sandbox with ``networkBlockAll`` has no network at all
(``--network none``); one without has the engine's bridge network, or, on an engine with no
bridge, the host's. CPU and memory become the container's limits; disk is not limited.

Variables reach the container through the Engine API (its ``Env``), never a command line; so do
those of a command run in it. Every container is labelled as the local Daytona's (the owner is
the process running the service, whose reaper removes them if that process is killed).

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openenv_hub.docker import (
    docker_client,
    has_bridge_network,
    image_config,
    sdk_errors,
    sdk_not_found,
)
from openenv_hub.errors import DockerError, ImageNotFoundError
from openenv_hub.runtimes import cleanup, labels

from .errors import ApiError

if TYPE_CHECKING:
    from .records import SandboxRecord

__all__ = ["RUNTIME_LABEL", "SHARED_FOLDER", "SandboxContainers"]

RUNTIME_LABEL = "localdaytona"
#: Where the shared folder is inside a sandbox.
SHARED_FOLDER = "/.localdaytona"
_DAEMON = Path(__file__).with_name("sandbox_daemon.py")
_SOCKET = "relay.sock"
_DAEMON_UP_S = 20.0
_STOP_GRACE_S = 5


class SandboxContainers:
    """The containers of one local Daytona; ``run_dir`` holds each sandbox's shared folder."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        run_dir.chmod(0o700)  # the shared folders below are open to the sandboxes' users only
        self._exec = ThreadPoolExecutor(max_workers=16, thread_name_prefix="localdaytona-exec")

    def socket_path(self, record: SandboxRecord) -> Path:
        """The Unix socket of the sandbox's daemon, on the host."""
        return self.run_dir / record.id / _SOCKET

    def create(self, record: SandboxRecord) -> None:
        """Create the sandbox's container (not started).

        Raises:
            ApiError: 400: the image is not on the engine and cannot be pulled.
        """
        client = docker_client()
        spec = record.spec
        try:
            config = image_config(client, spec.image, pull="missing")
        except ImageNotFoundError as exc:
            said = str(exc).splitlines()[0]
            raise ApiError(
                400, f"{said} (the local Daytona runs images of its Docker engine)"
            ) from None
        record.user = spec.user or config.get("User") or "root"
        shared = self.run_dir / record.id
        shared.mkdir()
        shared.chmod(0o777)  # the image's user (often 1000) makes the socket in it
        shutil.copyfile(_DAEMON, shared / _DAEMON.name)
        cleanup.ensure_reaper()  # removes the container if this process dies without close()
        container = client.containers.create(
            spec.image,
            entrypoint=["python3", f"{SHARED_FOLDER}/{_DAEMON.name}", f"{SHARED_FOLDER}/{_SOCKET}"],
            name=f"localdaytona-{record.id[:13]}",
            environment=dict(spec.env),
            labels=labels.labels_for(RUNTIME_LABEL, source=spec.image, sandbox=record.id),
            volumes={str(shared): {"bind": SHARED_FOLDER, "mode": "rw"}},
            network_mode=self._network(client, spec.network_block_all),
            nano_cpus=spec.cpu * 1_000_000_000,
            mem_limit=f"{spec.memory}g",
            user=spec.user or None,
        )
        record.container_id = container.id

    @staticmethod
    def _network(client: Any, block_all: bool) -> str:
        if block_all:
            return "none"
        return "bridge" if has_bridge_network(client) else "host"

    def start(self, record: SandboxRecord) -> str | None:
        """Start the container and wait for its daemon; None, or why it did not come up."""
        container = self._container(record)
        if container is None:
            return "its container is gone"
        socket = self.socket_path(record)
        with contextlib.suppress(FileNotFoundError):
            socket.unlink()  # left by a daemon that was stopped
        container.start()
        deadline = time.monotonic() + _DAEMON_UP_S
        while not socket.exists():
            container.reload()
            if container.status != "running" or time.monotonic() > deadline:
                tail = container.logs(tail=20).decode(errors="replace").strip()
                return (
                    "the sandbox's daemon did not start (the local Daytona runs it with the "
                    f"image's python3): {tail or container.status}"
                )
            time.sleep(0.05)
        return None

    def stop(self, record: SandboxRecord, *, force: bool = False) -> None:
        container = self._container(record)
        if container is None:
            return
        with contextlib.suppress(*sdk_errors()):
            if force:
                container.kill()
            else:
                container.stop(timeout=_STOP_GRACE_S)

    def remove(self, record: SandboxRecord) -> None:
        """Remove the sandbox's container (gone already is fine) and its folder.

        Raises:
            ApiError: 500: the engine did not remove it; the container may still run.
        """
        failures: tuple[type[Exception], ...] = (DockerError, *sdk_errors())
        if record.container_id is not None:
            try:
                docker_client().containers.get(record.container_id).remove(force=True)
            except sdk_not_found():
                pass
            except failures as exc:
                raise ApiError(
                    500, f"The sandbox's container could not be removed (it may still run): {exc}"
                ) from None
        shutil.rmtree(self.run_dir / record.id, ignore_errors=True)

    def running_ids(self) -> set[str]:
        """The ids of this service's containers that run now."""
        mine = [f"{labels.RUNTIME}={RUNTIME_LABEL}", f"{labels.OWNER}={labels.owner_id()}"]
        selector = {"label": mine}
        return {c.id for c in docker_client().containers.list(filters=selector)}

    def execute(
        self, record: SandboxRecord, command: str, *, cwd: str | None,
        envs: dict[str, str], timeout_s: float,
    ) -> tuple[int, str]:  # fmt: skip
        """Run ``command`` with ``sh -c`` in the sandbox; its exit code and output.

        Raises:
            ApiError: 408: it did not finish in ``timeout_s`` (it is killed).
        """
        api = docker_client().api
        created = api.exec_create(
            record.container_id, ["sh", "-c", command], environment=envs or None, workdir=cwd
        )
        future = self._exec.submit(api.exec_start, created["Id"])
        try:
            output: bytes = future.result(timeout=timeout_s)
        except FutureTimeout:
            _kill_exec(api, created["Id"])
            raise ApiError(
                408, f"The command did not finish in {timeout_s:g} s (it was killed)."
            ) from None
        code = api.exec_inspect(created["Id"]).get("ExitCode")
        return (code if isinstance(code, int) else -1), output.decode(errors="replace")

    def _container(self, record: SandboxRecord) -> Any:
        if record.container_id is None:
            return None
        try:
            return docker_client().containers.get(record.container_id)
        except sdk_errors():
            return None

    def close(self) -> None:
        self._exec.shutdown(wait=False, cancel_futures=True)


def _kill_exec(api: Any, exec_id: str) -> None:
    """Kill the process of an exec that ran too long (the engine runs on this machine)."""
    with contextlib.suppress(*sdk_errors(), OSError):
        pid = api.exec_inspect(exec_id).get("Pid")
        if pid:
            os.kill(int(pid), 9)
