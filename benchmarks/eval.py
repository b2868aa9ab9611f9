"""``openenv eval`` throughput against its floors, on this machine.

    python benchmarks/eval.py [--rollouts 48] [--concurrency 4]

The word game (examples/word_game.py) and ``transformers serve`` with a tiny random-weight model
(examples/tiny_model.py, no download), each in a process of its own on 127.0.0.1. Measured:

- the model floor: the same number of single-turn chat completions sent straight to the model
  server at the same concurrency by a warm raw client (httpx, its connections opened and the
  model warmed by one untimed round first; no environment), what a rollout of one turn cannot
  beat;
- ``openenv eval --model`` with ``--max-turns 1``: rollouts per second, and its ratio to the floor;
- ``openenv eval --policy`` (a Python policy that guesses six words): the environment side alone,
  six steps a rollout, in steps per second.

- Prime Intellect's ``vf-eval`` (the ``verifiers`` package, in a virtual environment of its own:
  see benchmarks/vf_peer.py) on the same server, model and concurrency, one turn a rollout
  through verifiers' OpenEnv taskset, side by side; without it, its line says how to add it.

The model is reached through a relay that ends each streamed answer with ``data: [DONE]`` (see
benchmarks/vf_peer.py), by every measurement alike. "ms outside" is the mean time of a rollout
outside the model: its span less the time its model calls took, as each tool records them
(``duration_s - policy_s`` of openenv eval's rows; a trace's span less its model duration).
A ratio is printed only when neither side had an error: a rollout that failed is not a
rollout played, and a run with errors is not the run measured. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import vf_peer  # noqa: E402
from child_processes import die_with_parent  # noqa: E402
from eval_support import GUESS_POLICY, MAKE_MODEL, SERVE_COMMAND, WORD_TASKS  # noqa: E402
from serving import ServerThread, free_port  # noqa: E402


def start(
    command: list[str], health: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, preexec_fn=die_with_parent,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(health, timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.3)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError(f"{command[0]} did not answer {health}")


async def model_floor(
    base_url: str, model: str, game_url: str, count: int, concurrency: int
) -> float:
    """Seconds for ``count`` one-turn chat completions, ``concurrency`` at a time, each with the
    prompt and tools a rollout's first turn sends."""
    from openenv_hub.eval import Toolset

    limit = asyncio.Semaphore(concurrency)
    tools = (await Toolset.of(game_url)).tools
    body = {"model": model, "max_tokens": 12, "temperature": 1.0, "tools": tools}
    first = json.dumps({"feedback": "", "guesses_left": 6, "message": "Guess the word."})
    message = [{"role": "user", "content": f"Find the secret word.\n\n{first}"}]

    async with httpx.AsyncClient(timeout=300, trust_env=False) as http:

        async def one(seed: int) -> None:
            async with limit:
                reply = await http.post(
                    f"{base_url}/chat/completions", json={**body, "messages": message, "seed": seed}
                )
                reply.raise_for_status()
                if not reply.json().get("choices"):
                    raise RuntimeError(
                        f"the model floor got a reply that is not a completion: {reply.text[:200]}"
                    )

        await asyncio.gather(*(one(-1 - i) for i in range(concurrency)))  # warm, untimed
        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        return time.perf_counter() - started


def run_eval(work: Path, args: list[str]) -> tuple[float, int, float, float, int]:
    """Wall time of one ``openenv eval`` process, its steps, its pass@1, the mean time of a
    rollout outside the model (its duration less its policy calls), in seconds, and how many
    rollouts ended in an error (the process exits 1 then, after writing them)."""
    output = work / f"results-{time.monotonic_ns()}"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "openenv_hub_cli.main", "eval", *args, "-o", str(output)],
        cwd=work, check=False, capture_output=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if not (output / "summary.json").is_file():
        raise RuntimeError(
            f"openenv eval failed ({done.returncode}): {done.stderr.decode()[-2000:]}"
        )
    rows = [json.loads(line) for line in (output / "rollouts.jsonl").read_text().splitlines()]
    summary = json.loads((output / "summary.json").read_text())
    played = [r for r in rows if r["finish"] != "error"] or rows
    outside = sum(r["duration_s"] - r["policy_s"] for r in played) / len(played)
    pass_1 = summary["pass_at_k"].get("1", 0.0)
    return elapsed, sum(r["tool_calls"] for r in rows), pass_1, outside, summary["errors"]


def start_time() -> float:
    """Wall time of the ``openenv`` process alone (``--version``)."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "openenv_hub_cli.main", "--version"]
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=48, help="Rollouts of each measurement.")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--verifiers-python", help=f"Python with verifiers (default {vf_peer.DEFAULT_PYTHON})."
    )
    options = parser.parse_args()
    per_task = max(1, options.rollouts // len(WORD_TASKS))
    count = per_task * len(WORD_TASKS)
    vf_python = vf_peer.verifiers_python(options.verifiers_python)
    work = Path(tempfile.mkdtemp(prefix="openenv-eval-bench-"))
    (work / "tasks").mkdir()
    (work / "tasks" / "test.jsonl").write_text("".join(json.dumps(t) + "\n" for t in WORD_TASKS))
    (work / "guesser.py").write_text(GUESS_POLICY)
    model = str(work / "model")
    script = MAKE_MODEL.format(examples=str(ROOT / "examples"), folder=model)
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    model_port, game_port = free_port(), free_port()
    serving = {**os.environ, "HF_HUB_OFFLINE": "1"}
    processes = []
    relay = None
    try:
        command = SERVE_COMMAND.format(folder=model, port=model_port).split()
        processes.append(start(command, f"http://127.0.0.1:{model_port}/health", serving))
        game = [sys.executable, str(ROOT / "examples" / "word_game.py"), "--port", str(game_port)]
        processes.append(start(game, f"http://127.0.0.1:{game_port}/health"))
        relay = ServerThread(vf_peer.DoneRelay(f"http://127.0.0.1:{model_port}"))
        relay.start()
        base_url, game_url = f"{relay.url}/v1", f"http://127.0.0.1:{game_port}"
        common = ["--tasks", "tasks", "-k", str(per_task), "-c", str(options.concurrency)]
        floor = asyncio.run(model_floor(base_url, model, game_url, count, options.concurrency))
        with_model, _, _, ours, our_errors = run_eval(
            work, [game_url, "--model", model, "--base-url", base_url, "--max-turns", "1",
                   "--max-tokens", "12", *common],
        )  # fmt: skip
        with_policy, steps, pass_1, _, policy_errors = run_eval(
            work, [game_url, "--policy", "guesser:guess", *common]
        )
        launch = start_time()
        peer = None
        if vf_python is not None:
            seeds = [task["reset"]["seed"] for task in WORD_TASKS]
            played = vf_peer.run_vf_eval(
                vf_python, work, model=model, base_url=base_url, game_url=game_url, seeds=seeds,
                per_task=per_task, concurrency=options.concurrency,
            )  # fmt: skip
            peer = (*played, vf_peer.vf_start_time(vf_python))
    finally:
        if relay is not None:
            relay.stop()
        for process in processes:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    report(
        count,
        options.concurrency,
        floor,
        (with_model, launch, ours),
        with_policy,
        steps,
        pass_1,
        peer,
        our_errors + policy_errors,
    )


def report(
    count: int, concurrency: int, floor: float, ours: tuple[float, float, float],
    with_policy: float, steps: int, pass_1: float, peer: tuple[float, int, float, float] | None,
    our_errors: int = 0,
) -> None:  # fmt: skip
    """The table. ``ours`` and ``peer`` hold the wall time, the process start and the mean time
    of a rollout outside the model (the peer's second field: its rollouts without error);
    ``our_errors`` counts openenv eval's rollouts that ended in an error."""
    print(f"{count} rollouts at concurrency {concurrency}, one model turn each")
    rows: list[tuple[str, float, float | None, float | None]] = [
        ("model floor (one completion each, no env)", floor, None, None),
        (f"openenv eval --model, one turn ({our_errors} errors)", ours[0], ours[1], ours[2]),
        ("openenv eval --policy (six guesses at most)", with_policy, None, None),
    ]
    if peer is not None:
        name = f"vf-eval, one turn ({peer[1]} of {count} without error)"
        rows.append((name, peer[0], peer[3], peer[2]))
    print(f"{'measurement':<52}{'seconds':>9}{'rollouts/s':>12}{'start s':>9}{'ms outside':>12}")
    for name, seconds, started, outside in rows:
        start_s = f"{started:.2f}" if started is not None else ""
        outside_ms = f"{outside * 1000:.0f}" if outside is not None else ""
        print(f"{name:<52}{seconds:>9.2f}{count / seconds:>12.2f}{start_s:>9}{outside_ms:>12}")
    launch = ours[1]
    rate = steps / (with_policy - launch)
    print(f"environment side: {steps} steps, {rate:.0f} steps/s; pass@1 {pass_1:.2f}")
    if peer is None:
        where = vf_peer.DEFAULT_PYTHON
        print(f"vf-eval: no Python with verifiers at {where}; see benchmarks/vf_peer.py")
    elif our_errors or peer[1] < count:
        errors = f"openenv eval {our_errors}, vf-eval {count - peer[1]}"
        print(f"no ratio: rollouts ended in an error ({errors}); a run with errors is not measured")
    else:
        ratio = (peer[0] - peer[3]) / (ours[0] - launch)
        print(f"vf-eval / openenv eval wall time, process start left out: {ratio:.2f}x")


if __name__ == "__main__":
    main()
