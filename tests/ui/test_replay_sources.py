"""The Replay tab's other sources, in a real browser: the episodes the server recorded (an Atari
episode, each recorded frame shown at its step, forked exactly from the server's snapshot), and
a public dataset on LocalHub (a chess game, forked by replay)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import ui_pages as pages
from atari_env import AtariAction, AtariEnv
from atari_env.models import AtariObservation, AtariState
from atari_env.server.environment import AtariEnvironment
from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from playwright.sync_api import expect
from serving import ServerThread

from openenv_hub import create_app
from openenv_hub.server.watch import WATCH_SETTING, SessionWatch
from openenv_hub.trajectories import push_trajectories

pytestmark = pytest.mark.browser


def recorded(records: list[dict[str, Any]], step: int) -> dict[str, Any]:
    return dict(json.loads(records[step]["observation"]))


def test_an_atari_episode_recorded_on_the_server_replays_frame_by_frame_and_forks_exactly(
    serve: Any, new_page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    app = create_app(
        AtariEnvironment, AtariAction, AtariObservation, state_cls=AtariState, web=True,
        trajectories=tmp_path / "atari.jsonl",
    )  # fmt: skip
    server = serve(app)
    with AtariEnv(base_url=server.base_url).sync() as env:  # sticky actions, unseeded
        env.reset(game="pong", repeat_action_probability=0.5)
        for n in range(5):
            env.step(AtariAction(action=n % 4))
        env.reset()  # the episode is written when the next one starts
    (recorder,) = [o for o in server.pool.observers if hasattr(o, "recent")]
    records = recorder.recent[0]
    page = pages.open_ui(new_page(), server.web_url)
    page.get_by_role("tab", name="Replay").click()
    pages.click(page, "replay-server")
    expect(page.locator("#replay-position")).to_contain_text("Step 0 of 5 · reset(")
    for step in range(1, 6):
        pages.replay_move(page, "forward", step)
        expect(page.locator("#replay-position")).to_contain_text(f"Step {step} of 5 · step(")
        frame_number = recorded(records, step)["episode_frame_number"]
        expect(page.locator("#replay-observation")).to_contain_text(str(frame_number))
        expect(page.locator("#replay-images img").first).to_be_visible()  # the recorded frame
    for step in (4, 3):
        pages.replay_move(page, "back", step)

    pages.click(page, "replay-fork")
    pages.expect_banner(page, "Forked at step 3 from the server's snapshot")
    pages.text_input(page, "field-action").fill(str(json.loads(records[4]["action"])["action"]))
    pages.step(page, 4)
    (watch,) = [o for o in server.pool.observers if isinstance(o, SessionWatch)]
    shown_id = pages.session_id(page)  # the start of the tab's session id
    (mine,) = [
        w.recent[-1].payload for key, w in watch.sessions.items() if key.startswith(shown_id)
    ]
    assert mine["observation"]["frame"] == recorded(records, 4)["frame"]  # the very screen
    assert mine["reward"] == records[4]["reward"]


def record_game(path: Path) -> list[dict[str, Any]]:
    """A seeded game of six moves, recorded by a server that stops afterwards."""
    app = create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, trajectories=path
    )
    recorder = ServerThread(app)
    recorder.start()
    try:
        rng = random.Random(3)
        with ChessEnv(base_url=recorder.url).sync() as env:
            result = env.reset(seed=4)
            for _ in range(6):
                result = env.step(ChessAction(move=rng.choice(result.observation.legal_moves)))
    finally:
        recorder.stop()
    from openenv_hub.trajectories import read_records

    return read_records(path)


def test_a_dataset_on_localhub_replays_and_forks(
    serve: Any, new_page: Any, tmp_path: Path, local_hub: Any
) -> None:
    records = record_game(tmp_path / "games.jsonl")
    token = local_hub.token_for("alice")
    push_trajectories(
        tmp_path / "games.jsonl", "alice/chess-games", env_name="chess_env", token=token
    )
    push_trajectories(
        tmp_path / "games.jsonl", "alice/secret-games", env_name="chess_env", token=token,
        private=True,
    )  # fmt: skip
    app = create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, web=True
    )
    page = pages.open_ui(new_page(), serve(app).web_url)
    page.get_by_role("tab", name="Replay").click()
    expect(page.locator("#replay-server")).to_be_hidden()  # this server records nothing
    # A private dataset is not read with the server's token: visitors see public ones only.
    pages.text_input(page, "replay-dataset").fill("alice/secret-games")
    pages.click(page, "replay-open-dataset")
    expect(page.locator("#replay-position")).to_contain_text("Could not open the dataset")
    pages.text_input(page, "replay-dataset").fill("alice/chess-games")
    pages.click(page, "replay-open-dataset")
    expect(page.locator("#replay-position")).to_contain_text("Step 0 of 6 · reset(")
    for step in (1, 2):  # one click at a time, each waiting for the step it leads to
        pages.replay_move(page, "forward", step)
    expect(page.locator("#replay-observation")).to_contain_text(recorded(records, 2)["fen"])
    pages.click(page, "replay-fork")
    pages.expect_banner(page, "Forked at step 2 by replay")
    expect(page.locator("#observation")).to_contain_text(recorded(records, 2)["fen"])
