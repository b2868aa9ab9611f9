"""benchmarks/targets.py runs as its docstring says, and the ratios it and core.py print are the
paired ones the targets are set in (each round's figure over the same round's)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi import FastAPI, WebSocket
from serving import ServerThread

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
try:
    import core
    import raw_clients
    import targets
finally:  # benchmarks/ui.py and the like must not shadow the tests' own packages (tests/ui)
    sys.path.remove(str(BENCHMARKS))


def test_paired_ratios_divide_each_round_by_the_same_round() -> None:
    rounds = [
        {
            "floor": {"seq": 100.0, "http": 50.0, "seq raw": 200.0, "http raw": 100.0},
            "typed: ours": {"seq": 80.0, "http": 30.0, "seq raw": 100.0, "http raw": 60.0},
            "typed: openenv": {"seq": 40.0, "http": 20.0, "seq raw": 40.0, "http raw": 30.0},
            "echo: ours": {"seq": 60.0, "http": 10.0, "c32": 90.0},
            "typed: before old": {"seq": 40.0, "http": 15.0, "seq raw": 50.0, "http raw": 30.0},
            "echo: before old": {"seq": 30.0, "http": 20.0, "c32": 45.0},
        },
        {
            "floor": {"seq": 200.0, "http": 100.0, "seq raw": 100.0, "http raw": 90.0},
            "typed: ours": {"seq": 100.0, "http": 40.0, "seq raw": 75.0, "http raw": 45.0},
            "typed: openenv": {"seq": 40.0, "http": 80.0, "seq raw": 30.0, "http raw": 30.0},
            "echo: ours": {"seq": 60.0, "http": 10.0, "c32": 90.0},
            "typed: before old": {"seq": 100.0, "http": 40.0, "seq raw": 75.0, "http raw": 90.0},
            "echo: before old": {"seq": 60.0, "http": 10.0, "c32": 90.0},
        },
    ]
    ratios = targets.paired(rounds)
    assert ratios["typed sequential / floor"] == [0.8, 0.5]
    assert ratios["typed HTTP / openenv typed HTTP"] == [1.5, 0.5]
    assert ratios["typed HTTP / old"] == [2.0, 1.0]
    assert ratios["echo 32 sessions / old"] == [2.0, 1.0]
    assert ratios["echo HTTP / old"] == [0.5, 1.0]
    assert ratios["raw clients: typed sequential / floor"] == [0.5, 0.75]
    assert ratios["raw clients: typed HTTP / openenv typed HTTP"] == [2.0, 1.5]
    assert ratios["raw clients: floor HTTP / openenv typed HTTP"] == [100 / 30, 3.0]
    assert ratios["raw clients: typed HTTP / old"] == [2.0, 0.5]


def test_core_compares_every_older_checkout_named_by_its_folder(tmp_path: Path) -> None:
    first, second = tmp_path / "at-one", tmp_path / "at-two"
    names = [name for name, *_ in core.servers("python", "peer-python", [first, second])]
    assert names[:4] == ["floor", "typed: ours", "typed: before at-one", "typed: before at-two"]
    assert names[-2:] == ["echo: before at-one", "echo: before at-two"]


@pytest.mark.timeout(600)
def test_one_short_round_prints_every_server_and_the_ratios() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "targets.py"), "--rounds", "1", "--slices", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=540,
    )
    for name in ("floor", "typed: ours", "typed: openenv", "echo: ours"):
        assert f"  {name} " in out.stdout, out.stdout
    rows = [line.split(" | ")[0] for line in out.stdout.splitlines() if line.startswith("| ")]
    assert rows[1:] == [
        "| typed sequential / floor",
        "| typed HTTP / openenv typed HTTP",
        "| echo sequential / floor",
        "| raw clients: typed sequential / floor",
        "| raw clients: typed HTTP / openenv typed HTTP",
        "| raw clients: floor HTTP / openenv typed HTTP",
        "| floor HTTP / openenv typed HTTP",
    ]
    assert "seq raw" in out.stdout and "http raw" in out.stdout


def test_the_bare_clients_count_only_answers_that_are_observations() -> None:
    server = core.Server("typed", [sys.executable, str(BENCHMARKS / "servers" / "typed.py")])
    server.start()
    try:
        assert raw_clients.ws_steps(server.url, core.TYPED_ACTION, 50) > 0
        assert raw_clients.http_steps(server.url, core.TYPED_ACTION, 0.1) > 0
        with pytest.raises(RuntimeError, match="'error', not an observation"):
            raw_clients.ws_steps(server.url, {"not_a_field": 1}, 5)
        with pytest.raises(RuntimeError, match="422"):
            raw_clients.http_steps(server.url, {"not_a_field": 1}, 0.1)
    finally:
        server.stop()


def test_the_bare_websocket_client_fails_on_an_error_in_the_middle_of_a_timed_run() -> None:
    """A server that answers one timed step with an error and then recovers is not measured:
    every answer is looked at, not only the warm-up's and the last."""
    app = FastAPI()

    @app.websocket("/ws")
    async def steps(socket: WebSocket) -> None:
        await socket.accept()
        for number in itertools.count():
            await socket.receive_text()
            kind = "error" if number == raw_clients.WARM_UP_STEPS + 10 else "observation"
            await socket.send_text(json.dumps({"type": kind, "data": {}}))

    server = ServerThread(app)
    server.start()
    try:
        with pytest.raises(RuntimeError, match="'error', not an observation"):
            raw_clients.ws_steps(server.url, core.TYPED_ACTION, 30)
    finally:
        server.stop()
