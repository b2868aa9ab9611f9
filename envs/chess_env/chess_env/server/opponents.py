"""The agent's opponents: random moves, the built-in search, or Stockfish over UCI."""

from __future__ import annotations

import os
import random
import shutil
from dataclasses import dataclass
from typing import Protocol

import chess
import chess.engine

from chess_env.server.search import best_move

#: Where Stockfish is looked for after ``$STOCKFISH_PATH`` and ``stockfish`` on ``PATH``
#: (Debian's package installs it in /usr/games, which is not on every PATH).
STOCKFISH_LOCATIONS = ("/usr/games/stockfish", "/usr/local/bin/stockfish", "/usr/bin/stockfish")
ENGINE_TIMEOUT_S = 30.0
#: The most a reset may ask of the opponents: plies of the built-in search, plies and seconds
#: per move of Stockfish.
MAX_SEARCH_DEPTH = 4
MAX_STOCKFISH_DEPTH = 30
MAX_STOCKFISH_TIME_S = 10.0


class Opponent(Protocol):
    name: str

    def choose(self, board: chess.Board) -> chess.Move: ...

    def close(self) -> None: ...


@dataclass
class RandomOpponent:
    """Plays a uniformly random legal move."""

    rng: random.Random
    name: str = "random"

    def choose(self, board: chess.Board) -> chess.Move:
        return self.rng.choice(list(board.legal_moves))

    def close(self) -> None:
        pass


@dataclass
class SearchOpponent:
    """Plays the best move of the built-in alpha-beta search (ties broken at random)."""

    rng: random.Random
    depth: int = 2
    name: str = "search"

    def choose(self, board: chess.Board) -> chess.Move:
        return best_move(board.copy(stack=False), self.depth, self.rng)

    def close(self) -> None:
        pass


class StockfishNotFoundError(RuntimeError):
    """No Stockfish binary was found; the message says how to get one."""


def find_stockfish() -> str | None:
    """The Stockfish binary: ``$STOCKFISH_PATH``, ``stockfish`` on PATH, or a Debian location."""
    explicit = os.environ.get("STOCKFISH_PATH")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which("stockfish")
    if found:
        return found
    return next((p for p in STOCKFISH_LOCATIONS if os.access(p, os.X_OK)), None)


class StockfishOpponent:
    """Stockfish through UCI, limited by skill level, depth and time per move.

    Args:
        skill_level: 0 (weakest) to 20 (full strength).
        depth: Plies to search per move, or None for no depth limit.
        time_s: Seconds to think per move, or None for no time limit.
    """

    name = "stockfish"

    def __init__(
        self, skill_level: int = 20, depth: int | None = None, time_s: float | None = 0.05
    ):
        path = find_stockfish()
        if path is None:
            where = os.environ.get("STOCKFISH_PATH") or ", ".join(STOCKFISH_LOCATIONS)
            raise StockfishNotFoundError(
                f"The 'stockfish' opponent needs the Stockfish engine, which was not found "
                f"(looked at $STOCKFISH_PATH, PATH and {where}). Install it (Debian/Ubuntu: "
                "apt-get install stockfish) or set STOCKFISH_PATH to the binary; or choose "
                "opponent='search' or 'random'."
            )
        if depth is None and time_s is None:
            raise ValueError("give Stockfish a depth or a time per move (or both)")
        self.limit = chess.engine.Limit(depth=depth, time=time_s)
        self.engine = chess.engine.SimpleEngine.popen_uci(path, timeout=ENGINE_TIMEOUT_S)
        self.engine.configure({"Skill Level": skill_level, "Threads": 1, "Hash": 16})

    def choose(self, board: chess.Board) -> chess.Move:
        move = self.engine.play(board, self.limit).move
        if move is None:
            raise RuntimeError("Stockfish returned no move")
        return move

    def close(self) -> None:
        self.engine.quit()


@dataclass(frozen=True)
class OpponentSettings:
    """Who the agent plays against, and how strongly."""

    opponent: str = "random"
    search_depth: int = 2
    stockfish_skill: int = 20
    stockfish_depth: int | None = None
    stockfish_time_s: float | None = 0.05

    def check(self) -> None:
        """Raise ValueError naming the first setting that cannot work (a wrong type included:
        every search is bounded, so no reset can make the opponent think for ever)."""
        names = ("random", "search", "stockfish", "none")
        if not isinstance(self.opponent, str) or self.opponent not in names:
            raise ValueError(f"opponent must be one of {list(names)}, got {self.opponent!r}")
        _whole("search_depth", self.search_depth, 1, MAX_SEARCH_DEPTH)
        _whole("stockfish_skill", self.stockfish_skill, 0, 20)
        if self.stockfish_depth is not None:
            _whole("stockfish_depth", self.stockfish_depth, 1, MAX_STOCKFISH_DEPTH)
        time_s = self.stockfish_time_s
        if time_s is not None and (
            isinstance(time_s, bool)
            or not isinstance(time_s, (int, float))
            or not 0 < time_s <= MAX_STOCKFISH_TIME_S
        ):
            raise ValueError(
                f"stockfish_time_s must be a number of seconds in (0, {MAX_STOCKFISH_TIME_S:g}], "
                f"or None; got {time_s!r}"
            )

    def build(self, rng: random.Random) -> Opponent | None:
        """The opponent these settings describe (None: the agent plays both sides)."""
        if self.opponent == "random":
            return RandomOpponent(rng)
        if self.opponent == "search":
            return SearchOpponent(rng, self.search_depth)
        if self.opponent == "stockfish":
            return StockfishOpponent(
                self.stockfish_skill, self.stockfish_depth, self.stockfish_time_s
            )
        return None


def _whole(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number between {low} and {high}, got {value!r}")
