"""The chess environment: client and models (``chess_env.server`` holds the server side)."""

from chess_env.client import ChessEnv
from chess_env.models import ChessAction, ChessObservation, ChessState

__all__ = ["ChessAction", "ChessEnv", "ChessObservation", "ChessState"]
