from finance_env.server.environment import TradingEnvironment

__all__ = ["TradingEnvironment"]
