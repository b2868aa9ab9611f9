"""``ChessEnv``: the typed client of the chess environment."""

from __future__ import annotations

from chess_env.models import ChessAction, ChessObservation, ChessState
from openenv_hub import EnvClient


class ChessEnv(EnvClient[ChessAction, ChessObservation, ChessState]):
    """Client of the chess environment.

    Example::

        async with ChessEnv(base_url="http://127.0.0.1:8000") as env:
            await env.reset(opponent="random", agent_color="white", seed=1)
            result = await env.step(ChessAction(move="e4"))
            result.observation.opponent_move  # e.g. "g8f6"

    The environment's MCP tools (``make_move``, ``legal_moves``, ``board``) are reached with
    :class:`~openenv_hub.MCPToolClient` on the same server.
    """

    action_type = ChessAction
    observation_type = ChessObservation
    state_type = ChessState


__all__ = ["ChessEnv"]
