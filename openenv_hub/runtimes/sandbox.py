"""A sandbox container: a long-lived container of an image that commands run in, one at a time,
with bounded time and output, for environments whose tasks come with an image of their own
(Harbor tasks).

The container runs ``sleep infinity`` with no network (``--network none``) unless its limits
allow it, a memory bound with no swap, a bound on processes and, when given, on CPUs. It is
labelled like every container a runtime starts (:mod:`openenv_hub.runtimes.labels`), so ``openenv
ps`` lists it and ``openenv stop`` removes it, and it is removed at interpreter exit or by this
process's reaper if the process dies. Files go in and out as tar archives through the Engine
API; a snapshot (``docker commit``) keeps its files for another container.

Example::

    with DockerSandbox.start("python:3.12-slim", limits=SandboxLimits(memory_mb=512)) as box:
        box.run("echo hi > /tmp/x && cat /tmp/x", timeout_s=10).output  # 'hi\\n'

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

import openenv_hub.runtimes._reaper as _reaper
import openenv_hub.runtimes.cleanup as cleanup
import openenv_hub.runtimes.labels as labels
from openenv_hub.docker import (
    container_name,
    docker_client,
    require_engine,
    sdk_error,
    sdk_errors,
    sdk_not_found,
)
from openenv_hub.errors import DockerError
from openenv_hub.runtimes.base import StopsOnExit
from openenv_hub.support.settings import environment

if TYPE_CHECKING:
    from openenv_hub.docker.engine import Container, DockerClient

__all__ = [
    "DockerSandbox",
    "NotOneFile",
    "RunResult",
    "SandboxLimits",
    "folder_archive",
    "read_one_file",
]

#: Exit code of a command killed by its time bound (``timeout -s KILL``: 128 + 9).
KILLED = 137
#: What a command may print before the rest is dropped.
DEFAULT_MAX_OUTPUT_BYTES = 64_000
#: What a tar of one file may hold besides the file (headers, padding, end blocks).
_TAR_OVERHEAD = 64 * 1024


class NotOneFile(ValueError):
    """A path read from a container holds something else than one regular file of its name (a
    folder, a link, a device), or more bytes than the reader takes."""


@dataclass(frozen=True)
class SandboxLimits:
    """What a sandbox container may use.

    Attributes:
        memory_mb: Memory, swap included (the container's processes are killed past it).
        cpus: CPUs (None: no bound of its own).
        max_processes: Processes and threads at once.
        network: False: no network at all (``--network none``); True: the host's network, the
            only other network an engine without a bridge has.
    """

    memory_mb: int = 2048
    cpus: float | None = None
    max_processes: int = 1024
    network: bool = False


@dataclass(frozen=True)
class RunResult:
    """A command's end: its exit code (None when it did not end in time), what it printed
    (standard output and error, interleaved), and whether it ran out of time or printed more
    than was kept."""

    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool


class DockerSandbox(StopsOnExit):
    """A container commands run in; see the module."""

    runtime = "sandbox"

    def __init__(self, client: DockerClient, container: Container, shell: str) -> None:
        self._client = client
        self._cli = require_engine()
        self.container = container
        self.shell = shell
        self._stopped = False
        self._lock = threading.Lock()

    # The Provider protocol, so the cleanup at exit can stop it like a server.
    @property
    def base_url(self) -> str:
        return ""

    @property
    def base_urls(self) -> list[str]:
        return []

    @property
    def name(self) -> str:
        return str(self.container.name)

    @classmethod
    def start(
        cls,
        image: str,
        *,
        limits: SandboxLimits | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        runtime: str = "sandbox",
        extra_labels: Mapping[str, str] | None = None,
    ) -> DockerSandbox:
        """Start a container of ``image`` (which the engine must have) that waits for commands.

        Raises:
            DockerError: No engine, no such image, or the container did not start.
        """
        limits = limits or SandboxLimits()
        client = docker_client()
        options: dict[str, Any] = {
            "network_mode": "host" if limits.network else "none",
            "mem_limit": f"{limits.memory_mb}m",
            "memswap_limit": f"{limits.memory_mb}m",
            "pids_limit": limits.max_processes,
            "environment": dict(env or {}),
            "labels": {**labels.labels_for(runtime, source=image), **(extra_labels or {})},
        }
        if limits.cpus:
            options["nano_cpus"] = int(limits.cpus * 1e9)
        if workdir:
            options["working_dir"] = workdir
        _reaper.ensure_reaper()  # removes the container if this process dies without stop()
        try:
            container = client.containers.create(
                image, command=["sh", "-c", "sleep infinity"], name=container_name(image), **options
            )
        except sdk_error() as exc:
            raise DockerError(f"Could not create a container of {image}: {exc}") from None
        sandbox = cls(client, container, shell="sh")
        sandbox.runtime = runtime
        cleanup.track(sandbox)
        failures: tuple[type[BaseException], ...] = (DockerError, *sdk_errors())
        try:
            container.start()
            found = sandbox.run("command -v bash", timeout_s=30)
        except failures as exc:
            sandbox.stop()
            raise DockerError(f"The container of {image} did not start: {exc}") from None
        if found.exit_code == 0:
            sandbox.shell = "bash"
        return sandbox

    def run(
        self,
        command: str,
        *,
        timeout_s: float,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> RunResult:
        """Run ``command`` with the container's shell, killed (with its process group) after
        ``timeout_s``; variables in ``env`` reach it by name (``docker exec -e NAME``), never on a command
        line."""
        bound = max(1, int(timeout_s + 0.999))
        variables = dict(env or {})
        argv = [self._cli, "exec", "-i"]
        argv += ["--workdir", workdir] if workdir else []
        for name in variables:
            argv += ["-e", name]  # the value comes from the CLI's environment, not its arguments
        argv += [self.name, "timeout", "-s", "KILL", f"{bound}s", self.shell, "-c", command]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**environment(), **variables},
        )
        with process:
            assert process.stdout is not None
            kept, truncated, finished = _read(process.stdout, max_output_bytes, timeout_s + 10)
            if not finished:
                process.kill()
            code = process.wait()
        timed_out = not finished or code == KILLED
        return RunResult(
            exit_code=None if timed_out else code,
            output=kept.decode(errors="replace"),
            timed_out=timed_out,
            truncated=truncated,
        )

    def put_folder(self, source: Path, target: str) -> None:
        """Copy the files of the folder ``source`` into ``target`` (made if missing, with its
        parents), owned by root; links are copied as links. Nothing runs in the container."""
        try:
            copied = self.container.put_archive("/", folder_archive(source, target))
        except sdk_error() as exc:
            raise DockerError(f"Could not copy {source} into {self.name}:{target}: {exc}") from None
        if not copied:
            raise DockerError(f"Could not copy {source} into {self.name}:{target}")

    def read_file(self, path: str, *, max_bytes: int = 1_000_000) -> bytes | None:
        """The regular file at ``path`` (see :func:`read_one_file`)."""
        return read_one_file(self.container, path, max_bytes=max_bytes)

    def snapshot(self, repository: str) -> str:
        """An image of the container's files as they are now (``docker commit``); its id."""
        try:
            image = self.container.commit(repository=repository, tag="latest")
        except sdk_error() as exc:
            raise DockerError(f"Could not snapshot {self.name}: {exc}") from None
        return str(image.id)

    def logs(self, tail_lines: int = 200) -> str:
        return ""

    def stop(self, timeout_s: int = 1) -> None:
        """Remove the container, whatever runs in it (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        cleanup.untrack(self)
        with contextlib.suppress(*sdk_errors()):
            self.container.remove(force=True)

    def __repr__(self) -> str:
        return f"DockerSandbox({self.name})"


def folder_archive(source: Path, target: str) -> bytes:
    """A tar, to unpack at ``/``, of the folders of the absolute path ``target`` and the files
    of the folder ``source`` under it, owned by root (folders 0755; files keep their mode)."""
    parts = PurePosixPath(target).relative_to("/").parts
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for depth in range(1, len(parts) + 1):
            folder = tarfile.TarInfo("/".join(parts[:depth]))
            folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o755, int(time.time())
            archive.addfile(folder)
        for path in sorted(source.rglob("*")):
            name = "/".join((*parts, *path.relative_to(source).parts))
            info = archive.gettarinfo(str(path), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if info.isreg():
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    return buffer.getvalue()


def read_one_file(container: Container, path: str, *, max_bytes: int) -> bytes | None:
    """The content of the regular file at ``path`` in ``container``; None when nothing is there.

    Raises:
        NotOneFile: What is there is not exactly one regular file named as ``path`` ends (a
            folder, a link, anything else), or holds more than ``max_bytes``.
        docker.errors.APIError: The engine refused otherwise; requests' errors: no engine.
    """
    try:
        chunks, _ = container.get_archive(path)
    except sdk_not_found():
        return None
    data = bytearray()
    for chunk in chunks:
        data += chunk
        if len(data) > max_bytes + _TAR_OVERHEAD:
            raise NotOneFile(f"{path} holds more than {max_bytes} bytes")
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as archive:
        members = archive.getmembers()
        kinds = ", ".join(sorted({_kind(m) for m in members})) or "nothing"
        member = members[0] if len(members) == 1 else None
        if member is None or not member.isreg() or member.name != PurePosixPath(path).name:
            raise NotOneFile(f"{path} is not one regular file (it holds: {kinds})")
        if member.size > max_bytes:
            raise NotOneFile(f"{path} holds more than {max_bytes} bytes")
        handle = archive.extractfile(member)
        return b"" if handle is None else handle.read(max_bytes)


def _kind(member: tarfile.TarInfo) -> str:
    if member.isreg():
        return "a file"
    if member.isdir():
        return "a folder"
    if member.issym() or member.islnk():
        return "a link"
    return "something else"


def _read(stream: IO[bytes], max_bytes: int, deadline_s: float) -> tuple[bytes, bool, bool]:
    """Read a command's output on a thread until it ends or ``deadline_s`` passes: (what was
    kept, whether more was dropped, whether it ended)."""
    kept = bytearray()
    state = {"truncated": False}

    def pump() -> None:
        with contextlib.suppress(Exception):
            for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                room = max_bytes - len(kept)
                if len(chunk) > room:
                    state["truncated"] = True
                kept.extend(chunk[: max(room, 0)])

    reader = threading.Thread(target=pump, name="openenv-sandbox-output", daemon=True)
    reader.start()
    reader.join(deadline_s)
    return bytes(kept), state["truncated"], not reader.is_alive()
