"""Served steps per second of the Atari, chess and trading environments, side by side.

    python benchmarks/envs.py                                   # ours and the floors
    python benchmarks/envs.py --openenv-checkout PATH           # and OpenEnv's own envs
    python benchmarks/envs.py --quick                           # a short smoke run

For each environment: the environment stepped in-process (the floor: no server, no JSON), and
served over /ws to one client (sequential) and to 16 clients at once, each on its own session.
With ``--openenv-checkout`` (a clone of github.com/huggingface/OpenEnv), OpenEnv's published
``envs/atari_env`` and ``envs/chess_env`` are served by the `openenv` package from a virtual
environment of their own (made once, under the openenv-hub cache) and driven the same way.
Every server runs in its own process on 127.0.0.1; every client is openenv-hub's
GenericEnvClient, so the differences come from the servers (ours sends frames as PNG, OpenEnv's
Atari a list of 100,800 integers). Each client picks its next action from the last observation
(a random legal move for chess), as an agent would.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

from core import Server  # noqa: E402
from peer_venv import REQUIREMENTS, cache_root  # noqa: E402

from openenv_hub import GenericEnvClient  # noqa: E402

SESSIONS = 16
PEER_EXTRAS = ["ale-py==0.12.1", "chess==1.11.2", "numpy==2.4.6"]
# OpenEnv's chess env imports moonfish (for its default opponent and an evaluation it adds to
# every observation); moonfish's own requirements are development tools (pyinstaller, flask,
# black...), so it is installed without them.
PEER_NO_DEPS = ["moonfish==0.0.1"]

Policy = Callable[[dict[str, Any], np.random.Generator], dict[str, Any]]


def atari_action(observation: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {"action": int(rng.integers(4))}


def peer_atari_action(observation: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {"action_id": int(rng.integers(4))}


def chess_action(observation: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    moves = observation.get("legal_moves") or ["e2e4"]
    return {"move": moves[int(rng.integers(len(moves)))]}


def trading_action(observation: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {"actions": [float(rng.uniform(-1, 1))]}


@dataclass
class Bench:
    name: str
    app: str  # our app, as module:attribute
    reset: dict[str, Any]
    policy: Policy
    floor: Callable[[int], float]  # steps -> steps/s, in-process
    peer_launcher: str | None = None  # Python source serving OpenEnv's env
    peer_policy: Policy | None = None
    peer_note: str = ""


# -- floors: the environments stepped in-process ----------------------------------------------


def atari_floor(steps: int) -> float:
    from atari_env import AtariAction
    from atari_env.server.environment import AtariEnvironment

    env, rng = AtariEnvironment(), np.random.default_rng(0)
    env.reset(seed=0, game="breakout", repeat_action_probability=0.0)
    started = time.perf_counter()
    for _ in range(steps):
        if env.step(AtariAction(action=int(rng.integers(4)))).done:
            env.reset()
    return steps / (time.perf_counter() - started)


def chess_floor(steps: int) -> float:
    from chess_env import ChessAction
    from chess_env.server.environment import ChessEnvironment

    env, rng = ChessEnvironment(), np.random.default_rng(0)
    observation = env.reset(seed=0, opponent="random")
    started = time.perf_counter()
    for _ in range(steps):
        moves = observation.legal_moves
        observation = env.step(ChessAction(move=moves[int(rng.integers(len(moves)))]))
        if observation.done:
            observation = env.reset()
    return steps / (time.perf_counter() - started)


def trading_floor(steps: int) -> float:
    from finance_env import TradingAction
    from finance_env.server.environment import TradingEnvironment

    env, rng = TradingEnvironment(), np.random.default_rng(0)
    env.reset(data="googl")
    started = time.perf_counter()
    for _ in range(steps):
        if env.step(TradingAction(actions=[float(rng.uniform(-1, 1))])).done:
            env.reset()
    return steps / (time.perf_counter() - started)


PEER_ATARI = """
import os, sys, uvicorn
sys.path.insert(0, {envs!r})
os.environ.setdefault("ATARI_GAME", "breakout")
from openenv.core.env_server import create_app
from atari_env.models import AtariAction, AtariObservation
from atari_env.server.app import create_atari_environment
from atari_env.server.atari_environment import AtariEnvironment
# Each session gets an emulator of its own, but the class does not say it supports concurrent
# sessions, and OpenEnv then allows one; it is marked here so that it can serve 16.
AtariEnvironment.SUPPORTS_CONCURRENT_SESSIONS = True
app = create_app(create_atari_environment, AtariAction, AtariObservation, env_name="atari_env",
                 max_concurrent_envs=64)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[-1]), log_level="warning")
"""

PEER_CHESS = """
import sys, uvicorn
sys.path.insert(0, {envs!r})
from openenv.core.env_server import create_app
from chess_env.models import ChessAction, ChessObservation
from chess_env.server.chess_environment import ChessEnvironment
ChessEnvironment.SUPPORTS_CONCURRENT_SESSIONS = True  # one board per session, as for Atari
app = create_app(lambda: ChessEnvironment(opponent="random"), ChessAction, ChessObservation,
                 env_name="chess_env", max_concurrent_envs=64)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[-1]), log_level="warning")
"""

BENCHES = [
    Bench(
        "Atari (Breakout, rgb frames, frameskip 4)",
        "atari_env.server.app:app",
        {"seed": 0, "game": "breakout", "repeat_action_probability": 0.0},
        atari_action,
        atari_floor,
        PEER_ATARI,
        peer_atari_action,
    ),
    Bench(
        "chess (random opponent, random legal moves)",
        "chess_env.server.app:app",
        {"seed": 0, "opponent": "random"},
        chess_action,
        chess_floor,
        PEER_CHESS,
        chess_action,
    ),
    Bench(
        "trading (GOOGL daily, one asset)",
        "finance_env.server.app:app",
        {"data": "googl"},
        trading_action,
        trading_floor,
        peer_note="OpenEnv's finrl_env imports the `finrl` package, whose import pulls in "
        "stable-baselines3 and PyTorch (and pins numpy 1.24, pandas 2.0): not installable "
        "within this machine's budget, so trading is compared with its floor only.",
    ),
]


# -- servers and clients ----------------------------------------------------------------------


def peer_envs_python() -> Path:
    """A venv with the `openenv` package (the pins of tests/peer) and the envs' libraries."""
    pins = REQUIREMENTS.read_text() + "\n".join(PEER_EXTRAS + PEER_NO_DEPS)
    import hashlib

    root = cache_root() / f"peer-envs-{hashlib.sha256(pins.encode()).hexdigest()[:12]}"
    python = root / "bin" / "python"
    if not (root / ".complete").exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(root)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "-r", str(REQUIREMENTS), *PEER_EXTRAS], check=True)
        subprocess.run([*pip, "--no-deps", *PEER_NO_DEPS], check=True)
        (root / ".complete").write_text(pins)
    return python


async def sequential(url: str, bench: Bench, policy: Policy, steps: int, peer: bool) -> float:
    rng = np.random.default_rng(0)
    async with GenericEnvClient(url, message_timeout_s=120) as env:
        result = await env.reset(**({} if peer else bench.reset))
        for _ in range(20):
            result = await env.step(policy(result.observation, rng))
            if result.done:
                result = await env.reset()
        started = time.perf_counter()
        for _ in range(steps):
            result = await env.step(policy(result.observation, rng))
            if result.done:
                result = await env.reset()
        return steps / (time.perf_counter() - started)


async def concurrent(url: str, bench: Bench, policy: Policy, steps: int, peer: bool) -> float:
    clients = [GenericEnvClient(url, message_timeout_s=300) for _ in range(SESSIONS)]
    firsts = await asyncio.gather(*(c.reset(**({} if peer else bench.reset)) for c in clients))

    async def run(env: GenericEnvClient, result: Any, seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            result = await env.step(policy(result.observation, rng))
            if result.done:
                result = await env.reset()

    started = time.perf_counter()
    await asyncio.gather(
        *(run(c, r, i) for i, (c, r) in enumerate(zip(clients, firsts, strict=True)))
    )
    elapsed = time.perf_counter() - started
    await asyncio.gather(*(c.close() for c in clients))
    return SESSIONS * steps / elapsed


def serve_ours(bench: Bench) -> Server:
    module, attribute = bench.app.split(":")
    code = (
        f"import sys; from openenv_hub import serve_app; from {module} import {attribute} as app; "
        "serve_app(app, port=int(sys.argv[-1]), log_level='warning')"
    )
    return Server("openenv-hub", [sys.executable, "-c", code])


def measure(
    server: Server, bench: Bench, policy: Policy, args: argparse.Namespace, peer: bool
) -> dict[str, float]:
    server.start()
    try:
        return {
            "sequential": asyncio.run(sequential(server.url, bench, policy, args.steps, peer)),
            "16 sessions": asyncio.run(
                concurrent(server.url, bench, policy, args.concurrent_steps, peer)
            ),
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--openenv-checkout", type=Path, help="a clone of huggingface/OpenEnv")
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    args = parser.parse_args()
    args.steps = 200 if args.quick else 2000
    args.concurrent_steps = 20 if args.quick else 150
    peer_python = peer_envs_python() if args.openenv_checkout else None
    os.environ.setdefault("MAX_CONCURRENT_ENVS", "64")
    for bench in BENCHES:
        floor = bench.floor(args.steps)
        ours = measure(serve_ours(bench), bench, bench.policy, args, peer=False)
        theirs: dict[str, float] = {}
        if peer_python and bench.peer_launcher and bench.peer_policy:
            assert args.openenv_checkout is not None
            launcher = Path(tempfile.mkdtemp()) / "serve.py"
            envs_dir = str(args.openenv_checkout.resolve() / "envs")
            launcher.write_text(bench.peer_launcher.format(envs=envs_dir))
            server = Server("openenv", [str(peer_python), str(launcher)])
            theirs = measure(server, bench, bench.peer_policy, args, peer=True)
        report(bench, floor, ours, theirs)


def report(bench: Bench, floor: float, ours: dict[str, float], theirs: dict[str, float]) -> None:
    print(f"\n## {bench.name}\n")
    print(
        "| steps/s | openenv-hub | OpenEnv's env | in-process floor | ours/OpenEnv | ours/floor |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for key in ("sequential", "16 sessions"):
        peer = theirs.get(key)
        peer_text = f"{peer:,.0f}" if peer else "-"
        ratio = f"{ours[key] / peer:.2f}x" if peer else "-"
        print(
            f"| {key} | {ours[key]:,.0f} | {peer_text} | {floor:,.0f} | {ratio} | "
            f"{ours[key] / floor:.2f}x |"
        )
    if bench.peer_note:
        print(f"\n{bench.peer_note}")


if __name__ == "__main__":
    main()
