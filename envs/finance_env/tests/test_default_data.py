"""A plain install (without the ``googl`` extra, whose package ships the default prices) fails when
the server starts, with the install line, on every way of starting it; given other data, it serves.

Each server runs in a child interpreter where ``gym_anytrading`` is marked absent
(``sys.modules[name] = None``, Python's own way of saying a module is not there)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from finance_env import TradingAction, TradingEnv

from openenv_hub.errors import EnvironmentExecutionError

ENV_DIR = Path(__file__).resolve().parents[1]
INSTALL_LINE = 'pip install "openenv-finance-env[googl]"'
HIDE = "import sys; sys.modules['gym_anytrading'] = None\n"
STARTS = {
    "openenv serve": "from openenv_hub_cli.main import main\nmain(['serve', {env_dir!r}, '--port', '{port}'])",
    "python -m openenv_hub.server": "import runpy\nsys.argv = ['x', 'finance_env.server.app:app', '--port', '{port}']\nrunpy.run_module('openenv_hub.server', run_name='__main__')",
    "finance-env-server": "from finance_env.server.__main__ import main\nmain(['--port', '{port}'])",
}  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(how: str, port: int, **env: str) -> subprocess.Popen[str]:
    code = HIDE + STARTS[how].format(env_dir=str(ENV_DIR), port=port)
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, "FINANCE_DATA": "googl", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("how", list(STARTS))
def test_without_the_extra_the_server_stops_at_once_with_the_install_line(how: str) -> None:
    process = start(how, free_port())
    try:
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 1, (out, err)
    assert INSTALL_LINE in err and "FINANCE_DATA" in err
    assert "Traceback" not in err


def test_without_the_extra_it_serves_other_data_and_names_the_line_for_googl(
    tmp_path: Path,
) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "date,close\n" + "".join(f"2024-01-{day:02d},{100 + day}\n" for day in range(2, 12))
    )
    port = free_port()
    process = start("python -m openenv_hub.server", port, FINANCE_DATA=str(prices))
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        with TradingEnv(base_url=url).sync() as env:
            first = env.reset()
            assert first.observation.tickers == ["PRICES"] and first.observation.days == 10
            assert env.step(TradingAction(actions=[0.5])).observation.holdings == [50]
            with pytest.raises(EnvironmentExecutionError, match=re.escape(INSTALL_LINE)):
                env.reset(data="googl")
    finally:
        process.terminate()
        process.communicate(timeout=20)
