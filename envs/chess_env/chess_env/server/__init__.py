from chess_env.server.environment import ChessEnvironment

__all__ = ["ChessEnvironment"]
