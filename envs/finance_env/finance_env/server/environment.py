"""The trading environment, with the semantics of FinRL's ``StockTradingEnv``.

Each step is one trading day. The action holds one value in [-1, 1] per asset; times ``hmax``
and truncated to a whole number it is the shares to buy (> 0) or sell (< 0). Sales run first
(most negative first), then purchases (largest first): a sale is capped by the shares held and
pays ``price * shares * (1 - sell_cost_pct)``; a purchase is capped by what the cash buys at
``price * (1 + buy_cost_pct)`` a share. When ``turbulence_threshold`` is set and the day's
turbulence reaches it, everything is sold and nothing bought. Then the market moves to the next
day, and the reward is the change in portfolio value (cash plus holdings at close prices) times
``reward_scaling``. The episode ends on the last day of the chosen range.

Settings are chosen at ``reset``; those not given keep their current values.

The reward has no fixed bound (``reward_range`` is ``(-inf, inf)``: prices move as they will),
but only the market moves it: cash and holdings never go negative, a purchase is capped by the
cash, a sale by the shares held, and every trade pays its cost, so trading alone never raises
the portfolio's value, and no step loses more than the portfolio held. An action of the wrong
length is a validation error; a step before ``reset`` or after the last day is refused with
``ResetRequiredError``.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from finance_env.models import TradingAction, TradingObservation, TradingState
from finance_env.server.data import Market, default_source, load_market, split_range
from finance_env.server.indicators import INDICATORS
from openenv_hub import MCPEnvironment, tool
from openenv_hub.errors import ActionValidationError, ResetRequiredError
from openenv_hub.types import Action, EnvironmentMetadata, Observation


@dataclass(frozen=True)
class Settings:
    """Data, date range and account rules of an episode (FinRL's defaults)."""

    data: str = "googl"
    start_date: str | None = None
    end_date: str | None = None
    split: str | None = None
    split_date: str | None = None
    test_fraction: float = 0.2
    max_days: int | None = None
    initial_amount: float = 1_000_000.0
    hmax: int = 100
    buy_cost_pct: float = 0.001
    sell_cost_pct: float = 0.001
    reward_scaling: float = 1e-4
    turbulence_threshold: float | None = None
    indicators: tuple[str, ...] = field(default_factory=lambda: tuple(INDICATORS))

    def check(self) -> None:
        """Raise ValueError naming the first setting that cannot work (a wrong type included)."""
        _texts(self, "data", "start_date", "end_date", "split", "split_date")
        _number("initial_amount", self.initial_amount, above=0.0, at_most=MAX_AMOUNT)
        _number("reward_scaling", self.reward_scaling, above=0.0)
        _number("test_fraction", self.test_fraction)
        for name in ("buy_cost_pct", "sell_cost_pct"):
            if not 0 <= _number(name, getattr(self, name)) < 1:
                raise ValueError("buy_cost_pct and sell_cost_pct must be in [0, 1)")
        if self.turbulence_threshold is not None:
            _number("turbulence_threshold", self.turbulence_threshold)
        _whole("hmax", self.hmax, 1, MAX_HMAX)
        if self.max_days is not None:
            _whole("max_days", self.max_days, 2, None)
        if isinstance(self.indicators, str) or not all(
            isinstance(name, str) for name in self.indicators
        ):
            raise ValueError(f"indicators must be a list of names, got {self.indicators!r}")


#: The largest starting cash and the most shares a trade may move per asset: beyond them, cash
#: and share counts would leave the exact range of floats and of 64-bit integers.
MAX_AMOUNT = 1e15
MAX_HMAX = 10**9


def _number(
    name: str, value: object, *, above: float | None = None, at_most: float | None = None
) -> float:
    """``value`` if it is a finite number (above ``above``, at most ``at_most``), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if (above is not None and value <= above) or (at_most is not None and value > at_most):
        bounds = f"above {above:g}" + (f" and at most {at_most:g}" if at_most else "")
        raise ValueError(f"{name} must be {bounds}, got {value!r}")
    return float(value)


def _whole(name: str, value: object, low: int, high: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number, at least {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high}, got {value!r}")


def _texts(settings: Settings, *names: str) -> None:
    for name in names:
        value = getattr(settings, name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {value!r}")


@dataclass
class Account:
    cash: float
    holdings: Any  # shares per asset (int64)
    cost: float = 0.0
    trades: int = 0


class TradingEnvironment(MCPEnvironment):
    """Stock trading on daily prices, with MCP tools for language models.

    Args:
        **settings: Defaults for :class:`Settings`; ``data`` defaults to ``$FINANCE_DATA``.
    """

    reward_range = (-math.inf, math.inf)

    def __init__(self, **settings: Any) -> None:
        super().__init__()
        defaults = Settings(data=default_source())
        self._settings = replace(defaults, **settings)
        self._market: Market | None = None
        self._account = Account(0.0, np.zeros(0, dtype=np.int64))
        self._day = 0
        self._state = TradingState()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **settings: Any
    ) -> TradingObservation:
        """Start trading on the first day of the chosen range (see :class:`Settings`)."""
        unknown = set(settings) - set(Settings.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"Unknown reset argument(s) {sorted(unknown)}; the settings are "
                f"{sorted(Settings.__dataclass_fields__)}"
            )
        # An explicit None clears an optional setting (a date, the split, a limit).
        optional = {f.name for f in fields(Settings) if f.default is None}
        given = {k: v for k, v in settings.items() if v is not None or k in optional}
        if isinstance(given.get("indicators"), (list, tuple)):
            given["indicators"] = tuple(given["indicators"])
        chosen = replace(self._settings, **given)
        chosen.check()
        market = split_range(
            load_market(chosen.data, chosen.indicators),
            start_date=chosen.start_date,
            end_date=chosen.end_date,
            split=chosen.split,
            split_date=chosen.split_date,
            test_fraction=chosen.test_fraction,
        )
        if chosen.max_days is not None:
            market = market.window(0, chosen.max_days)
        self._settings, self._market, self._day = chosen, market, 0
        self._account = Account(
            float(chosen.initial_amount), np.zeros(len(market.tickers), np.int64)
        )
        self._state = TradingState(
            episode_id=episode_id or str(uuid.uuid4()),
            data=chosen.data,
            split=chosen.split,
            start_date=market.dates[0],
            end_date=market.dates[-1],
            tickers=market.tickers,
            initial_amount=chosen.initial_amount,
            hmax=chosen.hmax,
            buy_cost_pct=chosen.buy_cost_pct,
            sell_cost_pct=chosen.sell_cost_pct,
            reward_scaling=chosen.reward_scaling,
            turbulence_threshold=chosen.turbulence_threshold,
            indicators=list(chosen.indicators),
        )
        self._record()
        return self._observation(reward=None)

    # -- snapshots (exact forks; see openenv_hub.server.snapshots) ---------------------------

    def snapshot(self) -> _Snapshot:
        """The episode at its day index: settings, market, account and bookkeeping (kept by
        the server, never sent; the market's prices are shared, never changed)."""
        if self._market is None:
            raise ResetRequiredError("Call reset() first to choose the data and start trading.")
        account = self._account
        return _Snapshot(
            self._settings,
            self._market,
            self._day,
            Account(account.cash, account.holdings.copy(), account.cost, account.trades),
            self._state.model_copy(deep=True),
        )

    def restore(self, snapshot: _Snapshot) -> None:
        kept = snapshot.account
        self._settings, self._market, self._day = snapshot.settings, snapshot.market, snapshot.day
        self._account = Account(kept.cash, kept.holdings.copy(), kept.cost, kept.trades)
        self._state = snapshot.state.model_copy(deep=True)

    def state_digest(self) -> str | None:
        """A hash of the settings, the market's range, the day and the account (cash,
        holdings, costs, trades). Trading draws nothing at random: every episode replays."""
        if self._market is None:
            return None
        market, account = self._market, self._account
        facts = (
            sorted(vars(self._settings).items()),
            list(market.tickers), market.dates[0], market.dates[-1], len(market.dates),
            self._day, account.cash, account.holdings.tolist(), account.cost, account.trades,
        )  # fmt: skip
        return hashlib.blake2b(repr(facts).encode(), digest_size=12).hexdigest()

    # -- trading ---------------------------------------------------------------------------

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        if not isinstance(action, TradingAction):
            raise TypeError(f"expected a TradingAction, got {type(action).__name__}")
        market = self._ready()
        if len(action.actions) != len(market.tickers):
            raise _wrong_length(len(action.actions), market.tickers)
        shares = (np.asarray(action.actions, dtype=float) * self._settings.hmax).astype(np.int64)
        return self.trade_shares(shares)

    def trade_shares(self, shares: Any) -> TradingObservation:
        """Sell, then buy, ``shares`` (one signed count per asset); move to the next day."""
        market, settings, account = self._ready(), self._settings, self._account
        prices = market.close[self._day]
        before = self._value(prices)
        if settings.turbulence_threshold is not None and (
            market.turbulence[self._day] >= settings.turbulence_threshold
        ):
            shares = -account.holdings.copy()  # sell everything, buy nothing
        order = np.argsort(shares, kind="stable")
        for asset in order[: int((shares < 0).sum())]:
            self._sell(int(asset), int(-shares[asset]), float(prices[asset]))
        for asset in order[::-1][: int((shares > 0).sum())]:
            self._buy(int(asset), int(shares[asset]), float(prices[asset]))
        self._day += 1
        after = self._value(market.close[self._day])
        self._record()
        return self._observation(reward=(after - before) * settings.reward_scaling)

    def _sell(self, asset: int, count: int, price: float) -> None:
        account, fee = self._account, self._settings.sell_cost_pct
        sold = min(count, int(account.holdings[asset]))
        if price <= 0 or sold <= 0:
            return
        account.cash += price * sold * (1 - fee)
        account.holdings[asset] -= sold
        account.cost += price * sold * fee
        account.trades += 1

    def _buy(self, asset: int, count: int, price: float) -> None:
        account, fee = self._account, self._settings.buy_cost_pct
        if price <= 0:
            return
        bought = min(count, int(account.cash // (price * (1 + fee))))
        if bought <= 0:
            return
        account.cash -= price * bought * (1 + fee)
        account.holdings[asset] += bought
        account.cost += price * bought * fee
        account.trades += 1

    def _ready(self) -> Market:
        if self._market is None:
            raise ResetRequiredError("Call reset() first to choose the data and start trading.")
        if self._day >= len(self._market.dates) - 1:
            raise ResetRequiredError(
                f"The episode ended on {self._market.dates[-1]}; call reset() to trade again."
            )
        return self._market

    def _value(self, prices: Any) -> float:
        return float(self._account.cash + (prices * self._account.holdings).sum())

    # -- observations ----------------------------------------------------------------------

    def _record(self) -> None:
        assert self._market is not None
        state, market, day = self._state, self._market, self._day
        state.dates.append(market.dates[day])
        state.portfolio_values.append(self._value(market.close[day]))
        for asset, ticker in enumerate(market.tickers):
            state.closes.setdefault(ticker, []).append(float(market.close[day, asset]))

    def _observation(self, reward: float | None) -> TradingObservation:
        assert self._market is not None
        market, day, account = self._market, self._day, self._account
        prices = market.close[day].tolist()
        holdings = account.holdings.tolist()
        indicators = {name: values[day].tolist() for name, values in market.indicators.items()}
        vector = [float(account.cash), *prices, *holdings]
        for values in indicators.values():
            vector.extend(values)
        return TradingObservation(
            date=market.dates[day],
            tickers=market.tickers,
            cash=float(account.cash),
            prices=prices,
            holdings=holdings,
            indicators=indicators,
            portfolio_value=self._value(market.close[day]),
            turbulence=float(market.turbulence[day]),
            state=[float(v) for v in vector],
            day=day,
            days=len(market.dates),
            cost=float(account.cost),
            trades=account.trades,
            reward=reward,
            done=day >= len(market.dates) - 1,
        )

    @property
    def state(self) -> TradingState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="finance_env",
            description="Stock trading on real daily prices with FinRL's StockTradingEnv rules: "
            "cash, holdings, prices and indicators; buy or sell up to hmax shares a day.",
            version="0.1.0",
        )

    # -- MCP tools -------------------------------------------------------------------------

    @tool
    def portfolio(self) -> dict[str, Any]:
        """Your account today: cash, shares held and prices per ticker, total value, and how
        many trading days are left."""
        market = self._market
        if market is None:
            raise ResetRequiredError("Call reset() first to choose the data and start trading.")
        prices = market.close[self._day]
        return {
            "date": market.dates[self._day],
            "cash": float(self._account.cash),
            "holdings": dict(zip(market.tickers, self._account.holdings.tolist(), strict=True)),
            "prices": dict(zip(market.tickers, prices.tolist(), strict=True)),
            "portfolio_value": self._value(prices),
            "days_left": len(market.dates) - 1 - self._day,
        }

    @tool
    def trade(self, shares: dict[str, int]) -> dict[str, Any]:
        """Trade at today's close, then move to the next trading day.

        Args:
            shares: Ticker -> shares to buy (positive) or sell (negative), at most hmax each;
                tickers left out are held.

        Returns:
            The portfolio on the next day, with the reward and whether the episode is over.
        """
        market = self._ready()
        unknown = sorted(set(shares) - set(market.tickers))
        if unknown:
            raise ValueError(f"Unknown ticker(s) {unknown}; trade {market.tickers}")
        hmax = self._settings.hmax
        counts = np.array(
            [int(np.clip(shares.get(t, 0), -hmax, hmax)) for t in market.tickers], np.int64
        )
        observation = self.trade_shares(counts)
        return {**self.portfolio(), "reward": observation.reward, "done": observation.done}


@dataclass(frozen=True)
class _Snapshot:
    settings: Settings
    market: Market
    day: int
    account: Account
    state: TradingState


def _wrong_length(given: int, tickers: list[str]) -> ActionValidationError:
    message = (
        f"Expected {len(tickers)} action value(s), one per asset ({', '.join(tickers)}); "
        f"got {given}"
    )
    error = {"type": "actions_length", "loc": ["actions"], "msg": message, "input": given}
    return ActionValidationError(message, data={"errors": [error]})
