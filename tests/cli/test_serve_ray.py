"""``openenv serve ENV --ray ADDRESS --replicas N``, ``openenv ps --ray`` and ``openenv stop
--ray`` on a real two-node Ray cluster: the replicas serve, ps lists them, a restart Ray makes
is reported, stop removes them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from child_processes import end_child, start_child
from doc_blocks import doc_block
from echo_env import EchoEnv
from ray_support import require_extra

from openenv_hub.transport.local_ports import wait_for_health

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"


def _read_until(process: subprocess.Popen[str], marker: str) -> str:
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # ends at EOF if serve exits (pytest's timeout bounds the wait)
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError(f"never printed {marker!r}:\n{''.join(seen)[-4000:]}")


def test_serve_on_ray_ps_stop_and_a_reported_restart(ray_cluster: Any, cli: Any) -> None:
    """The block "serve on ray" of docs/scale.md, line by line, with the cluster's address."""
    from openenv_hub.runtimes.ray import RayProvider, replica_names

    serve, ps, stop = [
        line.removesuffix("&").replace("127.0.0.2:6379", ray_cluster.address).split()
        for line in doc_block("docs/scale.md", "serve on ray").lines
    ]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "COLUMNS": "250"}
    process = start_child(
        [sys.executable, "-m", "openenv_hub_cli.main", *serve[1:]],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
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

        listed = cli(*ps[1:], "--json")
        rows = [row for row in json.loads(listed.out) if row["runtime"] == "ray"]
        assert sorted(row["url"] for row in rows) == sorted(urls)
        assert all(row["owner_pid"] == process.pid and row["owner_alive"] for row in rows)

        deployment = RayProvider.attach(name, address=ray_cluster.address)
        os.kill(deployment.replicas()[0].pid, signal.SIGKILL)  # type: ignore[arg-type]
        output += _read_until(process, "restarted by Ray")
        wait_for_health(deployment.wait_ready(timeout_s=120)[0], timeout_s=30)

        stopped = cli(*stop[1:])
        assert stopped.code == 0 and stopped.out.count("Removed actor") == 2, stopped.text
        output += process.communicate(timeout=120)[0]  # serve sees its replicas gone
        assert process.returncode == 1 and "Every replica is gone" in output, output
    finally:
        end_child(process, timeout_s=120)
    assert not [n for n in replica_names() if n.startswith(name)]


def test_serve_on_ray_without_an_address_says_how_to_start_a_cluster() -> None:
    require_extra("ray")
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


@pytest.mark.parametrize(
    "args",
    [
        ["serve", str(ECHO_ENV), "--ray", "--replicas", "2"],
        ["serve", str(ECHO_ENV), "--replicas", "2", "--ray"],
        ["ps", "--ray"],
        ["stop", "--all", "--ray"],
    ],
)
def test_ray_alone_means_the_cluster_at_ray_address(args: list[str]) -> None:
    """``--ray`` without a value (last, or before another option) reads ``$RAY_ADDRESS``."""
    require_extra("ray")
    result = subprocess.run(
        [sys.executable, "-m", "openenv_hub_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RAY_ADDRESS": "127.0.0.1:9"},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Error: No Ray cluster answers at 127.0.0.1:9" in result.stderr, result.stderr
