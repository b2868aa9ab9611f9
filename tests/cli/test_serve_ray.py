"""``openenv serve ENV --ray ADDRESS --replicas N`` on a real two-node Ray cluster: the replicas
serve, a replica Ray restarts is reported, Ctrl-C removes them all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from echo_env import EchoEnv

from openenv_hub.providers.local import wait_for_health

pytestmark = pytest.mark.slow

ECHO_ENV = Path(__file__).resolve().parents[2] / "envs" / "echo_env"


def _read_until(process: subprocess.Popen[str], marker: str) -> str:
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # ends at EOF if serve exits (pytest's timeout bounds the wait)
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError(f"never printed {marker!r}:\n{''.join(seen)[-4000:]}")


def test_serve_on_ray_reports_restarts_and_stops_on_ctrl_c(ray_cluster: Any) -> None:
    from openenv_hub.providers.ray import RayProvider, replica_names

    command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", str(ECHO_ENV)]
    command += ["--ray", ray_cluster.address, "--replicas", "2"]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "COLUMNS": "250"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        output = _read_until(process, "Press Ctrl+C to stop.")
        urls = re.findall(r"Replica \d  (http://127\.0\.0\.[23]:\d+)", output)
        assert len(urls) == 2, output
        for url in urls:
            with EchoEnv(base_url=url).sync() as env_client:
                env_client.reset()
                assert env_client.call_tool("echo_message", message="Hi") == "Hi"
        name = re.search(r"Name  (\S+)", output).group(1)  # type: ignore[union-attr]

        deployment = RayProvider.attach(name, address=ray_cluster.address)
        victim = deployment.replicas()[0]
        os.kill(victim.pid, signal.SIGKILL)  # type: ignore[arg-type]
        output += _read_until(process, "restarted by Ray")
        wait_for_health(deployment.wait_ready(timeout_s=120)[0], timeout_s=30)
    finally:
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=120)[0]
    assert process.returncode == 0, output + rest
    assert "Stopped." in rest
    assert not [n for n in replica_names() if n.startswith(name)]


def test_serve_on_ray_without_an_address_says_how_to_start_a_cluster() -> None:
    pytest.importorskip("ray")
    result = subprocess.run(
        [sys.executable, "-m", "openenv_hub_cli.main", "serve", str(ECHO_ENV), "--ray", "auto"],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
    )
    assert result.returncode == 1
    assert "Error: No Ray cluster address was given." in result.stderr
    assert "ray start --head" in result.stderr
