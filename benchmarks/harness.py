"""The capture proxy's added latency per model call, against calling the engine directly.

    python benchmarks/harness.py                      # the fake engine, then vLLM
    python benchmarks/harness.py --engines fake       # the proxy's own cost only
    python benchmarks/harness.py --rounds 40 --turns 4 --wires chat,messages

Two engines, each in a process of its own on 127.0.0.1, and the proxy in another:

- ``fake``: a trivial engine (tests/engine_support/fake_engine.py) that answers at once, so
  what the proxy adds is most of what is measured: its own cost;
- ``vllm``: vLLM's CPU build (.venv-vllm) serving the tiny chat model fine-tuned on the spot
  (tests/engine_support), answering greedily, so both paths get the same answers.

A round runs the same scripted conversation (``--turns`` calls: an answer, a tool result or a
user line, the next call) straight to the engine's chat completions (as a harness asks, and
asking for token ids and logprobs as the proxy does, so the engine does the same work) and
through the proxy, in each wire format of ``--wires``, one path after the other, alternating
which goes first. The
proxy has the model's tokenizer, so from the second call on it builds each prompt from ids (the
engine then skips rendering it); the direct path sends the messages. Each call's time is from
sending the request to having the whole answer, on one kept-alive connection. The table gives
p50 and p99 of each path and what the proxy adds: the difference of the two, and the median of
the differences of paired calls (the same call of the same round on each path, which a change
of the machine's load between calls moves less). Last, the proxy's own time inside a call (its
records' ``total_ms - engine_ms``: translation, continuation lookup, prompt building,
recording) and the proxy process's CPU time per call, all of it (HTTP both ways included): on a
busy machine the wall-clock figures hold time spent waiting for a core, which the CPU time does
not. Nothing is asserted.

Rollouts per second of whole harness episodes are measured where harnesses run
(HarnessEnvironment); this script measures the proxy alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "capture")]

from child_processes import end_child, start_child  # noqa: E402
from engine_support.fixtures import fine_tuned_model  # noqa: E402
from engine_support.trajectories import CONVERSATIONS, SPEC  # noqa: E402
from engine_support.vllm_engine import start_engine  # noqa: E402
from scripted_harness import ScriptedHarness  # noqa: E402
from serving import free_port  # noqa: E402

#: Greedy, with room for every trained answer to end: both paths then get the same answers.
GREEDY: dict[str, Any] = {"temperature": 0, "max_tokens": 64}
#: What the proxy asks of the engine on every call: a direct path that asks it too does the
#: same work in the engine, and what is left is the proxy's hop.
IDS_ASKED = {"return_token_ids": True, "logprobs": True, "top_logprobs": 0}


def serve_fake(port: int) -> None:
    """Serve the fake engine on 127.0.0.1:``port`` (a child process of this script)."""
    import uvicorn
    from engine_support.fake_engine import create_fake_engine

    uvicorn.run(create_fake_engine(), host="127.0.0.1", port=port, log_level="warning")


def serve_proxy() -> None:
    """Run a proxy as stdin's first line asks (JSON: engine_url, model, tokenizer, sessions),
    print its URL and session keys as one JSON line, and stop when stdin closes."""
    from openenv_hub.capture import CaptureProxy

    asked = json.loads(sys.stdin.readline())
    proxy = CaptureProxy(
        engine_url=asked["engine_url"], model=asked["model"], tokenizer=asked["tokenizer"]
    )
    with proxy:
        sessions = [proxy.open_session() for _ in range(asked["sessions"])]
        print(json.dumps({"url": proxy.url, "keys": [s.key for s in sessions]}), flush=True)
        started = resource.getrusage(resource.RUSAGE_SELF)
        sys.stdin.read()  # until the benchmark closes it
        ended = resource.getrusage(resource.RUSAGE_SELF)
        cpu_s = (ended.ru_utime - started.ru_utime) + (ended.ru_stime - started.ru_stime)
        calls = [c for s in sessions for c in s.calls]
        inside = [c.total_ms - c.engine_ms for c in calls]
        engine = [c.engine_ms for c in calls]
        cpu_ms = cpu_s * 1000 / max(1, len(calls))
        print(json.dumps({"inside_ms": inside, "engine_ms": engine, "cpu_ms": cpu_ms}), flush=True)


@contextlib.contextmanager
def proxy_process(
    engine_url: str, model: str, tokenizer: Path, sessions: int
) -> Iterator[tuple[Any, dict[str, Any]]]:
    process = start_child(
        [sys.executable, __file__, "--serve-proxy"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        asked = {
            "engine_url": engine_url,
            "model": model,
            "tokenizer": str(tokenizer),
            "sessions": sessions,
        }
        process.stdin.write(json.dumps(asked) + "\n")  # the keys travel by pipe, never argv
        process.stdin.flush()
        yield process, json.loads(process.stdout.readline())
    finally:
        end_child(process, timeout_s=10)


@contextlib.contextmanager
def fake_engine() -> Iterator[str]:
    port = free_port()
    process = start_child([sys.executable, __file__, "--serve-fake", str(port)])
    try:
        for _ in range(200):
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions", json={"messages": []}, timeout=1
                )
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        end_child(process, timeout_s=10)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(
    engine_root: str, model: str, tokenizer: Path, wires: list[str], rounds: int, turns: int
) -> dict[str, list[float]]:
    """Per-call seconds of each path (``direct``, ``direct, ids asked``, ``proxy WIRE``), and
    ``inside`` (ms)."""
    times: dict[str, list[float]] = {"direct": [], "direct, ids asked": []}
    times.update({f"proxy {w}": [] for w in wires})
    with proxy_process(f"{engine_root}/v1", model, tokenizer, rounds * len(wires)) as (
        process,
        proxy,
    ):
        keys = iter(proxy["keys"])
        with httpx.Client() as client:
            for number in range(rounds):
                line = CONVERSATIONS[number % len(CONVERSATIONS)][0]["content"]
                paths = [
                    ("direct", engine_root, None, "chat", GREEDY),
                    ("direct, ids asked", engine_root, None, "chat", {**GREEDY, **IDS_ASKED}),
                    *((f"proxy {w}", proxy["url"], "key", w, GREEDY) for w in wires),
                ]
                if number % 2:
                    paths.reverse()
                for name, url, key, wire, sampling in paths:
                    harness = ScriptedHarness(
                        url,
                        next(keys) if key else None,
                        wire,
                        stream=False,
                        seed=number,
                        sampling=sampling,
                        client=client,
                    )
                    harness.run(line, turns)
                    times[name].extend(harness.seconds[1:] if number == 0 else harness.seconds)
        process.stdin.close()
        seen = json.loads(process.stdout.readline())
        times["inside"], times["engine"] = seen["inside_ms"], seen["engine_ms"]
        times["cpu"] = [seen["cpu_ms"]]
        process.wait(timeout=30)  # it stops by itself once stdin is closed
    return times


def report(engine: str, times: dict[str, list[float]]) -> None:
    direct = times["direct"]
    print(f"\n{engine}: {len(direct)} calls a path")
    print("| path | p50 ms | p99 ms | added p50 ms | added p99 ms | paired added p50 ms |")
    print("|---|---|---|---|---|---|")
    d50, d99 = percentile(direct, 0.5) * 1000, percentile(direct, 0.99) * 1000
    print(f"| direct | {d50:.2f} | {d99:.2f} | | | |")
    for name, seconds in times.items():
        if name not in ("direct", "inside", "engine", "cpu"):
            p50, p99 = percentile(seconds, 0.5) * 1000, percentile(seconds, 0.99) * 1000
            paired = statistics.median(p - d for p, d in zip(seconds, direct, strict=True)) * 1000
            print(
                f"| {name} | {p50:.2f} | {p99:.2f} | {p50 - d50:+.2f} | {p99 - d99:+.2f} "
                f"| {paired:+.2f} |"
            )
    inside, engine = times["inside"], times["engine"]
    print(
        f"the engine's time as the proxy saw it: p50 {statistics.median(engine):.2f} ms, "
        f"p99 {percentile(engine, 0.99):.2f} ms"
    )
    print(
        f"the proxy's own work inside a call (its records): p50 {statistics.median(inside):.2f} ms, "
        f"p99 {percentile(inside, 0.99):.2f} ms"
    )
    print(
        f"the proxy process's CPU time per call (all of it: HTTP both ways, JSON, capture): "
        f"{times['cpu'][0]:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="fake,vllm")
    parser.add_argument("--wires", default="chat,messages,responses")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--serve-fake", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-proxy", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fake:
        return serve_fake(args.serve_fake)
    if args.serve_proxy:
        return serve_proxy()
    wires = args.wires.split(",")
    model_folder = fine_tuned_model(SPEC)
    print(f"{args.rounds} rounds of {args.turns} calls; wire formats {', '.join(wires)}")
    for engine in args.engines.split(","):
        if engine == "fake":
            with fake_engine() as root:
                report(
                    "fake engine",
                    measure(root, "tiny", model_folder, wires, args.rounds, args.turns),
                )
        else:
            with start_engine(model_folder, ROOT / "benchmarks" / "results" / "vllm.log") as vllm:
                report(
                    "vLLM (CPU)",
                    measure(vllm.url, vllm.model, model_folder, wires, args.rounds, args.turns),
                )
    return None


if __name__ == "__main__":
    main()
