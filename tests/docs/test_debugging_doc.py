"""docs/debugging.md: the recording app and the fork example, run as printed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from serving import ServerThread

from openenv_hub import create_app
from openenv_hub.gymnasium import GymnasiumEnvironment
from openenv_hub.trajectories import read_records

DOC = "docs/debugging.md"
Blackjack = GymnasiumEnvironment.factory("Blackjack-v1").client_class()


def record_hands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Hands played on the app of the 'record' block, hitting below 17, in ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(doc_block(DOC, "record").code, namespace)
    server = ServerThread(namespace["app"])
    server.start()
    try:
        with Blackjack(base_url=server.url).sync() as env:
            for seed in range(10):
                result = env.reset(seed=seed)
                while not result.done:
                    player_sum = result.observation.observation[0]
                    result = env.step(Blackjack.action_type(action=int(player_sum < 17)))
    finally:
        server.stop()
    return read_records(tmp_path / "episodes.jsonl")


def test_the_fork_example_plays_on_from_the_recorded_hand(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    records = record_hands(tmp_path, monkeypatch)
    assert {r["source"] for r in records} == {"server"} and len(records) > 20
    server = serve(create_app(GymnasiumEnvironment.factory("Blackjack-v1")))
    exec(doc_block(DOC, "fork").code.replace("http://127.0.0.1:8000", server.url), {})
    out = capsys.readouterr().out
    found = re.search(r"cards at step (\d+) of the recording: \((\d+), (\d+), (\d)\)", out)
    assert found, out
    step, cards = int(found[1]), [int(found[i]) for i in (2, 3, 4)]
    hands = [[r for r in records if r["episode"] == n] for n in range(10)]
    longest = max(hands, key=len)
    assert step == len(longest) - 2 >= 1
    assert cards == json.loads(longest[step]["observation"])["observation"]
    assert re.search(r"reward when sticking: -?1\.0|reward when sticking: 0\.0", out), out
