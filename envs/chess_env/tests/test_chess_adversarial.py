"""An agent that tries to raise its own reward, through the real server: illegal and null moves,
claimed results, resigning for the opponent, impossible positions, moves after the game ended,
oversized and ill-typed moves, steps before reset. Every reward stays in [-1, 1], the range the
environment declares, and every refusal is a typed error that says what was wrong."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from chess_env import ChessAction, ChessEnv
from chess_env.server.app import app

from openenv_hub import GenericEnvClient, MCPToolClient
from openenv_hub.errors import (
    ActionValidationError,
    EnvironmentExecutionError,
    ResetRequiredError,
    ToolCallError,
)

LOW, HIGH = -1.0, 1.0
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # Ra8#
KING_EN_PRISE = "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1"  # white to move may take the black king
ALREADY_MATED = "R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1"  # black, to move, is mated


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def in_range(result: Any) -> Any:
    """``result``, after checking its reward is in the declared range and not flagged."""
    reward = result.reward
    assert reward is None or LOW <= reward <= HIGH, reward
    assert not (result.metadata or {}).get("reward_out_of_range")
    return result


def test_the_declared_range_is_published(base_url: str) -> None:
    assert httpx.get(base_url + "/metadata").json()["reward_range"] == [LOW, HIGH]


def test_steps_and_state_before_reset_are_refused(base_url: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        with pytest.raises(ResetRequiredError, match=r"call reset\(\) first"):
            env.step(ChessAction(move="e4"))
        with pytest.raises(ResetRequiredError):
            env.state()
        assert in_range(env.reset(opponent="random", seed=1)).observation.turn == "white"


@pytest.mark.parametrize(
    "move",
    ["--", "Z0", "@@@@", "0000", "P@e4", "1-0", "0-1", "1/2-1/2", "#", "Qxe8#", "e2e5", "Ke3",
     "a1a1", "e7e8q", "resignation", "draw", "O-O-O", "e4e5e6"],
)  # fmt: skip
def test_moves_that_are_not_legal_moves_change_nothing(base_url: str, move: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        start = env.reset(opponent="random", agent_color="white", seed=2, fen=None)
        refused = in_range(env.step(ChessAction(move=move)))
        assert refused.observation.error and refused.reward == 0.0 and not refused.done
        assert refused.observation.fen == start.observation.fen
        assert len(refused.observation.legal_moves) == 20
        assert env.state().moves == []


@pytest.mark.parametrize(
    "move",
    [
        "x" * 17,
        "e4" * 50_000,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "",
        123,
        None,
        ["e4"],
        {"uci": "e2e4"},
    ],
)
def test_oversized_and_ill_typed_moves_are_validation_errors(base_url: str, move: Any) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset(opponent="random", seed=3)
        with pytest.raises(ActionValidationError, match="move"):
            env.step({"move": move})
        with pytest.raises(ActionValidationError, match="result"):
            env.step({"move": "e4", "result": "1-0"})  # no field to claim a result with
        assert in_range(env.step({"move": "e4"})).observation["last_move"] == "e2e4"


@pytest.mark.parametrize(
    ("color", "result"), [("white", "0-1"), ("black", "1-0")], ids=["white", "black"]
)
def test_resigning_always_loses_for_the_agent(base_url: str, color: str, result: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        env.reset(opponent="random", agent_color=color, seed=4)
        ended = in_range(env.step(ChessAction(move="  RESIGN ")))
        assert (ended.done, ended.reward, ended.observation.result) == (True, -1.0, result)


def test_in_self_play_the_side_to_move_is_the_one_that_resigns(base_url: str) -> None:
    """Resigning on black's move cannot make black the winner (resigning for the opponent)."""
    with ChessEnv(base_url=base_url).sync() as env:
        env.reset(opponent="none", agent_color="white")
        in_range(env.step(ChessAction(move="e4")))
        ended = in_range(env.step(ChessAction(move="resign")))
        assert (ended.observation.result, ended.reward) == ("1-0", -1.0)
        assert '[Result "1-0"]' in env.state().pgn


def test_a_position_where_a_king_can_be_taken_is_refused(base_url: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        with pytest.raises(EnvironmentExecutionError, match="opposite check"):
            env.reset(fen=KING_EN_PRISE, opponent="random")
        for fen in ("8/8/8/8/8/8/8/8 w - - 0 1", "k7/8/8/8/8/8/8/K6P w - - 0 1"):
            with pytest.raises(EnvironmentExecutionError, match="not a position a game can"):
                env.reset(fen=fen)
        with pytest.raises(EnvironmentExecutionError, match="fen must be a string"):
            env.reset(fen=["e4"])


def test_a_game_that_is_over_takes_no_more_moves(base_url: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        over = in_range(env.reset(fen=ALREADY_MATED, agent_color="white", opponent="random"))
        assert over.done and over.reward is None and over.observation.result == "1-0"
        with pytest.raises(ResetRequiredError, match="game is over"):
            env.step(ChessAction(move="Kh2"))
        env.reset(fen=MATE_IN_ONE, opponent="search", search_depth=1)
        won = in_range(env.step(ChessAction(move="Ra8#")))
        assert (won.done, won.reward) == (True, 1.0)
        for move in ("Ra1", "resign", "1-0"):
            with pytest.raises(ResetRequiredError, match="call reset"):
                env.step(ChessAction(move=move))
        assert env.state().result == "1-0"
    with MCPToolClient(base_url).sync() as tools:
        tools.reset(fen=MATE_IN_ONE, opponent="search", search_depth=1)
        assert tools.call_tool("make_move", move="Ra8")["reward"] == 1.0
        with pytest.raises(ToolCallError, match="call reset"):
            tools.call_tool("make_move", move="Ra1")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"search_depth": 10**9}, "search_depth must be a whole number between 1 and 4"),
        ({"search_depth": "2"}, "search_depth must be a whole number"),
        ({"stockfish_depth": 10**6}, "stockfish_depth must be a whole number between 1 and 30"),
        ({"stockfish_time_s": 1e9}, "stockfish_time_s must be a number of seconds"),
        ({"stockfish_time_s": -1}, "stockfish_time_s must be a number of seconds"),
        ({"stockfish_skill": 10**9}, "stockfish_skill must be a whole number between 0 and 20"),
        ({"opponent": ["random"]}, "opponent must be one of"),
        ({"agent_color": ["white"]}, "agent_color must be 'white' or 'black'"),
        ({"result": "1-0"}, "Unknown reset argument"),
    ],
)
def test_reset_settings_that_cannot_work_are_refused_by_name(
    base_url: str, settings: dict[str, Any], message: str
) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        with pytest.raises(EnvironmentExecutionError, match=message):
            env.reset(**settings)
        assert in_range(env.reset(opponent="random", search_depth=2)).observation.legal_moves


def test_random_garbage_and_random_moves_never_leave_the_range(base_url: str) -> None:
    rng = random.Random(11)
    alphabet = "abcdefgh12345678KQRBNPkqrbnpxO-=+#@Z0 "
    with ChessEnv(base_url=base_url).sync() as env:
        for game in range(3):
            result = in_range(env.reset(opponent="random", seed=game, agent_color="white"))
            for _ in range(150):
                if result.done:
                    break
                if rng.random() < 0.5:
                    move = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16)))
                else:
                    move = rng.choice(result.observation.legal_moves)
                if move.strip():
                    result = in_range(env.step(ChessAction(move=move)))


def test_a_stateless_step_plays_on_a_fresh_game(base_url: str) -> None:
    reply = httpx.post(base_url + "/step", json={"action": {"move": "e4"}}).json()
    assert reply["observation"]["last_move"] == "e2e4" and reply["reward"] == 0.0
    refused = httpx.post(base_url + "/step", json={"action": {"move": "x" * 100}})
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["move"]
