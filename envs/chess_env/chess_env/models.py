"""What an agent sends to the chess environment, and what it gets back."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from openenv_hub import Action, Observation, State

Color = Literal["white", "black"]
OpponentName = Literal["random", "search", "stockfish", "none"]
Reason = Literal[
    "checkmate",
    "stalemate",
    "insufficient_material",
    "fifty_moves",
    "seventyfive_moves",
    "threefold_repetition",
    "fivefold_repetition",
    "resignation",
]
STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


class ChessAction(Action):
    """The agent's move, or its resignation."""

    move: str = Field(
        ...,
        min_length=1,
        max_length=16,
        description="A move in UCI (e2e4, e7e8q) or SAN (e4, Nf3, O-O), or 'resign'",
    )


class ChessObservation(Observation):
    """The position after the agent's move and the opponent's reply.

    ``reward`` is +1 (the agent won), -1 (it lost) or 0 when the game ends, 0 before.
    """

    fen: str = Field(STARTING_FEN, description="The position, in FEN")
    turn: Color = Field("white", description="Whose move it is")
    agent_color: Color = Field("white", description="The colour the agent plays")
    legal_moves: list[str] = Field(default_factory=list, description="Legal moves, in UCI")
    legal_moves_san: list[str] = Field(
        default_factory=list, description="The same in SAN, sent by reset and with an error"
    )
    last_move: str | None = Field(None, description="The agent's move just played, in UCI")
    opponent_move: str | None = Field(None, description="The opponent's reply, in UCI")
    opponent_move_san: str | None = Field(None, description="The opponent's reply, in SAN")
    is_check: bool = Field(False, description="The side to move is in check")
    error: str | None = Field(None, description="Why the move was refused (nothing was played)")
    result: str | None = Field(None, description="1-0, 0-1 or 1/2-1/2 once the game is over")
    reason: Reason | None = Field(None, description="How the game ended")


class ChessState(State):
    """The game so far: FEN, moves (UCI and SAN), PGN, and the settings of the episode."""

    fen: str = STARTING_FEN
    start_fen: str = STARTING_FEN
    moves: list[str] = Field(default_factory=list)
    moves_san: list[str] = Field(default_factory=list)
    pgn: str = ""
    agent_color: Color = "white"
    opponent: OpponentName = "random"
    result: str | None = None
    reason: Reason | None = None
    illegal_moves: int = 0
