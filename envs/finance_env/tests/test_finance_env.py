"""The trading environment over /ws through its typed client: an episode recomputed by hand from
the price file, CSV, Parquet and Hugging Face dataset sources, ranges and splits, MCP tools."""

from __future__ import annotations

import csv
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import uvicorn
from finance_env import TradingAction, TradingEnv
from finance_env.server.app import app
from finance_env.server.data import builtin_path

from openenv_hub import MCPToolClient
from openenv_hub.errors import ActionValidationError, EnvironmentExecutionError


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


def googl_closes(first_day: str, days: int) -> list[float]:
    """Close prices straight from the CSV file the built-in data set comes from."""
    with builtin_path("googl").open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["Date"] >= first_day]
    return [float(row["Close"]) for row in rows[:days]]


def test_final_portfolio_value_matches_a_hand_computation(base_url: str) -> None:
    actions = [1.0, 0.0, -0.55, 0.3, -1.0]  # times hmax=10: buy 10, hold, sell 5, buy 3, sell all
    cash, held, fee = 10_000.0, 0, 0.001
    closes = googl_closes("2013-01-02", len(actions) + 1)
    for action, price in zip(actions, closes, strict=False):
        shares = int(action * 10)
        if shares < 0:
            sold = min(-shares, held)
            cash, held = cash + price * sold * (1 - fee), held - sold
        elif shares > 0:
            bought = min(shares, int(cash // (price * (1 + fee))))
            cash, held = cash - price * bought * (1 + fee), held + bought
    expected = cash + held * closes[-1]

    with TradingEnv(base_url=base_url).sync() as env:
        result = env.reset(
            data="googl", start_date="2013-01-02", max_days=6, initial_amount=10_000,
            hmax=10, buy_cost_pct=fee, sell_cost_pct=fee, reward_scaling=1.0, split=None,
        )  # fmt: skip
        assert result.observation.prices == [closes[0]] and result.observation.days == 6
        rewards = []
        for action in actions:
            result = env.step(TradingAction(actions=[action]))
            rewards.append(result.reward)
        state = env.state()
    observation = result.observation
    assert result.done and observation.day == 5
    assert observation.holdings == [held] == [0] and observation.trades == 4
    assert observation.portfolio_value == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert sum(rewards) == pytest.approx(expected - 10_000, abs=1e-6)
    assert observation.state[:3] == [observation.cash, closes[-1], 0.0]
    assert len(observation.state) == 3 + len(observation.indicators)
    assert state.portfolio_values[-1] == observation.portfolio_value and len(state.dates) == 6


def two_assets() -> pd.DataFrame:
    dates = pd.bdate_range("2021-03-01", periods=8).strftime("%Y-%m-%d")
    rows = [
        {"Date": d, "tic": tic, "Close": base + i, "High": base + i + 1, "Low": base + i - 1}
        for i, d in enumerate(dates)
        for tic, base in (("AAA", 10.0), ("BBB", 50.0))
    ]
    rows.append({"Date": "2021-03-20", "tic": "AAA", "Close": 99.0, "High": 99.0, "Low": 99.0})
    return pd.DataFrame(rows)  # the last row: a day BBB did not trade, dropped


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_long_table_of_several_assets_from_a_file(
    base_url: str, tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"prices{suffix}"
    table = two_assets()
    table.to_csv(path, index=False) if suffix == ".csv" else table.to_parquet(path)
    with TradingEnv(base_url=base_url).sync() as env:
        first = env.reset(data=str(path), start_date=None, max_days=None, hmax=100)
        assert first.observation.tickers == ["AAA", "BBB"] and first.observation.days == 8
        assert first.observation.prices == [10.0, 50.0]
        result = env.step(TradingAction(actions=[0.5, 0.1]))
        assert result.observation.holdings == [50, 10] and result.observation.prices == [11.0, 51.0]
        with pytest.raises(ActionValidationError, match="one per asset"):
            env.step(TradingAction(actions=[0.5]))
        with pytest.raises(ActionValidationError, match="less than or equal to 1"):
            env.step({"actions": [2.0, 0.0]})  # type: ignore[arg-type]


def test_a_hugging_face_dataset_repo(base_url: str, hub_env: Any, tmp_path: Path) -> None:
    api = hub_env.api("alice")
    repo_id = hub_env.repo_id("prices")
    api.create_repo(repo_id, repo_type="dataset")
    table = two_assets()
    parquet = tmp_path / "bbb.parquet"
    table[table.tic == "BBB"].drop(columns="tic").to_parquet(parquet)
    api.upload_file(path_or_fileobj=table[table.tic == "AAA"].drop(columns="tic").to_csv(
        index=False).encode(), path_in_repo="data/aaa.csv", repo_id=repo_id, repo_type="dataset")  # fmt: skip
    api.upload_file(path_or_fileobj=str(parquet), path_in_repo="data/bbb.parquet",
                    repo_id=repo_id, repo_type="dataset")  # fmt: skip
    with TradingEnv(base_url=base_url).sync() as env:
        whole = env.reset(data=f"hf://datasets/{repo_id}", start_date=None, max_days=None)
        assert whole.observation.tickers == ["AAA", "BBB"] and whole.observation.days == 8
        one = env.reset(data=f"hf://datasets/{repo_id}/data/bbb.parquet")
        assert one.observation.tickers == ["BBB"] and one.observation.prices == [50.0]
        api.create_repo(repo_id + "-empty", repo_type="dataset")
        with pytest.raises(EnvironmentExecutionError, match=r"no \.csv or \.parquet file"):
            env.reset(data=f"hf://datasets/{repo_id}-empty")


def test_date_range_and_train_test_split(base_url: str) -> None:
    with TradingEnv(base_url=base_url).sync() as env:
        kept = dict(data="googl", start_date="2015-01-01", end_date="2016-12-31", max_days=None)
        train = env.reset(**kept, split="train", split_date="2016-01-01")
        train_state = env.state()
        test = env.reset(**kept, split="test", split_date="2016-01-01")
        test_state = env.state()
        assert train.observation.date == "2015-01-02" and train_state.end_date < "2016-01-01"
        assert test.observation.date >= "2016-01-01" and test_state.end_date <= "2016-12-31"
        assert train.observation.days + test.observation.days == 504
        fraction = env.reset(split="test", split_date=None, test_fraction=0.25)
        assert fraction.observation.days == 126
        with pytest.raises(EnvironmentExecutionError, match="split must be"):
            env.reset(split="validation")
        with pytest.raises(EnvironmentExecutionError, match="No data at"):
            env.reset(data="/nowhere/prices.csv", split=None)


def test_turbulence_above_the_threshold_sells_everything(base_url: str) -> None:
    with TradingEnv(base_url=base_url).sync() as env:
        env.reset(data="googl", split=None, start_date="2010-09-01", max_days=30, hmax=10,
                  turbulence_threshold=None)  # fmt: skip
        assert env.step(TradingAction(actions=[1.0])).observation.holdings == [10]
        env.reset(turbulence_threshold=0.0)  # every day is turbulent
        result = env.step(TradingAction(actions=[1.0]))
        assert result.observation.holdings == [0] and result.observation.trades == 0
        assert result.observation.turbulence >= 0.0


def test_mcp_tools_trade_and_report(base_url: str) -> None:
    with MCPToolClient(base_url).sync() as env:
        env.reset(data="googl", split=None, start_date="2014-01-02", max_days=5, hmax=100,
                  turbulence_threshold=None)  # fmt: skip
        before = env.call_tool("portfolio")
        assert before["holdings"] == {"GOOGL": 0} and before["days_left"] == 4
        after = env.call_tool("trade", shares={"GOOGL": 7})
        assert after["holdings"] == {"GOOGL": 7} and after["date"] > before["date"]
        assert after["cash"] < before["cash"] and after["done"] is False
        capped = env.call_tool("trade", shares={"GOOGL": -500})  # at most hmax: sells all 7
        assert capped["holdings"] == {"GOOGL": 0}


def test_the_readme_example_runs(base_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    for block in readme.split("```python\n")[1:]:
        code = block.split("```", 1)[0].replace("http://127.0.0.1:8000", base_url)
        exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("['GOOGL'] ") and printed[1].startswith("2018-08-29 ")
