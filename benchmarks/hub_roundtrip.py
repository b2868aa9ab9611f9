"""Publishing round trip against a LocalHub: `openenv push`, then `openenv install`.

    python benchmarks/hub_roundtrip.py              # 3 repetitions
    python benchmarks/hub_roundtrip.py --runs 5

Everything talks to a LocalHub on 127.0.0.1 (real git repos, real huggingface_hub client, real
pip); each command runs as its own process, as a user would run it, so times include start-up.

* push: `openenv push envs/echo_env --version 0.1.0` to a new Space, then the same push again
  with nothing changed (one Space per run).
* install: `openenv install NS/NAME@0.1.0 --yes` in a throwaway virtual environment that holds
  openenv-hub already (built once, not timed; pip runs with PIP_NO_INDEX=1).
* peer: the `openenv` package's `openenv push` (its venv from tests/peer_venv.py), pointed at
  the same LocalHub with HF_ENDPOINT/HF_TOKEN. It refuses envs/echo_env (its structure check
  wants OpenEnv's flat layout), so that failure is reported, and it is also timed on the
  environment its own `openenv init` makes; the ratio compares those two pushes of environments
  of similar size, not the same files.

Prints medians, file counts and ratios. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
ECHO_ENV = ROOT / "envs" / "echo_env"
OPENENV = Path(sys.executable).parent / "openenv"


@dataclass
class Timed:
    seconds: float
    code: int
    output: str


def timed(command: list[str], env: dict[str, str], cwd: Path | None = None) -> Timed:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    return Timed(time.perf_counter() - started, done.returncode, done.stdout + done.stderr)


def median(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} s" if values else "   n/a"


def hub_env(endpoint: str, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HF_ENDPOINT": endpoint,
        "HF_TOKEN": "hf_alice_write",
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "COLUMNS": "200",
    }


def space_file_count(endpoint: str, repo_id: str) -> int:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=endpoint, token="hf_alice_write")
    return len(api.list_repo_files(repo_id, repo_type="space"))


def install_venv(root: Path) -> Path:
    """A venv with openenv-hub from the checkout's wheel (deps from the usual index)."""
    from openenv_hub.packaging import dev_wheel

    wheel = dev_wheel()
    target = str(wheel) if wheel else "openenv-hub"
    venv.EnvBuilder(with_pip=True).create(root)
    python = root / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, target, "setuptools>=70.1", "wheel"], check=True)
    return python


def bench_ours(
    endpoint: str, env: dict[str, str], runs: int
) -> tuple[list[str], dict[str, list[float]]]:
    times: dict[str, list[float]] = {"push": [], "push (no change)": []}
    repos = []
    for run in range(runs):
        repo_id = f"alice/echo_bench_{run}_{os.getpid()}"
        command = [str(OPENENV), "push", str(ECHO_ENV), "--repo-id", repo_id, "--version", "0.1.0"]
        first = timed(command, env)
        if first.code != 0:
            raise SystemExit(f"openenv push failed:\n{first.output}")
        again = timed(command[:-2], env)
        times["push"].append(first.seconds)
        times["push (no change)"].append(again.seconds)
        repos.append(repo_id)
    return repos, times


def bench_install(repos: list[str], env: dict[str, str], work: Path) -> list[float]:
    print("building a virtual environment for the installs (not timed)...", flush=True)
    python = install_venv(work / "install-venv")
    openenv = python.parent / "openenv"
    pip_env = {**env, "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "false"}
    times = []
    for repo_id in repos:
        result = timed([str(openenv), "install", f"{repo_id}@0.1.0", "--yes"], pip_env)
        if result.code != 0:
            raise SystemExit(f"openenv install failed:\n{result.output}")
        times.append(result.seconds)
        subprocess.run(
            [str(python), "-m", "pip", "uninstall", "-y", "-q", "openenv-echo-env"], check=True
        )
    return times


def bench_peer(env: dict[str, str], runs: int, work: Path) -> dict[str, object]:
    from peer_venv import ensure_peer_python

    peer = ensure_peer_python().parent / "openenv"
    echo = shutil.copytree(
        ECHO_ENV, work / "peer-echo" / "echo_env",
        ignore=shutil.ignore_patterns("*.egg-info", ".pytest_cache", "__pycache__"),
    )  # fmt: skip
    refused = timed([str(peer), "push", str(echo), "--repo-id", "alice/peer_echo"], env)
    (work / "peer-init").mkdir()
    init = timed([str(peer), "init", "peer_env"], env, cwd=work / "peer-init")
    if init.code != 0:
        return {"refused": refused, "error": init.output}
    times, repos = [], []
    for run in range(runs):
        repo_id = f"alice/peer_init_{run}_{os.getpid()}"
        result = timed(
            [str(peer), "push", str(work / "peer-init" / "peer_env"), "--repo-id", repo_id], env
        )
        if result.code != 0:
            return {"refused": refused, "error": result.output}
        times.append(result.seconds)
        repos.append(repo_id)
    return {"refused": refused, "times": times, "repos": repos}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-peer", action="store_true", help="Skip the openenv package.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from openenv_hub.localhub import DEMO_TOKENS, LocalHub

    with (
        tempfile.TemporaryDirectory(prefix="hub-bench-") as tmp,
        LocalHub(tokens=DEMO_TOKENS) as hub,
    ):
        work = Path(tmp)
        env = hub_env(hub.endpoint, work / "hf_home")
        print(f"LocalHub at {hub.endpoint}; {args.runs} runs each\n", flush=True)
        repos, ours = bench_ours(hub.endpoint, env, args.runs)
        files = space_file_count(hub.endpoint, repos[0])
        installs = bench_install(repos, env, work)
        peer = None if args.no_peer else bench_peer(env, args.runs, work)
        hosts = {entry["host"].rsplit(":", 1)[0] for entry in hub.requests()}

        print(
            f"\nopenenv-hub  push envs/echo_env ({files} files in the Space)  {median(ours['push'])}"
        )
        print(
            f"openenv-hub  push again, nothing changed                    {median(ours['push (no change)'])}"
        )
        print(
            f"openenv-hub  install @0.1.0 (pip install git+http://127.0.0.1...) {median(installs)}"
        )
        if peer is not None:
            _report_peer(peer, hub.endpoint, ours["push"])
        print(f"\nhosts LocalHub saw: {sorted(hosts)}")


def _report_peer(peer: dict[str, object], endpoint: str, ours: list[float]) -> None:
    refused = peer["refused"]
    assert isinstance(refused, Timed)
    reason = next(
        (line.strip(" │") for line in refused.output.splitlines() if "Invalid" in line), ""
    )
    state = "refused" if refused.code else "accepted"
    print(f"openenv      push envs/echo_env: {state} ({reason or 'exit ' + str(refused.code)})")
    if "error" in peer:
        print(f"openenv      push of its own init env failed:\n{peer['error']}")
        return
    times = peer["times"]
    repos = peer["repos"]
    assert isinstance(times, list) and isinstance(repos, list)
    files = space_file_count(endpoint, repos[0])
    ratio = statistics.median(ours) / statistics.median(times)
    print(f"openenv      push of its own `openenv init` env ({files} files)   {median(times)}")
    print(
        f"ratio        openenv-hub push / openenv push = {ratio:.2f} (different envs of similar size)"
    )


if __name__ == "__main__":
    main()
