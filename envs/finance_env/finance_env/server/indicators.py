"""Technical indicators and the turbulence index, computed per asset over a whole price history.

The names and windows are those FinRL uses by default (its ``INDICATORS``): MACD (12/26 day
exponential averages), Bollinger bands (20 days, two standard deviations), RSI, CCI and DX over
30 days (Wilder's smoothing for RSI and DX), and 30- and 60-day simple moving averages. Values
before a window fills are taken from the first complete one. Turbulence is the Mahalanobis
distance of a day's returns from the previous 252 days' (0 before a year of history).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

TURBULENCE_WINDOW = 252


def _frame(values: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(values)


def _finish(frame: Any) -> Any:
    return frame.bfill().fillna(0.0).to_numpy(float)


def _wilder(frame: Any, window: int) -> Any:
    return frame.ewm(alpha=1.0 / window, adjust=False).mean()


def macd(close: Any, high: Any, low: Any) -> Any:
    prices = _frame(close)
    return _finish(
        prices.ewm(span=12, adjust=False).mean() - prices.ewm(span=26, adjust=False).mean()
    )


def _bollinger(close: Any, sign: int) -> Any:
    prices = _frame(close).rolling(20)
    return _finish(prices.mean() + sign * 2 * prices.std(ddof=0))


def rsi_30(close: Any, high: Any, low: Any) -> Any:
    change = _frame(close).diff()
    gain, loss = _wilder(change.clip(lower=0), 30), _wilder(-change.clip(upper=0), 30)
    strength = gain / loss.replace(0.0, np.nan)
    return _finish((100 - 100 / (1 + strength)).where(loss != 0, 100.0))


def cci_30(close: Any, high: Any, low: Any) -> Any:
    typical = _frame((np.asarray(high) + np.asarray(low) + np.asarray(close)) / 3)
    window = typical.rolling(30)
    mean = window.mean()
    deviation = window.apply(lambda w: np.abs(w - w.mean()).mean(), raw=True)
    return _finish((typical - mean) / (0.015 * deviation.replace(0.0, np.nan)))


def dx_30(close: Any, high: Any, low: Any) -> Any:
    high_, low_, close_ = _frame(high), _frame(low), _frame(close)
    up, down = high_.diff(), -low_.diff()
    plus = up.where((up > down) & (up > 0), 0.0)
    minus = down.where((down > up) & (down > 0), 0.0)
    previous = close_.shift(1)
    true_range = np.maximum(
        high_ - low_, np.maximum((high_ - previous).abs(), (low_ - previous).abs())
    )
    average = _wilder(true_range, 30).replace(0.0, np.nan)
    plus_di, minus_di = 100 * _wilder(plus, 30) / average, 100 * _wilder(minus, 30) / average
    total = (plus_di + minus_di).replace(0.0, np.nan)
    return _finish(100 * (plus_di - minus_di).abs() / total)


def _sma(window: int) -> Callable[[Any, Any, Any], Any]:
    def sma(close: Any, high: Any, low: Any) -> Any:
        return _finish(_frame(close).rolling(window).mean())

    return sma


INDICATORS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "macd": macd,
    "boll_ub": lambda close, high, low: _bollinger(close, +1),
    "boll_lb": lambda close, high, low: _bollinger(close, -1),
    "rsi_30": rsi_30,
    "cci_30": cci_30,
    "dx_30": dx_30,
    "close_30_sma": _sma(30),
    "close_60_sma": _sma(60),
}


def compute_indicator(name: str, close: Any, high: Any, low: Any) -> Any:
    """``name`` for every day and asset (days x assets)."""
    return INDICATORS[name](close, high, low)


def turbulence(close: Any) -> Any:
    """The turbulence index of each day (rolling means and covariances from cumulative sums)."""
    prices = np.asarray(close, dtype=float)
    returns = prices[1:] / prices[:-1] - 1.0  # returns[i] is the return into day i + 1
    index = np.zeros(len(prices))
    window = TURBULENCE_WINDOW
    if len(returns) <= window:
        return index
    sums = np.concatenate([np.zeros((1, returns.shape[1])), np.cumsum(returns, axis=0)])
    outer = np.einsum("ti,tj->tij", returns, returns)
    products = np.concatenate([np.zeros((1, *outer.shape[1:])), np.cumsum(outer, axis=0)])
    ends = np.arange(window, len(returns))  # history: returns[end - window : end]
    total = sums[ends] - sums[ends - window]
    mean = total / window
    covariance = (
        products[ends] - products[ends - window] - window * np.einsum("ti,tj->tij", mean, mean)
    ) / (window - 1)
    deviation = returns[ends] - mean
    inverse = np.linalg.pinv(covariance)
    index[ends + 1] = np.einsum("ti,tij,tj->t", deviation, inverse, deviation)
    return index
