"""The coding environment against smolagents' ``LocalPythonExecutor`` (OpenEnv's mechanism).

    python benchmarks/coding.py            # speed and the escape suite, both sides
    python benchmarks/coding.py --no-peer  # ours only

Ours is measured in process: the sandbox alone (``Sandbox.request``, no server), the same in
``unsafe_no_sandbox`` mode (the same interpreter and protocol without bubblewrap: the difference
is the sandbox's own overhead), and through the server with the WebSocket client. The peer runs in
a venv of its own (``smolagents`` is not a dependency of this project), made once under
``~/.cache/openenv-hub``. Nothing is asserted; the numbers go to benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "envs" / "coding_env"), str(REPO / "envs" / "coding_env" / "tests")]

from coding_env import CodeAction, CodingEnv  # noqa: E402
from coding_env.server.mechanism import detect  # noqa: E402
from coding_env.server.sandbox import Sandbox  # noqa: E402
from coding_env.server.settings import SandboxSettings  # noqa: E402

SMOLAGENTS = "smolagents==1.26.0"
PEER = REPO / "benchmarks" / "servers" / "smolagents_peer.py"
STEPS = 2000


def peer_python() -> Path:
    root = (
        Path(os.path.expanduser("~/.cache/openenv-hub")) / f"smolagents-{SMOLAGENTS.split('==')[1]}"
    )
    python = root / "bin" / "python"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{root}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".complete").exists():
            venv.EnvBuilder(with_pip=True, clear=True).create(root)
            subprocess.run([python, "-m", "pip", "install", "-q", SMOLAGENTS], check=True)
            (root / ".complete").write_text(SMOLAGENTS)
    return python


def sandbox_speed(settings: SandboxSettings) -> dict[str, float]:
    launcher = detect(settings)
    starts = []
    for _ in range(10):
        sandbox = Sandbox(settings, launcher)
        sandbox.start()
        starts.append(sandbox.started_in_s)
        sandbox.stop()
    sandbox = Sandbox(settings, launcher)
    sandbox.start()
    started = time.perf_counter()
    for _ in range(STEPS):
        sandbox.request({"op": "run", "code": "x = 1"}, 30)
    rate = STEPS / (time.perf_counter() - started)
    sandbox.stop()
    return {"start_s": sorted(starts)[len(starts) // 2], "sequential_steps_per_s": rate}


def served_speed() -> dict[str, float]:
    from coding_env.server.app import build_app
    from coding_support import serve

    with serve(build_app(web=False)) as base_url:
        with CodingEnv(base_url=base_url).sync() as env:
            started = time.perf_counter()
            env.reset()
            start_s = time.perf_counter() - started
            started = time.perf_counter()
            for _ in range(STEPS):
                env.step(CodeAction(code="x = 1"))
            sequential = STEPS / (time.perf_counter() - started)

        async def session() -> None:
            async with CodingEnv(base_url=base_url) as env:
                await env.reset()
                for _ in range(STEPS // 16):
                    await env.step(CodeAction(code="x = 1"))

        async def sixteen() -> float:
            started = time.perf_counter()
            await asyncio.gather(*(session() for _ in range(16)))
            return (STEPS // 16) * 16 / (time.perf_counter() - started)

        parallel = asyncio.run(sixteen())
    return {
        "start_s": start_s,
        "sequential_steps_per_s": sequential,
        "sessions16_steps_per_s": parallel,
    }


def our_escape_suite() -> dict[str, bool]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "local",
         str(REPO / "envs/coding_env/tests/test_escape.py"), "-rA"],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    return {
        line.split("::")[1].split("[")[0]: line.startswith("PASSED")
        for line in done.stdout.splitlines()
        if line.startswith(("PASSED", "FAILED"))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    report: dict[str, object] = {
        "sandbox": sandbox_speed(SandboxSettings()),
        "no sandbox (same interpreter)": sandbox_speed(SandboxSettings(unsafe_no_sandbox=True)),
        "served, WebSocket client": served_speed(),
        "escape suite, ours": our_escape_suite(),
    }
    if not args.no_peer:
        python = str(peer_python())
        run = [python, str(PEER)]
        report["smolagents"] = json.loads(subprocess.check_output([*run, "speed"]))
        for config in ("default", "needed"):
            report[f"escape suite, smolagents ({config} imports)"] = json.loads(
                subprocess.check_output([*run, "escape", config], timeout=1200)
            )
    print(json.dumps(report, indent=2))
    sandboxed = report["sandbox"]["sequential_steps_per_s"]  # type: ignore[index]
    bare = report["no sandbox (same interpreter)"]["sequential_steps_per_s"]  # type: ignore[index]
    print(f"\nsandbox overhead per step: {1e6 / sandboxed - 1e6 / bare:.1f} µs")
    for key, value in report.items():
        if key.startswith("escape suite"):
            print(f"{key}: {sum(value.values())}/{len(value)} contained")  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
