"""Whole harness rollouts per second: mini-swe-agent solving a task as an environment, against the
same harness run straight at the engine.

    python benchmarks/harness_rollouts.py                 # 10 rollouts a path
    python benchmarks/harness_rollouts.py --rollouts 20

vLLM's CPU build (.venv-vllm) serves the tiny model the harness tests fine-tune on the spot
(tests/harness/harness_model.py), greedy, so every rollout is the same two calls: a ``bash`` call
that writes hello.txt, then the one that submits. mini-swe-agent is the one scripts/test.sh
installs in .venv-mini, unmodified. Two paths, one rollout of each in turn:

- ``direct``: ``mini`` run on the host in a fresh work folder, its model the engine itself,
  asked for greedy decoding (no sandbox, no proxy, no grading: the harness's own cost and the
  engine's);
- ``environment``: ``HarnessEnvironment``: ``reset`` (a fresh folder, a capture session, the
  sandbox started) and ``step`` (the harness's run in its sandbox through the capture proxy,
  then the hidden test run in a grading sandbox of its own).

A rollout counts only when it solved the task (hello.txt written; reward 1 for the environment).
The table gives rollouts per second (one at a time) and the p50 of each phase. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "harness")]

from engine_support.fixtures import fine_tuned_model  # noqa: E402
from engine_support.vllm_engine import Engine, start_engine  # noqa: E402
from harness_model import SOLVE_TASK, SPEC  # noqa: E402
from harness_support import MINI, MINI_CONFIG  # noqa: E402

from openenv_hub.capture import CaptureProxy  # noqa: E402
from openenv_hub.harness import (  # noqa: E402
    HarnessAction,
    HarnessConfig,
    HarnessEnvironment,
    HarnessTask,
    MiniSweAgentAdapter,
)

CONFIG = HarnessConfig(name="mini-swe-agent", model="openai/tiny", max_turns=6)


def direct_rollout(engine: Engine) -> tuple[float, bool]:
    """mini-swe-agent on the host, its model the engine: (seconds, solved)."""
    with tempfile.TemporaryDirectory(prefix="bench-mini-") as folder:
        argv = [str(MINI), "-m", "openai/tiny", "-t", SOLVE_TASK, "-y", "--exit-immediately"]
        argv += ["-c", str(MINI_CONFIG), "-c", f"model.model_kwargs.api_base={engine.base_url}"]
        argv += ["-c", "model.model_kwargs.temperature=0.0"]  # greedy, as the proxy asks
        argv += ["-c", "agent.step_limit=6", "-o", f"{folder}/trajectory.json"]
        variables = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": folder,
            "OPENAI_API_KEY": "unused",
            "MSWEA_CONFIGURED": "true",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "TERM": "dumb",
        }
        started = time.perf_counter()
        subprocess.run(
            argv, cwd=folder, env=variables, capture_output=True, timeout=300, check=False
        )
        seconds = time.perf_counter() - started
        answer = Path(folder) / "hello.txt"
        return seconds, answer.is_file() and answer.read_text() == "hello\n"


def environment_rollout(env: HarnessEnvironment) -> tuple[float, float, bool]:
    """One episode: (reset seconds, step seconds, solved)."""
    started = time.perf_counter()
    first = env.reset(task_id="write-hello")
    reset_s = time.perf_counter() - started
    started = time.perf_counter()
    observation = env.step(HarnessAction(message=first.instruction))
    step_s = time.perf_counter() - started
    return reset_s, step_s, observation.reward == 1.0 and observation.model_calls == 2


def task(folder: Path) -> HarnessTask:
    tests = folder / "tests"
    tests.mkdir(parents=True)
    (tests / "test.sh").write_text("grep -qx hello /workspace/hello.txt\n")
    return HarnessTask("write-hello", SOLVE_TASK, tests=tests)


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10)
    args = parser.parse_args()
    if not MINI.exists():
        sys.exit(f"{MINI} is missing: bash scripts/test.sh installs mini-swe-agent there")
    model = fine_tuned_model(SPEC)
    with (
        tempfile.TemporaryDirectory(prefix="bench-harness-") as scratch,
        start_engine(model, Path(scratch) / "engine.log") as engine,
    ):
        proxy = CaptureProxy(
            engine_url=engine.base_url,
            model=engine.model,
            tokenizer=model,
            sampling={"temperature": 0.0},
            max_tokens_cap=256,
        ).start()
        adapter = MiniSweAgentAdapter(CONFIG, executable=MINI, config_file=MINI_CONFIG)
        tasks = {"write-hello": task(Path(scratch) / "task")}
        env = HarnessEnvironment(adapter, proxy=proxy, tasks=tasks)
        try:
            measured = measure(engine, env, args.rollouts)
        finally:
            env.close()
            proxy.stop()
    report(*measured, args.rollouts)


def measure(
    engine: Engine, env: HarnessEnvironment, rollouts: int
) -> tuple[list[float], list[float], list[float], dict[str, int]]:
    """``rollouts`` of each path, in turn, after one of each to warm up: the direct rollouts'
    seconds, the environment's reset and step seconds, and how many of each failed."""
    direct: list[float] = []
    resets: list[float] = []
    steps: list[float] = []
    failed = {"direct": 0, "environment": 0}
    direct_rollout(engine)
    environment_rollout(env)
    for _ in range(rollouts):
        seconds, solved = direct_rollout(engine)
        if solved:
            direct.append(seconds)
        else:
            failed["direct"] += 1
        reset_s, step_s, solved = environment_rollout(env)
        if solved:
            resets.append(reset_s)
            steps.append(step_s)
        else:
            failed["environment"] += 1
    return direct, resets, steps, failed


def report(
    direct: list[float],
    resets: list[float],
    steps: list[float],
    failed: dict[str, int],
    rollouts: int,
) -> None:
    total = [r + s for r, s in zip(resets, steps, strict=True)]
    print(f"{rollouts} rollouts a path, one at a time; load average {os.getloadavg()[0]:.1f}")
    print("| path | solved | rollouts/s | p50 s | p50 reset s | p50 step s |")
    print("|---|---|---|---|---|---|")
    rate = len(direct) / sum(direct) if direct else 0.0
    print(f"| direct | {len(direct)}/{rollouts} | {rate:.2f} | {p50(direct):.2f} | | |")
    rate = len(total) / sum(total) if total else 0.0
    print(
        f"| environment | {len(total)}/{rollouts} | {rate:.2f} | {p50(total):.2f} "
        f"| {p50(resets):.2f} | {p50(steps):.2f} |"
    )
    if any(failed.values()):
        print(f"failed: {failed}")


if __name__ == "__main__":
    main()
