"""The Replay tab in a real browser: a recorded chess game opened from its trajectory file,
stepped forward and back, forked into the Playground, and a recording that the replay
contradicts shown as such."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
import ui_pages as pages
from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from playwright.sync_api import expect
from serving import ServerThread

from openenv_hub import create_app
from openenv_hub.trajectories import read_records

pytestmark = pytest.mark.browser

# docs/debugging.md's screenshot: refreshed when OPENENV_UPDATE_SCREENSHOTS=1, else into tmp_path.
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "replay.png"


def chess_app(**options: Any) -> Any:
    return create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, **options
    )


def record_game(path: Path) -> list[dict[str, Any]]:
    """A seeded game of eight moves against the seeded random opponent, recorded by a server
    that stops afterwards (the file is complete then)."""
    recorder = ServerThread(chess_app(trajectories=path))
    recorder.start()
    try:
        rng = random.Random(5)
        with ChessEnv(base_url=recorder.url).sync() as env:
            result = env.reset(seed=11)
            for _ in range(8):
                result = env.step(ChessAction(move=rng.choice(result.observation.legal_moves)))
    finally:
        recorder.stop()
    return read_records(path)


def fen(records: list[dict[str, Any]], step: int) -> str:
    return str(json.loads(records[step]["observation"])["fen"])


def open_recording(page: Any, path: Path) -> None:
    page.get_by_role("tab", name="Replay").click()
    pages.field(page, "Trajectory file").set_input_files(str(path))
    expect(page.locator("#replay-position")).to_contain_text("Step 0 of 8 · reset(")


def test_a_recorded_game_steps_back_and_forth_and_forks_into_the_playground(
    serve: Any, new_page: Any, tmp_path: Path
) -> None:
    records = record_game(tmp_path / "game.jsonl")
    page = pages.open_ui(new_page(), serve(chess_app(web=True)).web_url)
    open_recording(page, tmp_path / "game.jsonl")
    expect(page.locator("#replay-observation")).to_contain_text(fen(records, 0))
    for step in (1, 2, 3):
        pages.replay_move(page, "forward", step)
        expect(page.locator("#replay-position")).to_contain_text(f"Step {step} of 8 · step(")
        expect(page.locator("#replay-observation")).to_contain_text(fen(records, step))
    pages.replay_move(page, "back", 2)
    expect(page.locator("#replay-observation")).to_contain_text(fen(records, 2))

    target = (
        SCREENSHOT if os.environ.get("OPENENV_UPDATE_SCREENSHOTS") == "1" else tmp_path / "r.png"
    )
    page.screenshot(path=str(target), full_page=True)  # docs/debugging.md shows this
    assert target.read_bytes().startswith(b"\x89PNG")

    pages.click(page, "replay-fork")
    pages.expect_banner(page, "Forked at step 2")
    expect(page.locator("#observation")).to_contain_text(fen(records, 2))
    pages.history_rows(page, 3)  # the reset and two replayed steps
    page.locator("#field-move input").fill(json.loads(records[3]["action"])["move"])
    pages.step(page, 3)
    expect(page.locator("#observation")).to_contain_text(fen(records, 3))  # the recorded reply


def test_a_recording_the_replay_contradicts_is_shown_where_it_differs(
    serve: Any, new_page: Any, tmp_path: Path
) -> None:
    path = tmp_path / "game.jsonl"
    records = record_game(path)
    observation = json.loads(records[1]["observation"])
    replayed = observation["fen"]
    observation["fen"] = fen(records, 0)  # as if the opponent had answered otherwise
    records[1]["observation"] = json.dumps(observation)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = pages.open_ui(new_page(), serve(chess_app(web=True)).web_url)
    open_recording(page, path)
    pages.fill(page, "Step", "4")
    page.keyboard.press("Enter")
    expect(page.locator("#replay-position")).to_contain_text("Step 4 of 8")
    pages.click(page, "replay-fork")
    pages.expect_banner(
        page, "Replay differs from the recording", "observation.fen differs at step 1"
    )
    expect(page.locator("#observation")).to_contain_text(replayed)  # what the replay got
