"""``TradingEnv``: the typed client of the trading environment."""

from __future__ import annotations

from finance_env.models import TradingAction, TradingObservation, TradingState
from openenv_hub import EnvClient


class TradingEnv(EnvClient[TradingAction, TradingObservation, TradingState]):
    """Client of the trading environment.

    Example::

        async with TradingEnv(base_url="http://127.0.0.1:8000") as env:
            result = await env.reset(data="googl", split="test")
            result = await env.step(TradingAction(actions=[0.5]))
            result.observation.portfolio_value

    The environment's MCP tools (``portfolio``, ``trade``) are reached with
    :class:`~openenv_hub.MCPToolClient` on the same server.
    """

    action_type = TradingAction
    observation_type = TradingObservation
    state_type = TradingState


__all__ = ["TradingEnv"]
