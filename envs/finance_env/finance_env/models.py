"""What an agent sends to the trading environment, and what it gets back."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from openenv_hub import Action, Observation, State

Fraction = Annotated[float, Field(ge=-1.0, le=1.0)]


class TradingAction(Action):
    """One trading day: per asset, the fraction of ``hmax`` shares to buy (+) or sell (-)."""

    actions: list[Fraction] = Field(
        ...,
        min_length=1,
        description="One value in [-1, 1] per asset, in the order of `tickers`; "
        "times hmax it is the number of shares to buy (>0) or sell (<0)",
    )


class TradingObservation(Observation):
    """The account and the market on the current trading day.

    ``reward`` is the change in portfolio value over the step, times ``reward_scaling``.
    """

    date: str = Field("", description="The current trading day (ISO date)")
    tickers: list[str] = Field(default_factory=list, description="The assets, in action order")
    cash: float = Field(0.0, description="Cash in the account")
    prices: list[float] = Field(default_factory=list, description="Close price of each asset")
    holdings: list[int] = Field(default_factory=list, description="Shares held of each asset")
    indicators: dict[str, list[float]] = Field(
        default_factory=dict, description="Technical indicator -> value for each asset"
    )
    portfolio_value: float = Field(0.0, description="Cash plus holdings at close prices")
    turbulence: float = Field(0.0, description="The market's turbulence index today")
    state: list[float] = Field(
        default_factory=list,
        description="FinRL's state vector: cash, prices, holdings, then each indicator per asset",
    )
    day: int = Field(0, description="Trading days since the episode began")
    days: int = Field(0, description="Trading days in the episode")
    cost: float = Field(0.0, description="Transaction costs paid so far")
    trades: int = Field(0, description="Trades made so far")


class TradingState(State):
    """The episode's data and settings, and its history (for plots)."""

    data: str = ""
    split: str | None = None
    start_date: str = ""
    end_date: str = ""
    tickers: list[str] = Field(default_factory=list)
    initial_amount: float = 0.0
    hmax: int = 0
    buy_cost_pct: float = 0.0
    sell_cost_pct: float = 0.0
    reward_scaling: float = 0.0
    turbulence_threshold: float | None = None
    indicators: list[str] = Field(default_factory=list)
    dates: list[str] = Field(default_factory=list, description="Days played so far")
    portfolio_values: list[float] = Field(default_factory=list)
    closes: dict[str, list[float]] = Field(default_factory=dict)
