"""The trading environment: client and models (``finance_env.server`` holds the server side)."""

from finance_env.client import TradingEnv
from finance_env.models import TradingAction, TradingObservation, TradingState

__all__ = ["TradingAction", "TradingEnv", "TradingObservation", "TradingState"]
