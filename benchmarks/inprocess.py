"""The server's own cost per request, measured in one process with no network: CPU time and
turns of the event loop per ``/ws`` step and per HTTP ``POST /step``, here and in older checkouts.

    python benchmarks/inprocess.py                          # this checkout
    python benchmarks/inprocess.py --before ../old --rounds 7
    python benchmarks/inprocess.py --peer                   # and the `openenv` package's servers

A scripted client speaks ASGI to the app directly (a sequential client: the next frame or
request when the reply is out), so what is measured is the server's work: uvicorn's protocol and
the kernel are left out. CPU time (``time.process_time``, every thread of the process) does not
count time spent waiting for a core, so on a busy machine these figures hold far better than
wall-clock rates; turns of the event loop are exact. Each round measures every checkout once, in
alternating order; the table gives medians and each checkout's paired ratio to the first.
``--peer`` measures the `openenv` package's typed and echo servers (tests/peer) the same way, in
its own virtual environment (tests/peer_venv.py), as one more checkout named ``openenv``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEER = "openenv"  # the name the `openenv` package's servers are measured under
KINDS = ("ws typed inline", "ws typed threads", "ws echo", "http typed", "http echo")
ECHO_ACTION = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "hello"}}
TYPED_ACTION = {"message": "hello"}


def _app(kind: str, peer: bool = False) -> Any:
    """The app of ``kind``, built from whichever checkout is on ``sys.path`` (``peer``: the
    `openenv` package's server of that kind, from tests/peer)."""
    if peer:
        if kind.endswith("inline"):
            raise SystemExit(f"the openenv package has no {kind!r} server")
        sys.path.insert(0, str(ROOT / "tests" / "peer"))
        server = __import__("echo_server" if "echo" in kind else "typed_server")
        return server.app
    if "echo" in kind:
        from echo_env.server.app import app

        return app
    sys.path.insert(0, str(ROOT / "benchmarks" / "servers"))
    import typed  # the same environment as core.py's typed server

    from openenv_hub import create_app

    options = {"run_on_event_loop": True} if kind.endswith("inline") else {}
    return create_app(typed.TypedEcho, typed.MessageAction, typed.EchoedObservation, **options)


class LoopTurns:
    """Counts the turns of the running event loop (a test double of its one-turn method)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.count = 0
        turn = loop._run_once  # type: ignore[attr-defined]

        def counted() -> None:
            self.count += 1
            turn()

        loop._run_once = counted  # type: ignore[attr-defined]


async def _ws_steps(app: Any, step: str, count: int) -> None:
    """A sequential client on /ws: reset, then ``count`` steps, then gone."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    inbox.put_nowait({"type": "websocket.connect"})
    left = count

    async def send(message: dict[str, Any]) -> None:
        nonlocal left
        if message["type"] == "websocket.accept":
            inbox.put_nowait({"type": "websocket.receive", "text": '{"type":"reset"}'})
        elif message["type"] == "websocket.send":
            frame = step if left else None
            left -= 1
            if frame is None:
                inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
            else:
                inbox.put_nowait({"type": "websocket.receive", "text": frame})

    await app(_scope("websocket", "/ws"), inbox.get, send)


async def _http_steps(app: Any, body: bytes, count: int) -> None:
    """``count`` stateless ``POST /step`` requests, one after the other."""
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"POST /step answered {message['status']}")

    for _ in range(count):
        await app(_scope("http", "/step", headers), _receiver(body), send)


def _receiver(body: bytes) -> Any:
    """An ASGI ``receive`` that gives the body, then waits as uvicorn does while the client
    stays."""
    sent = False
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await never.wait()
        return {"type": "http.disconnect"}

    return receive


def _scope(
    kind: str, path: str, headers: list[tuple[bytes, bytes]] | None = None
) -> dict[str, Any]:
    return {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http" if kind == "http" else "ws",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), *(headers or [])],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "subprotocols": [],
    }


async def _measure(kind: str, count: int, peer: bool = False) -> dict[str, float]:
    app = _app(kind, peer)
    action = ECHO_ACTION if "echo" in kind else TYPED_ACTION
    if kind.startswith("ws"):
        step = json.dumps({"type": "step", "data": action})

        def run(n: int) -> Any:
            return _ws_steps(app, step, n)
    else:
        body = json.dumps({"action": action}).encode()

        def run(n: int) -> Any:
            return _http_steps(app, body, n)

    async with app.router.lifespan_context(app):
        await run(200)  # warm up
        turns = LoopTurns(asyncio.get_running_loop())
        cpu = time.process_time()
        await run(count)
        cpu = time.process_time() - cpu
    return {"cpu µs": cpu / count * 1e6, "loop turns": turns.count / count}


def _child(kind: str, count: int, peer: bool) -> None:
    print(json.dumps(asyncio.run(_measure(kind, count, peer))))


def _run_in(checkout: Path | None, kind: str, count: int) -> dict[str, float] | None:
    """The measurement in a process of its own on ``checkout``'s code, or the `openenv`
    package's (``None``) (None: it cannot run there, e.g. a checkout from before
    ``run_on_event_loop``)."""
    if checkout is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from peer_venv import ensure_peer_python

        python, path, extra = str(ensure_peer_python()), "", ["--peer"]
    else:
        python, extra = sys.executable, []
        path = os.pathsep.join([str(checkout), str(checkout / "envs" / "echo_env")])
    out = subprocess.run(
        [python, __file__, "--child", kind, "--count", str(count), *extra],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        return None
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", type=Path, action="append", default=[], help="an older checkout (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=2000, help="steps or requests per measurement")
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="a comma-separated subset of: " + ", ".join(KINDS)
    )
    parser.add_argument(
        "--peer", action="store_true", help="also measure the openenv package's servers"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.count, args.peer)
        return
    checkouts: dict[str, Path | None] = {
        "this": ROOT,
        **{path.name: path.resolve() for path in args.before},
    }
    if args.peer:
        checkouts[PEER] = None
    kinds = [k.strip() for k in args.kinds.split(",")]
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for number in range(args.rounds):
        order = list(checkouts.items())
        order = order if number % 2 == 0 else order[::-1]
        for kind in kinds:
            for name, path in order:
                result = _run_in(path, kind, args.count)
                if result is None:
                    continue
                results.setdefault((kind, name), []).append(result)
                print(
                    f"round {number + 1}: {kind:17} {name:12} {result['cpu µs']:7.1f} µs CPU, "
                    f"{result['loop turns']:.1f} turns",
                    file=sys.stderr,
                    flush=True,
                )
    first = next(iter(checkouts))
    print(
        f"\n| measurement | checkout | CPU µs (median) | ratio to {first} (median, range) | loop turns |"
    )
    print("|---|---|---:|---:|---:|")
    for kind in kinds:
        base = [r["cpu µs"] for r in results.get((kind, first), [])]
        for name in checkouts:
            if (kind, name) not in results or not base:
                print(f"| {kind} | {name} | - | - | - |")
                continue
            cpu = [r["cpu µs"] for r in results[(kind, name)]]
            ratios = [c / b for c, b in zip(cpu, base, strict=True)]
            turns = statistics.median(r["loop turns"] for r in results[(kind, name)])
            print(
                f"| {kind} | {name} | {statistics.median(cpu):.1f} | "
                f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | {turns:.1f} |"
            )


if __name__ == "__main__":
    main()
