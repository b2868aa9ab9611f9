"""Wall time of the author's commands, against the `openenv` package's on the same machine.

    python benchmarks/cli.py

``openenv init`` and ``openenv validate --level runtime`` of the environment it generates,
best of three runs each. The peer runs in its own virtual environment (tests/peer_venv.py).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from peer_venv import ensure_peer_python  # noqa: E402


def best_of(runs: int, command: list[str], *, fresh_dir: bool = False) -> float:
    best = float("inf")
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            args = [a.replace("{tmp}", tmp) for a in command] if fresh_dir else command
            started = time.perf_counter()
            subprocess.run(args, check=False, capture_output=True)
            best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    ours = str(Path(sys.executable).with_name("openenv"))
    peer = str(ensure_peer_python().with_name("openenv"))
    workdir = Path(tempfile.mkdtemp(prefix="openenv-cli-bench-"))
    try:
        init_ours = best_of(
            3, [ours, "init", "bench_env", "--no-input", "--output-dir", "{tmp}"], fresh_dir=True
        )
        init_peer = best_of(3, [peer, "init", "bench_env", "-o", "{tmp}"], fresh_dir=True)
        subprocess.run(
            [ours, "init", "bench_env", "--no-input", "--output-dir", str(workdir / "ours")],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [peer, "init", "bench_env", "-o", str(workdir / "peer")],
            check=True,
            capture_output=True,
        )
        validate_ours = best_of(
            3, [ours, "validate", str(workdir / "ours" / "bench_env"), "--level", "runtime"]
        )
        validate_peer = best_of(
            3,
            [peer, "validate", str(workdir / "peer" / "bench_env"), "--level", "runtime", "--json"],
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("| command | openenv-hub, s | openenv, s | ours/openenv |")
    print("|---|---:|---:|---:|")
    print(f"| `openenv init` | {init_ours:.2f} | {init_peer:.2f} | {init_ours / init_peer:.2f}x |")
    print(
        f"| `openenv validate --level runtime` | {validate_ours:.2f} | {validate_peer:.2f} | {validate_ours / validate_peer:.2f}x |"
    )


if __name__ == "__main__":
    main()
