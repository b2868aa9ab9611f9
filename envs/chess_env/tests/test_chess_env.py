"""The chess environment over /ws through its typed client: games to a result against every
opponent, illegal moves, every way a game ends, PGN, MCP tools."""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
import uvicorn
from chess_env import ChessAction, ChessEnv
from chess_env.server.app import app
from chess_env.server.opponents import find_stockfish

from openenv_hub import MCPToolClient
from openenv_hub.errors import EnvironmentExecutionError

MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # Ra8#
MATED_NEXT = "8/8/8/8/8/1k6/2q4P/K7 w - - 0 1"  # every white move allows mate
STALEMATE_NEXT = "8/8/8/8/8/6k1/4q3/7K b - - 0 1"  # ...Qf2 stalemates
BARE_KINGS_NEXT = "4k3/8/8/8/8/8/3p4/4K3 w - - 0 1"  # Kxd2 leaves two kings
FIFTY_NEXT = "4k3/8/8/8/8/8/8/R3K3 w - - 99 80"  # any rook move completes 50 moves


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


def greedy(fen: str, rng: random.Random) -> str:
    """Mate if possible, else take the most valuable piece, else any move."""
    board = chess.Board(fen)
    moves = list(board.legal_moves)
    for move in moves:
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return move.uci()
    captures = [m for m in moves if board.piece_type_at(m.to_square)]
    if captures:
        return max(captures, key=lambda m: board.piece_type_at(m.to_square) or 0).uci()
    return rng.choice(moves).uci()


def play_out(env: object, policy, limit: int = 400) -> object:  # type: ignore[no-untyped-def]
    result = env.reset()  # type: ignore[attr-defined]
    for _ in range(limit):
        if result.done:
            return result
        result = env.step(ChessAction(move=policy(result.observation.fen)))  # type: ignore[attr-defined]
    raise AssertionError(f"no result after {limit} moves")


def expected_reward(result: str, color: str) -> float:
    if result == "1/2-1/2":
        return 0.0
    return 1.0 if (result == "1-0") == (color == "white") else -1.0


def test_a_game_against_the_random_opponent_ends_with_a_result(base_url: str) -> None:
    rng = random.Random(3)
    with ChessEnv(base_url=base_url).sync() as env:
        env.reset(opponent="random", agent_color="white", seed=3)
        final = play_out(env, lambda fen: greedy(fen, rng))
        state = env.state()
    observation = final.observation
    assert observation.result in ("1-0", "0-1", "1/2-1/2") and observation.reason
    assert final.reward == expected_reward(observation.result, "white")
    assert state.result == observation.result and f'[Result "{observation.result}"]' in state.pgn
    assert len(state.moves) == len(state.moves_san) > 4 and state.fen == observation.fen


def test_the_search_opponent_is_mated_and_mates(base_url: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        env.reset(opponent="search", search_depth=2, agent_color="white", fen=MATE_IN_ONE)
        won = env.step(ChessAction(move="Ra8"))
        assert (won.done, won.reward, won.observation.reason) == (True, 1.0, "checkmate")
        assert won.observation.result == "1-0" and won.observation.opponent_move is None
        env.reset(fen=MATED_NEXT)
        lost = env.step(ChessAction(move="h3"))
        assert (lost.done, lost.reward, lost.observation.reason) == (True, -1.0, "checkmate")
        assert lost.observation.opponent_move_san in ("Qb2#", "Qa2#", "Qc1#", "Qb1#", "Qd1#")


def test_a_game_against_stockfish_ends_in_a_loss_for_random_moves(base_url: str) -> None:
    assert find_stockfish(), (
        "Stockfish is missing: apt-get install stockfish (scripts/test.sh does)"
    )
    rng = random.Random(0)
    with ChessEnv(base_url=base_url).sync() as env:
        first = env.reset(
            opponent="stockfish", agent_color="black", stockfish_depth=6, stockfish_time_s=None
        )
        assert first.observation.opponent_move and first.observation.turn == "black"
        final = play_out_from(env, first, lambda fen: rng.choice(_legal(fen)))
        assert (final.reward, final.observation.result) == (-1.0, "1-0")
        assert final.observation.reason == "checkmate"
        env.reset(fen=MATED_NEXT, agent_color="white", stockfish_depth=4)
        assert env.step(ChessAction(move="h4")).reward == -1.0


def play_out_from(env: object, result: object, policy, limit: int = 300) -> object:  # type: ignore[no-untyped-def]
    for _ in range(limit):
        if result.done:  # type: ignore[attr-defined]
            return result
        result = env.step(ChessAction(move=policy(result.observation.fen)))  # type: ignore[attr-defined]
    raise AssertionError(f"no result after {limit} moves")


def _legal(fen: str) -> list[str]:
    return [m.uci() for m in chess.Board(fen).legal_moves]


def test_a_missing_stockfish_is_explained(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOCKFISH_PATH", "/nonexistent/stockfish")
    with ChessEnv(base_url=base_url).sync() as env:
        with pytest.raises(EnvironmentExecutionError, match="apt-get install stockfish"):
            env.reset(opponent="stockfish")
        assert env.reset(opponent="random").observation.legal_moves  # the session goes on


def test_an_illegal_move_is_answered_with_the_legal_moves(base_url: str) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        start = env.reset(opponent="random", agent_color="white", seed=1)
        for text, reason in [("e5", "not a legal move"), ("Zz9", "Could not read"),
                             ("e2e5", "not a legal move")]:  # fmt: skip
            refused = env.step(ChessAction(move=text))
            assert reason in refused.observation.error
            assert (refused.done, refused.reward) == (False, 0.0)
            assert refused.observation.fen == start.observation.fen
            assert len(refused.observation.legal_moves) == 20
            assert "Nf3" in refused.observation.legal_moves_san
        played = env.step(ChessAction(move="Nf3"))
        assert played.observation.error is None and played.observation.last_move == "g1f3"
        assert played.observation.opponent_move and played.observation.turn == "white"
        assert env.state().illegal_moves == 3


@pytest.mark.parametrize(
    ("fen", "color", "move", "reason", "reward"),
    [
        (STALEMATE_NEXT, "black", "Qf2", "stalemate", 0.0),
        (BARE_KINGS_NEXT, "white", "Kxd2", "insufficient_material", 0.0),
        (FIFTY_NEXT, "white", "Ra2", "fifty_moves", 0.0),
        (chess.STARTING_FEN, "white", "resign", "resignation", -1.0),
    ],
)
def test_each_way_a_game_ends_is_named(
    base_url: str, fen: str, color: str, move: str, reason: str, reward: float
) -> None:
    with ChessEnv(base_url=base_url).sync() as env:
        env.reset(fen=fen, agent_color=color, opponent="random")
        ended = env.step(ChessAction(move=move))
        assert (ended.done, ended.observation.reason, ended.reward) == (True, reason, reward)
        with pytest.raises(EnvironmentExecutionError, match="call reset"):
            env.step(ChessAction(move="e4"))


def test_threefold_repetition_in_self_play(base_url: str) -> None:
    shuffle = ["Nf3", "Nf6", "Ng1", "Ng8"] * 3
    with ChessEnv(base_url=base_url).sync() as env:
        env.reset(opponent="none", fen=chess.STARTING_FEN)
        for move in shuffle:
            result = env.step(ChessAction(move=move))
            if result.done:
                break
        assert result.observation.reason == "threefold_repetition"
        plies = len(env.state().moves_san)
        assert plies <= 8 and env.state().moves_san == shuffle[:plies]


def test_a_bad_fen_is_refused(base_url: str) -> None:
    with (
        ChessEnv(base_url=base_url).sync() as env,
        pytest.raises(EnvironmentExecutionError, match="Invalid FEN"),
    ):
        env.reset(fen="not a position")


def test_mcp_tools_play_the_same_game(base_url: str) -> None:
    with MCPToolClient(base_url).sync() as env:
        env.reset(opponent="random", agent_color="white", seed=2)
        names = {t.name for t in env.list_tools()}
        assert {"make_move", "legal_moves", "board"} <= names
        assert "e4" in env.call_tool("legal_moves")["san"]
        reply = env.call_tool("make_move", move="e4")
        assert reply["error"] is None and reply["opponent_move"] and not reply["done"]
        assert env.call_tool("board")["moves"][0] == "e4"
        refused = env.call_tool("make_move", move="Ke3")
        assert "not a legal move" in refused["error"] and "Nf3" in refused["legal_moves"]


def test_the_readme_example_runs(base_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    for block in readme.split("```python\n")[1:]:
        code = block.split("```", 1)[0].replace("http://127.0.0.1:8000", base_url)
        exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"[a-h1-8xNBRQK+#=O-]+", printed[-1]), printed[-1]  # the tools' reply
    assert "e5 is not a legal move" in printed[0] and "'Nf3'" in printed[0]
    assert re.fullmatch(r"(1-0|0-1|1/2-1/2) [a-z_]+ (-?1\.0|0\.0)", printed[1]), printed[1]
    assert printed[2] == '[Event "?"]'
