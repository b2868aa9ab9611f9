"""Recording on the server: ``create_app(..., trajectories=...)`` writes every session's
episodes, whoever drives them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from openenv_hub import create_app
from openenv_hub.errors import ConfigurationError
from openenv_hub.trajectories import TrajectoryWriter, read_records

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from word_game import Feedback, GameState, Guess, WordGame, WordGameEnv


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
async def test_the_server_records_finished_and_abandoned_episodes(
    serve: Any, tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"server{suffix}"
    app = create_app(WordGame, Guess, Feedback, state_cls=GameState, trajectories=path)
    server = serve(app)
    async with WordGameEnv(base_url=server.url) as env:
        await env.reset(seed=2)
        for word in ("slate", "crane"):
            await env.step(Guess(word=word))
        await env.reset(seed=3)  # an episode left unfinished: the client goes away
        await env.step(Guess(word="xx"))
    if suffix == ".jsonl":  # appended as each episode ends: readable while the server runs
        server.wait_for(lambda: len(read_records(path)) == 5)
    else:
        assert not path.exists()  # written whole, when the server stops
    server.stop()

    records = read_records(path)
    assert [(r["episode"], r["step"]) for r in records] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert {r["source"] for r in records} == {"server"}
    assert {r["env_name"] for r in records} == {"WordGame"}
    won, abandoned = records[:3], records[3:]
    assert [r["attributed_reward"] for r in won] == pytest.approx([None, 0.6, 1.1])
    assert (won[-1]["done"], won[-1]["truncated"]) == (True, False)
    assert (abandoned[-1]["done"], abandoned[-1]["truncated"]) == (False, True)
    assert json.loads(abandoned[1]["action"]) == {"metadata": {}, "word": "xx"}
    assert json.loads(abandoned[1]["reward_breakdown"]) == {"well_formed": 0.0}


def test_an_unknown_format_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"name the file \*.jsonl or \*.parquet"):
        TrajectoryWriter(tmp_path / "episodes.csv")
    assert list(tmp_path.iterdir()) == []


async def _play(url: str, seed: int, words: tuple[str, ...]) -> None:
    async with WordGameEnv(base_url=url) as env:
        await env.reset(seed=seed)
        for word in words:
            await env.step(Guess(word=word))


async def test_a_restarted_server_appends_to_what_it_recorded(serve: Any, tmp_path: Path) -> None:
    """A second run with the same path keeps the first run's episodes (it used to replace
    the file with its own)."""
    path = tmp_path / "server.jsonl"
    for seed in (2, 3):
        server = serve(create_app(WordGame, Guess, Feedback, state_cls=GameState,
                                  trajectories=path))  # fmt: skip
        await _play(server.url, seed, ("slate", "crane"))
        server.stop()
    records = read_records(path)
    assert [(r["episode"], r["step"]) for r in records] == [(0, 0), (0, 1), (0, 2)] * 2
    assert len({r["episode_id"] for r in records}) == 2


async def test_a_restarted_server_records_parquet_beside_what_it_recorded(
    serve: Any, tmp_path: Path
) -> None:
    """A Parquet file cannot be appended to: the second run's episodes go to a new name."""
    path = tmp_path / "server.parquet"
    for seed in (2, 3):
        server = serve(create_app(WordGame, Guess, Feedback, state_cls=GameState,
                                  trajectories=path))  # fmt: skip
        await _play(server.url, seed, ("slate",))
        server.stop()
    first, second = read_records(path), read_records(tmp_path / "server-1.parquet")
    assert len(first) == len(second) == 2
    assert first[0]["episode_id"] != second[0]["episode_id"]


def test_a_record_cut_short_by_a_kill_leaves_the_episodes_before_it(tmp_path: Path) -> None:
    path = tmp_path / "server.jsonl"
    path.write_text('{"episode": 0, "step": 0}\n{"episode": 0, "step": 1}\n{"episode": 1, "st')
    assert read_records(path) == [{"episode": 0, "step": 0}, {"episode": 0, "step": 1}]
