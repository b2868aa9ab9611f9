"""A real two-node Ray cluster on this machine, on loopback, for the tests (``ray_cluster``).

The cluster is started by the block "start a cluster" of docs/scale.md, run as printed with a
free port for 6379 and a temporary folder for /tmp/ray-openenv: the head is ``ray start
--head`` at 127.0.0.2 and the worker ``ray start --address`` at 127.0.0.3 (Ray rewrites
127.0.0.1 in ``--address`` into the machine's outward address, so each node gets a loopback
address of its own), each with one CPU, 100 MB of object store, no dashboard and no usage
statistics. It is stopped at the end of the session, also when a test failed, by killing the
processes it started (never ``ray stop``, which would stop every Ray process on the machine).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from child_processes import live_processes
from doc_blocks import doc_block

HEAD_IP = "127.0.0.2"


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class RayCluster:
    """A head and a worker started with ``ray start``; ``address`` is the head's."""

    temp_dir: Path
    address: str = ""
    groups: list[int] = field(default_factory=list)  # process groups of the `ray start`s

    def start(self) -> RayCluster:
        """Run the document's commands (one process group: the shell's and its children's)."""
        port = _free_port(HEAD_IP)
        script = doc_block("docs/scale.md", "start a cluster").code
        script = script.replace("6379", str(port)).replace("/tmp/ray-openenv", str(self.temp_dir))
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # ray
        process = subprocess.Popen(
            ["bash", "-e", "-c", script],
            env={**os.environ, "PATH": path},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.groups.append(process.pid)
        output, _ = process.communicate(timeout=300)
        if process.returncode != 0:
            raise RuntimeError(f"starting the Ray cluster failed:\n{output[-3000:]}")
        self.address = f"{HEAD_IP}:{port}"
        return self

    def processes(self) -> list[int]:
        """The processes of the cluster: the groups of the ``ray start``s and their children."""
        live = live_processes()
        found = {pid for pid, (_, group) in live.items() if group in self.groups}
        grew = True
        while grew:
            children = {pid for pid, (parent, _) in live.items() if parent in found} - found
            found |= children
            grew = bool(children)
        return sorted(found)

    def stop(self, grace_s: float = 5.0, timeout_s: float = 20.0) -> None:
        """SIGTERM, then SIGKILL after ``grace_s`` (gcs_server lingers for 20 s or more after a
        SIGTERM; the cluster's state is temporary), each waited for with a bound."""
        for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, timeout_s)):
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + wait_s
            while self.processes() and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def require_extra(package: str) -> None:
    """Skip without the package's extra (fail when CI=true: CI installs every extra)."""
    try:
        __import__(package)
    except ImportError:
        reason = f'needs the {package} extra: pip install "openenv-hub[{package}]"'
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests that use the cluster last, so it lives (900 MB, a few % of a core) only for
    them rather than from the first of them to the end of the session."""
    items.sort(key=lambda item: "ray_cluster" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    """A two-node Ray cluster on loopback for the whole session; this process joins it."""
    require_extra("ray")
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="oe-ray-", dir="/tmp")))
    try:
        cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            import ray

            ray.shutdown()
        cluster.stop()
