"""The grading of a Harbor episode: the task's ``tests/test.sh`` run once in a new container of
the agent's final files, driven from the host.

The agent's container is saved as an image; the grader is a new container of it whose only
process is ``/tests/test.sh`` (no shell, ``sleep``, ``timeout``, ``mkdir`` or ``chmod`` of the
image runs for the grader's own steps). Before it starts, ``/tests`` and ``/logs/verifier`` are
fresh empty volumes, hiding whatever the agent left at those paths, and the task's ``tests/`` is
copied in through the Engine API. The time bound is kept by the host: past it the container is
killed. The reward files are read through the Engine API, and only when each is one regular file
of its name, of at most :data:`MAX_REWARD_BYTES`.

What stays the agent's: ``test.sh`` runs on the agent's final file system, as in Harbor, so a
test that calls a program the agent could replace (``python3``, ``grep``, its own interpreter)
can be fooled; a task set is as trustworthy as its tests are self-contained.

Who is to blame when grading fails: when the engine answered but refused a step (the agent
left a file where ``/tests`` or ``/logs/verifier`` go, a folder where the reward goes), the episode gets the lowest reward with ``reward_error`` naming why: the agent
broke its own grading. When the engine does not answer at all, :class:`DockerError` is raised:
that is an infrastructure error, not the agent's score.

Layer: client.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openenv_hub.docker import container_name, docker_client, sdk_errors
from openenv_hub.docker.engine import sdk_api_error, sdk_error, sdk_types
from openenv_hub.errors import DockerError
from openenv_hub.importers.harbor_tasks import HarborTask
from openenv_hub.runtimes import cleanup, labels
from openenv_hub.runtimes.sandbox import NotOneFile, folder_archive, read_one_file

if TYPE_CHECKING:
    from openenv_hub.docker.engine import Container

__all__ = ["REWARD_FILES", "GradingRun", "run_test"]

REWARD_FILES = ("/logs/verifier/reward.json", "/logs/verifier/reward.txt")
#: The most a reward file may hold.
MAX_REWARD_BYTES = 64_000
_FRESH = ("/tests", "/logs/verifier")


def _writable_folder(name: str) -> bytes:
    """A tar of the folder ``name`` that anyone may write (the test may run as any user)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        folder = tarfile.TarInfo(name)
        folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o777, int(time.time())
        archive.addfile(folder)
    return buffer.getvalue()


_VERIFIER_FOLDER = _writable_folder("logs/verifier")


@dataclass
class GradingRun:
    """How the test ended: its exit code (None: killed or never ran), whether it ran out of
    time, the reward files' contents (None: absent), and why grading failed (None: it did not)."""

    exit_code: int | None = None
    timed_out: bool = False
    files: dict[str, bytes | None] = field(default_factory=dict)
    error: str | None = None


def run_test(task: HarborTask, image: str) -> GradingRun:
    """Run ``task``'s test in a new container of ``image`` (the agent's final files).

    Raises:
        DockerError: The engine did not answer (an infrastructure error).
    """
    outcome = GradingRun()
    refused = sdk_api_error()
    engine_failed = (sdk_error(), *sdk_errors())
    try:  # nothing of the agent's is read yet: a refusal here is the engine's
        container: Container = docker_client().containers.create(
            image, **_grader_options(task, image)
        )
    except engine_failed as exc:
        raise DockerError(f"Could not create the grader of {task.name}: {exc}") from None
    try:
        for archive in (folder_archive(task.path / "tests", "/tests"), _VERIFIER_FOLDER):
            if not container.put_archive("/", archive):
                raise refused("the engine did not take the task's tests")
        container.start()
        outcome.exit_code, outcome.timed_out = _wait(container, task.verifier_timeout_s)
        if not outcome.timed_out:
            outcome.files = _reward_files(container, outcome)
    except refused as exc:  # the engine answered: the agent's files refused it
        outcome.error = f"grading failed on the agent's files: {_explained(exc)}"[:300]
    except engine_failed as exc:
        raise DockerError(f"The Docker engine failed while grading {task.name}: {exc}") from None
    finally:
        with contextlib.suppress(*sdk_errors()):
            container.remove(force=True, v=True)
    return outcome


def _grader_options(task: HarborTask, image: str) -> dict[str, Any]:
    types = sdk_types()

    options: dict[str, Any] = {
        "entrypoint": ["/tests/test.sh"],
        "command": [],
        "name": container_name(image),
        "network_mode": "host" if task.verifier_network else "none",
        "mem_limit": f"{task.memory_mb}m",
        "memswap_limit": f"{task.memory_mb}m",
        "pids_limit": 1024,
        "environment": dict(task.verifier_env),
        "mounts": [types.Mount(path, None, no_copy=True) for path in _FRESH],
        "log_config": types.LogConfig(type="none"),  # what test.sh prints is not kept
        "labels": {
            **labels.labels_for("harbor", source=image),
            "openenv-hub.task": task.name,
            "openenv-hub.role": "grader",
        },
    }
    if task.cpus:
        options["nano_cpus"] = int(task.cpus * 1e9)
    if task.workdir:
        options["working_dir"] = task.workdir
    cleanup.ensure_reaper()  # removes the container if this process dies before it does
    return options


def _wait(container: Container, timeout_s: float) -> tuple[int | None, bool]:
    """Wait for the test to end, killing it at ``timeout_s`` (the host's clock, not the
    image's ``timeout``): (exit code, whether it ran out of time)."""
    import requests

    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            with contextlib.suppress(*sdk_errors()):
                container.kill()
            return None, True
        try:
            status = container.wait(timeout=max(1.0, min(left, 30.0)))
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            container.reload()  # raises if the engine itself is gone: an infrastructure error
            continue
        return int(status.get("StatusCode", -1)), False


def _reward_files(container: Container, outcome: GradingRun) -> dict[str, bytes | None]:
    files: dict[str, bytes | None] = {}
    for path in REWARD_FILES:
        try:
            files[path] = read_one_file(container, path, max_bytes=MAX_REWARD_BYTES)
        except NotOneFile as exc:
            outcome.error = f"the reward file cannot be believed: {exc}"
            files[path] = None
    return files


def _explained(exc: Exception) -> str:
    explanation = getattr(exc, "explanation", None)
    return str(explanation or exc)
