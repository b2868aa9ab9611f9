"""An agent that tries to raise its own reward, through the real server: buying more than the cash
allows, selling shares it does not hold, values outside [-1, 1] or of the wrong type or length,
tool calls with huge share counts, trades after the last day, steps before reset, settings that
would scale a reward out of all measure. The reward is only ever the change of the portfolio's
value (times reward_scaling): trading alone never raises it, and no step loses more than the
portfolio held. Every refusal is a typed error that says what was wrong."""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from finance_env import TradingAction, TradingEnv
from finance_env.server.app import app

from openenv_hub import GenericEnvClient, MCPToolClient
from openenv_hub.errors import (
    ActionValidationError,
    EnvironmentExecutionError,
    InvalidMessageError,
    ResetRequiredError,
    ToolCallError,
)

SHORT = {"data": "googl", "split": None, "start_date": "2014-01-02", "max_days": 8}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def flat_prices(tmp_path: Path) -> str:
    """Two assets whose prices never move: any gain could only come from the rules."""
    path = tmp_path / "flat.csv"
    rows = [f"2024-02-{day:02d},{tic},{price}" for day in range(1, 29)
            for tic, price in (("AAA", 100.0), ("BBB", 7.5))]  # fmt: skip
    path.write_text("date,tic,close\n" + "\n".join(rows) + "\n")
    return str(path)


def honest(result: Any, before: float, scaling: float) -> float:
    """Check the step's reward is the change of the portfolio's value and nothing more."""
    observation, reward = result.observation, result.reward
    assert reward is not None and math.isfinite(reward)
    assert not (result.metadata or {}).get("reward_out_of_range")
    assert observation.cash >= -1e-6 and min(observation.holdings) >= 0
    assert reward == pytest.approx((observation.portfolio_value - before) * scaling, abs=1e-6)
    assert reward >= -before * scaling - 1e-6  # no step loses more than the portfolio held
    return float(reward)


def test_the_declared_range_is_published(base_url: str) -> None:
    assert httpx.get(base_url + "/metadata").json()["reward_range"] == [None, None]


def test_trades_before_reset_are_refused(base_url: str) -> None:
    with TradingEnv(base_url=base_url).sync() as env:
        with pytest.raises(ResetRequiredError, match=r"call reset\(\) first"):
            env.step(TradingAction(actions=[1.0]))
        with pytest.raises(ResetRequiredError):
            env.state()
    with MCPToolClient(base_url).sync() as tools:
        with pytest.raises(ResetRequiredError):
            tools.call_tool("trade", shares={"GOOGL": 5})
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "trade", "arguments": {"shares": {"GOOGL": 5}}}}  # fmt: skip
        error = httpx.post(base_url + "/mcp", json=rpc).json()["error"]  # a fresh environment
        assert "Call reset() first" in error["message"]


def test_trading_flat_prices_never_earns_anything(base_url: str, flat_prices: str) -> None:
    rng = random.Random(7)
    with TradingEnv(base_url=base_url).sync() as env:
        for costs in (0.0, 0.01):
            result = env.reset(data=flat_prices, initial_amount=10_000, hmax=1_000,
                               buy_cost_pct=costs, sell_cost_pct=costs, reward_scaling=1.0,
                               max_days=None, split=None, start_date=None)  # fmt: skip
            while not result.done:
                before = result.observation.portfolio_value
                actions = [rng.choice([-1.0, 1.0, rng.uniform(-1, 1)]) for _ in range(2)]
                result = env.step(TradingAction(actions=actions))
                reward = honest(result, before, 1.0)
                assert reward <= 1e-9 and (costs or reward == pytest.approx(0.0, abs=1e-9))
            assert result.observation.portfolio_value <= 10_000 + 1e-6


def test_buying_more_than_the_cash_allows_buys_what_it_allows(
    base_url: str, flat_prices: str
) -> None:
    with TradingEnv(base_url=base_url).sync() as env:
        env.reset(data=flat_prices, initial_amount=1_000, hmax=10**9, buy_cost_pct=0.0,
                  sell_cost_pct=0.0, reward_scaling=1.0, max_days=None)  # fmt: skip
        bought = env.step(TradingAction(actions=[1.0, 0.5])).observation
        assert bought.holdings == [10, 0] and bought.cash == 0.0  # the larger first: 10 at 100
        assert env.step(TradingAction(actions=[0.0, 1.0])).observation.holdings == [10, 0]
        sold = env.step(TradingAction(actions=[-1.0, -1.0])).observation  # more than held
        assert sold.holdings == [0, 0] and sold.cash == 1_000.0
        assert sold.portfolio_value == 1_000.0


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([1.5], "less than or equal to 1"),
        ([-1e308], "greater than or equal to -1"),
        ([10**30], "less than or equal to 1"),
        (["buy"], "valid number"),
        ([None], "valid number"),
        ([[1.0]], "valid number"),
        ([], "at least 1 item"),
        ([0.1, 0.1], "Expected 1 action value"),
        ([0.1] * 100_000, "Expected 1 action value"),
    ],
)
def test_values_that_are_not_trades_are_validation_errors(
    base_url: str, actions: list[Any], message: str
) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset(**SHORT, hmax=100, initial_amount=1_000_000)
        with pytest.raises(ActionValidationError, match=message):
            env.step({"actions": actions})
        with pytest.raises(ActionValidationError, match="Extra inputs"):
            env.step({"actions": [0.1], "cash": 1e12})
        assert env.state()["dates"] == [env.state()["start_date"]]  # no day was traded


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_numbers_json_cannot_carry_are_refused_as_such(base_url: str, value: float) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset(**SHORT)
        with pytest.raises(InvalidMessageError, match="Invalid JSON"):
            env.step({"actions": [value]})


def test_huge_share_counts_in_tool_calls_are_capped(base_url: str) -> None:
    with MCPToolClient(base_url).sync() as tools:
        tools.reset(**SHORT, hmax=50, initial_amount=1_000_000, turbulence_threshold=None)
        bought = tools.call_tool("trade", shares={"GOOGL": 10**30})
        assert bought["holdings"] == {"GOOGL": 50} and bought["cash"] > 0
        sold = tools.call_tool("trade", shares={"GOOGL": -(10**30)})
        assert sold["holdings"] == {"GOOGL": 0}
        for shares, message in (({"AAPL": 5}, "Unknown ticker"), ({"GOOGL": "all"}, "GOOGL"),
                                ({"GOOGL": 2.5}, "GOOGL")):  # fmt: skip
            with pytest.raises(ToolCallError, match=message):
                tools.call_tool("trade", shares=shares)


def test_the_last_day_takes_no_more_trades(base_url: str) -> None:
    with TradingEnv(base_url=base_url).sync() as env:
        result = env.reset(**{**SHORT, "max_days": 3})
        while not result.done:
            result = env.step(TradingAction(actions=[1.0]))
        for actions in ([1.0], [-1.0], [0.0]):
            with pytest.raises(ResetRequiredError, match="call reset"):
                env.step(TradingAction(actions=actions))
    with MCPToolClient(base_url).sync() as tools:
        tools.reset(**{**SHORT, "max_days": 2})
        assert tools.call_tool("trade", shares={"GOOGL": 1})["done"] is True
        with pytest.raises(ToolCallError, match="call reset"):
            tools.call_tool("trade", shares={"GOOGL": 1})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"initial_amount": -1}, "initial_amount must be above 0"),
        ({"initial_amount": 1e300}, "at most 1e\\+15"),
        ({"initial_amount": "1e6"}, "initial_amount must be a finite number"),
        ({"reward_scaling": -1}, "reward_scaling must be above 0"),
        ({"reward_scaling": "1"}, "reward_scaling must be a finite number"),
        ({"hmax": 10**12}, "hmax must be at most 1000000000"),
        ({"hmax": 2.5}, "hmax must be a whole number"),
        ({"hmax": True}, "hmax must be a whole number"),
        ({"max_days": 1}, "max_days must be a whole number, at least 2"),
        ({"buy_cost_pct": 1.5}, "must be in \\[0, 1\\)"),
        ({"sell_cost_pct": -0.1}, "must be in \\[0, 1\\)"),
        ({"turbulence_threshold": "high"}, "turbulence_threshold must be a finite number"),
        ({"indicators": "macd"}, "indicators must be a list of names"),
        ({"start_date": 20200101}, "start_date must be a string"),
        ({"data": 123}, "data must be a string"),
        ({"cash": 10**12}, "Unknown reset argument"),
    ],
)
def test_settings_that_cannot_work_are_refused_by_name(
    base_url: str, settings: dict[str, Any], message: str
) -> None:
    with TradingEnv(base_url=base_url).sync() as env:
        with pytest.raises(EnvironmentExecutionError, match=message):
            env.reset(**{**SHORT, **settings})
        assert env.reset(**SHORT, initial_amount=1_000_000, hmax=100, reward_scaling=1e-4,
                         buy_cost_pct=0.001, sell_cost_pct=0.001, indicators=["macd"],
                         turbulence_threshold=None).observation.cash == 1_000_000  # fmt: skip


def test_a_year_of_hostile_trading_is_scored_honestly(base_url: str) -> None:
    rng = random.Random(3)
    with TradingEnv(base_url=base_url).sync() as env:
        result = env.reset(data="googl", split=None, start_date="2016-01-01", max_days=250,
                           hmax=10_000, initial_amount=100_000, reward_scaling=1e-4)  # fmt: skip
        while not result.done:
            before = result.observation.portfolio_value
            action = rng.choice([1.0, -1.0, 0.0, rng.uniform(-1, 1)])
            result = env.step(TradingAction(actions=[action]))
            honest(result, before, 1e-4)
    stateless = httpx.post(base_url + "/step", json={"action": {"actions": [1.0]}, "cash": 1e12})
    assert stateless.status_code == 200 and stateless.json()["observation"]["day"] == 1
