"""The chess environment: the agent plays one colour against an opponent (python-chess rules).

A step is one agent move (UCI, SAN or ``resign``) followed by the opponent's reply. An illegal
or unreadable move changes nothing: the observation carries the error and the legal moves (in
UCI and SAN), and the game goes on. Draws by threefold repetition and the fifty-move rule are
claimed as soon as they are reached. Settings are chosen at ``reset``; those not given keep their current values.

Every reward is -1, 0 or +1 (``reward_range``): only a game's end is rewarded, and only the
rules of chess end one. A null move (``--``, ``0000``) is no move, a resignation loses for the
side that resigns, a position that cannot arise in a game (a king that can be taken) is refused
at reset, and a step after the game ended is refused with ``ResetRequiredError``.
"""

from __future__ import annotations

import hashlib
import os
import random
import uuid
from dataclasses import dataclass, replace
from typing import Any

import chess
import chess.pgn

from chess_env.models import ChessAction, ChessObservation, ChessState
from chess_env.server.opponents import Opponent, OpponentSettings
from openenv_hub import MCPEnvironment, tool
from openenv_hub.errors import ResetRequiredError
from openenv_hub.types import Action, EnvironmentMetadata, Observation

_COLORS = {"white": chess.WHITE, "black": chess.BLACK}
_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}
_DRAWING = frozenset({"random", "search"})  # opponents that draw from the seeded generator


def read_move(board: chess.Board, text: str) -> chess.Move | str:
    """The legal move ``text`` names (UCI or SAN), or why it is not one."""
    text = text.strip()
    try:
        move = chess.Move.from_uci(text)
    except ValueError:
        pass
    else:
        if move in board.legal_moves:
            return move
        return f"{text} is not a legal move in this position"
    try:
        move = board.parse_san(text)
    except chess.AmbiguousMoveError:
        return f"{text} is ambiguous; add the piece's file or rank (e.g. Nbd2)"
    except chess.IllegalMoveError:
        return f"{text} is not a legal move in this position"
    except ValueError:
        return f"Could not read {text!r} as a move: write it in UCI (e2e4) or SAN (e4, Nf3, O-O)"
    if not move:  # python-chess reads --, Z0 and @@@@ as the null move: a pass, not a move
        return f"{text} is a null move (a pass), which is not a legal move"
    return move


class ChessEnvironment(MCPEnvironment):
    """Chess for agents, with MCP tools for language models (``make_move``, ``legal_moves``).

    Args:
        **settings: Defaults for :class:`OpponentSettings` (``opponent``, ``search_depth``,
            ``stockfish_skill``, ``stockfish_depth``, ``stockfish_time_s``); ``opponent``
            defaults to ``$CHESS_OPPONENT`` or ``random``.
    """

    reward_range = (-1.0, 1.0)

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        defaults = OpponentSettings(opponent=os.environ.get("CHESS_OPPONENT", "random"))
        self._settings = replace(defaults, **settings)
        self._settings.check()
        self._agent = chess.WHITE
        self._board = chess.Board()
        self._rng = random.Random()
        self._opponent: Opponent | None = None
        self._built: OpponentSettings | None = None
        self._state = ChessState(episode_id=str(uuid.uuid4()))
        self._resigned: chess.Color | None = None  # the side that resigned
        self._state_seed: int | None = None  # the episode's seed, for replay_refusal

    # -- episodes --------------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        fen: str | None = None,
        agent_color: str | None = None,
        **settings: Any,
    ) -> ChessObservation:
        """Start a game from ``fen`` (default: the starting position) as ``agent_color``."""
        unknown = set(settings) - set(OpponentSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"Unknown reset argument(s) {sorted(unknown)}; expected fen, agent_color, seed "
                f"or {sorted(OpponentSettings.__dataclass_fields__)}"
            )
        chosen = replace(self._settings, **{k: v for k, v in settings.items() if v is not None})
        chosen.check()
        color = agent_color or _NAMES[self._agent]
        if not isinstance(color, str) or color not in _COLORS:
            raise ValueError(f"agent_color must be 'white' or 'black', got {color!r}")
        board = _board(fen)
        if seed is not None:
            self._rng.seed(seed)
        self._state_seed = seed
        self._use_opponent(chosen)
        self._settings, self._agent, self._board, self._resigned = (
            chosen,
            _COLORS[color],
            board,
            None,
        )
        self._state = ChessState(
            episode_id=episode_id or str(uuid.uuid4()),
            start_fen=board.fen(),
            agent_color=color,  # type: ignore[arg-type]
            opponent=chosen.opponent,  # type: ignore[arg-type]
        )
        reply = self._opponent_turn() if board.outcome() is None else None
        return self._observation(reward=None, opponent_move=reply)

    # -- snapshots (exact forks; see openenv_hub.server.snapshots) ---------------------------

    def snapshot(self) -> _Snapshot:
        """The game as it stands: board and move stack, colours, settings and the opponent's
        random state (kept by the server, never sent)."""
        return _Snapshot(
            self._board.copy(),
            self._agent,
            self._settings,
            self._resigned,
            self._rng.getstate(),
            self._state.model_copy(deep=True),
        )

    def restore(self, snapshot: _Snapshot) -> None:
        self._use_opponent(snapshot.settings)
        self._settings, self._agent, self._resigned = (
            snapshot.settings,
            snapshot.agent,
            snapshot.resigned,
        )
        self._board = snapshot.board.copy()
        self._rng.setstate(snapshot.rng)
        self._state = snapshot.state.model_copy(deep=True)

    # -- replay (forks by replay; see openenv_hub.client.fork) --------------------------------

    def state_digest(self) -> str | None:
        """A hash of the game (FEN and move stack), the colours, the settings, a resignation
        and, for an opponent that draws moves, its generator's state."""
        draws = self._settings.opponent in _DRAWING
        facts = (
            self._board.fen(),
            [move.uci() for move in self._board.move_stack],
            self._agent,
            self._resigned,
            sorted(vars(self._settings).items()),
            self._rng.getstate() if draws else None,
        )
        return hashlib.blake2b(repr(facts).encode(), digest_size=12).hexdigest()

    def replay_refusal(self) -> str | None:
        """An unseeded drawing opponent, and Stockfish on a clock or weakened, are not
        reproduced by a replay."""
        settings = self._settings
        if settings.opponent in _DRAWING and self._state_seed is None:
            return (
                f"no seed was given at reset, and the {settings.opponent} opponent's moves are "
                "drawn at random: reset with a seed"
            )
        if settings.opponent == "stockfish" and (
            settings.stockfish_time_s is not None or settings.stockfish_skill < 20
        ):
            return (
                "Stockfish's moves depend on its thinking time or its random weakening (skill "
                "below 20): set stockfish_time_s=None with a stockfish_depth, and skill 20"
            )
        return None

    def _use_opponent(self, chosen: OpponentSettings) -> None:
        if self._built == chosen:
            return
        if self._opponent is not None:
            self._opponent.close()
            self._opponent, self._built = None, None
        self._opponent = chosen.build(self._rng)
        self._built = chosen

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        if not isinstance(action, ChessAction):
            raise TypeError(f"expected a ChessAction, got {type(action).__name__}")
        return self.play(action.move)

    def play(self, text: str) -> ChessObservation:
        """Play the agent's move and the opponent's reply."""
        board = self._board
        if self._over():
            raise ResetRequiredError(
                f"The game is over ({self._state.reason}, {self._state.result}); call reset() "
                "to start a new one."
            )
        if self._opponent is not None and board.turn != self._agent:
            raise RuntimeError("It is the opponent's turn")  # only after a failed reply
        if text.strip().lower() == "resign":
            self._resigned = board.turn  # the side to move resigns, never the other one
            return self._observation(reward=self._reward(), last_move=None)
        move = read_move(board, text)
        if isinstance(move, str):
            self._state.illegal_moves += 1
            return self._observation(reward=0.0, error=move)
        board.push(move)
        reply = self._opponent_turn() if not self._over() else None
        return self._observation(reward=self._reward(), last_move=move, opponent_move=reply)

    def _opponent_turn(self) -> chess.Move | None:
        board = self._board
        if self._opponent is None or board.turn == self._agent or board.is_game_over():
            return None
        move = self._opponent.choose(board)
        board.push(move)
        return move

    # -- results ---------------------------------------------------------------------------

    def _outcome(self) -> tuple[bool | None, str] | None:
        """``(winner, reason)`` once the game is over (winner None: a draw), else None."""
        if self._resigned is not None:
            return (not self._resigned, "resignation")
        board = self._board
        outcome = board.outcome()
        if outcome is not None:
            return outcome.winner, outcome.termination.name.lower()
        # Draws a player may claim, claimed at once: on the third occurrence of a position,
        # and once 50 moves passed without a capture or a pawn move.
        if board.halfmove_clock >= 100:
            return None, "fifty_moves"
        if board.is_repetition(3):
            return None, "threefold_repetition"
        return None

    def _over(self) -> bool:
        return self._outcome() is not None

    def _reward(self) -> float:
        """+1/-1/0 for the agent once the game is over (for the side that just moved, without
        an opponent), 0 before."""
        ended = self._outcome()
        if ended is None or ended[0] is None:
            return 0.0
        if self._opponent is None:  # the side that just moved (or resigned)
            mover = self._resigned if self._resigned is not None else not self._board.turn
            return 1.0 if ended[0] == mover else -1.0
        return 1.0 if ended[0] == self._agent else -1.0

    def _observation(
        self,
        reward: float | None,
        *,
        last_move: chess.Move | None = None,
        opponent_move: chess.Move | None = None,
        error: str | None = None,
    ) -> ChessObservation:
        board, state = self._board, self._state
        ended = self._outcome()
        result = reason = None
        if ended is not None:
            winner, reason = ended
            result = "1/2-1/2" if winner is None else ("1-0" if winner else "0-1")
            state.result, state.reason = result, reason  # type: ignore[assignment]
        legal = list(board.legal_moves) if ended is None else []
        explain = error is not None or reward is None  # SAN costs: sent on errors and at reset
        return ChessObservation(
            fen=board.fen(),
            turn=_NAMES[board.turn],  # type: ignore[arg-type]
            agent_color=_NAMES[self._agent],  # type: ignore[arg-type]
            legal_moves=[m.uci() for m in legal],
            legal_moves_san=[board.san(m) for m in legal] if explain else [],
            last_move=last_move.uci() if last_move else None,
            opponent_move=opponent_move.uci() if opponent_move else None,
            opponent_move_san=_san_of_last(board, opponent_move),
            is_check=board.is_check(),
            error=error,
            result=result,
            reason=reason,  # type: ignore[arg-type]
            reward=reward,
            done=ended is not None,
        )

    @property
    def state(self) -> ChessState:
        board, state = self._board, self._state
        state.fen = board.fen()
        state.moves = [m.uci() for m in board.move_stack]
        replay = chess.Board(state.start_fen)
        state.moves_san = [replay.san_and_push(m) for m in board.move_stack]
        state.pgn = self._pgn()
        return state

    def _pgn(self) -> str:
        game = chess.pgn.Game.from_board(self._board)
        opponent = self._settings.opponent if self._opponent is not None else "agent"
        game.headers["White"] = "agent" if self._agent == chess.WHITE else opponent
        game.headers["Black"] = "agent" if self._agent == chess.BLACK else opponent
        game.headers["Result"] = self._state.result or "*"
        if self._state.reason:
            game.headers["Termination"] = self._state.reason
        return str(game)

    def close(self) -> None:
        if self._opponent is not None:
            self._opponent.close()
            self._opponent = None

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="chess_env",
            description="Chess against a random mover, a small built-in search or Stockfish; "
            "moves in UCI or SAN, +1/0/-1 at the end.",
            version="0.1.0",
        )

    # -- MCP tools -------------------------------------------------------------------------

    @tool
    def make_move(self, move: str) -> dict[str, Any]:
        """Play your move (SAN such as Nf3 or O-O, UCI such as g1f3, or 'resign'); the opponent
        replies at once.

        Returns the opponent's reply, the new position (FEN), your legal moves now, and the
        result and reason when the game is over. An illegal move changes nothing and says why.
        """
        observation = self.play(move)
        return {
            "error": observation.error,
            "opponent_move": observation.opponent_move_san,
            "fen": observation.fen,
            "board": str(self._board),
            "legal_moves": [self._board.san(m) for m in self._board.legal_moves],
            "result": observation.result,
            "reason": observation.reason,
            "reward": observation.reward,
            "done": observation.done,
        }

    @tool
    def legal_moves(self) -> dict[str, Any]:
        """Your legal moves in the current position, in SAN and in UCI."""
        moves = list(self._board.legal_moves)
        return {"san": [self._board.san(m) for m in moves], "uci": [m.uci() for m in moves]}

    @tool
    def board(self) -> dict[str, Any]:
        """The position: FEN, a text diagram (white at the bottom), whose move it is, your
        colour, and the moves so far in SAN."""
        return {
            "fen": self._board.fen(),
            "board": str(self._board),
            "turn": _NAMES[self._board.turn],
            "your_color": _NAMES[self._agent],
            "moves": self.state.moves_san,
        }


@dataclass(frozen=True)
class _Snapshot:
    board: chess.Board
    agent: chess.Color
    settings: OpponentSettings
    resigned: chess.Color | None
    rng: Any
    state: ChessState


def _board(fen: str | None) -> chess.Board:
    """The board of ``fen`` (the starting position when empty), which must be one a game can
    reach: a king that can be taken would let a move capture it."""
    if fen is not None and not isinstance(fen, str):
        raise ValueError(f"fen must be a string in FEN, got {type(fen).__name__}")
    try:
        board = chess.Board(fen) if fen else chess.Board()
    except ValueError as exc:
        raise ValueError(f"Invalid FEN {fen!r}: {exc}") from None
    status = board.status()
    if status != chess.STATUS_VALID:
        problems = [
            str(flag.name).lower().replace("_", " ") for flag in chess.Status if flag & status
        ]
        raise ValueError(
            f"Invalid FEN {fen!r}: not a position a game can reach ({', '.join(problems)})"
        )
    return board


def _san_of_last(board: chess.Board, move: chess.Move | None) -> str | None:
    """SAN of ``move``, the last move played on ``board``."""
    if move is None or not board.move_stack or board.move_stack[-1] != move:
        return None
    before = board.copy(stack=1)
    before.pop()
    return before.san(move)
