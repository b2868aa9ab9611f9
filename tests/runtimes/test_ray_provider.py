"""RayProvider on a real two-node Ray cluster (``ray start`` twice, on loopback): echo with two
replicas, one per node; a 32-session EnvPool through both; a replica's process killed mid-run
fails its sessions only, Ray restarts it, and ``reset_all()`` brings the pool back to 32."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from echo_env import EchoEnv
from ray_support import require_extra

from openenv_hub import EnvPool
from openenv_hub.errors import SessionLostError, SlotError, TransportError
from openenv_hub.types import CallToolAction, StepResult

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"


@pytest.fixture
def echo_on_ray(ray_cluster: Any) -> Iterator[Any]:
    from openenv_hub.runtimes.ray import RayProvider

    provider = RayProvider.from_folder(ECHO_ENV, replicas=2, address=ray_cluster.address)
    try:
        yield provider
    finally:
        provider.stop()


def _echo_all(n: int, word: str) -> list[CallToolAction]:
    return [
        CallToolAction(tool_name="echo_message", arguments={"message": f"{word}{i}"})
        for i in range(n)
    ]


def _echoed(results: list[Any]) -> list[str | None]:
    return [r.observation.result["data"] if isinstance(r, StepResult) else None for r in results]


async def test_a_pool_of_32_survives_a_replica_killed_mid_run(echo_on_ray: Any) -> None:
    from openenv_hub.runtimes.ray import replica_names

    provider = echo_on_ray
    statuses = provider.replicas()
    assert {s.node_ip for s in statuses} == {"127.0.0.2", "127.0.0.3"}  # one replica per node
    assert all(s.url.startswith("http://127.0.0.") for s in statuses)
    assert sorted(replica_names()) == [f"{provider.name}-r0", f"{provider.name}-r1"]

    async with EnvPool(provider, size=32, client=EchoEnv) as pool:
        assert all(isinstance(r, StepResult) for r in await pool.reset_all())
        assert _echoed(await pool.step_all(_echo_all(32, "a"))) == [f"a{i}" for i in range(32)]
        per_url = pool.sessions_per_url()
        assert set(per_url) == {s.url for s in statuses} and min(per_url.values()) >= 1

        victim = statuses[1]
        on_victim = [slot.index for slot in pool.slots if slot.url == victim.url]
        os.kill(victim.pid, signal.SIGKILL)  # the replica's process, mid-run

        results = await pool.step_all(_echo_all(32, "b"))
        failed = [i for i, r in enumerate(results) if isinstance(r, SlotError)]
        assert failed == on_victim
        for i in failed:
            error = results[i]
            assert isinstance(error, SlotError) and error.session_lost and error.url == victim.url
            assert isinstance(error.cause, (SessionLostError, TransportError))
        survivors = [i for i in range(32) if i not in failed]
        assert [_echoed(results)[i] for i in survivors] == [f"b{i}" for i in survivors]
        assert _echoed(await pool.step_all(_echo_all(32, "c")))[survivors[0]] == f"c{survivors[0]}"

        urls = provider.wait_ready(timeout_s=120)  # Ray restarted the replica
        restarted = provider.replicas()[1]
        assert restarted.restarts == 1 and restarted.pid != victim.pid
        assert any("restarted by Ray" in event for event in provider.events)
        assert len(urls) == 2

        assert all(isinstance(r, StepResult) for r in await pool.reset_all())
        assert sum(pool.sessions_per_url().values()) == 32
        assert set(pool.sessions_per_url()) == set(urls)  # replaced sessions went to the new one
        assert _echoed(await pool.step_all(_echo_all(32, "d"))) == [f"d{i}" for i in range(32)]

    provider.stop()
    assert replica_names() == []


def test_ps_lists_the_replicas_and_stop_removes_them(ray_cluster: Any, cli: Any) -> None:
    from openenv_hub.runtimes.ray import RayProvider, replica_names

    provider = RayProvider.from_folder(ECHO_ENV, replicas=2, address=ray_cluster.address)
    try:
        listed = cli("ps", "--json", "--ray", ray_cluster.address)
        rows = [row for row in json.loads(listed.out) if row["runtime"] == "ray"]
        assert sorted(row["name"] for row in rows) == [f"{provider.name}-r0", f"{provider.name}-r1"]
        assert all(row["kind"] == "actor" and row["owner_alive"] for row in rows)
        assert sorted(row["url"] for row in rows) == sorted(provider.base_urls)
        stopped = cli("stop", provider.name, "--ray", ray_cluster.address)
        assert stopped.code == 0 and stopped.out.count("Removed actor") == 2, stopped.text
        assert replica_names() == []
    finally:
        provider.stop()


def test_a_replica_that_cannot_start_reports_its_error(ray_cluster: Any) -> None:
    from openenv_hub.errors import ServerStartError
    from openenv_hub.runtimes.ray import RayProvider, replica_names

    with pytest.raises(ServerStartError) as info:
        RayProvider.start("no_such_env.server.app:app", replicas=1, address=ray_cluster.address)
    assert "no_such_env" in str(info.value) and info.value.runtime == "ray"
    assert replica_names() == []


def test_providers_started_from_two_threads_at_once_join_the_cluster_once(
    ray_cluster: Any,
) -> None:
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from openenv_hub.runtimes.ray import connect\n"
        "with ThreadPoolExecutor(2) as threads:\n"
        f"    joined = list(threads.map(connect, [{ray_cluster.address!r}] * 2))\n"
        "print(len(set(joined)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "1"


def test_no_cluster_at_the_address_is_a_clear_error() -> None:
    require_extra("ray")
    code = (
        "from openenv_hub.runtimes.ray import connect\n"
        "from openenv_hub.errors import ClusterError\n"
        "try:\n    connect('127.0.0.1:9')\n"
        "except ClusterError as exc:\n    print(exc, '|', exc.hint)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "No Ray cluster answers at 127.0.0.1:9" in result.stdout
    assert "ray start --head" in result.stdout


def test_replicas_a_full_cluster_cannot_place_say_how_many_cpus_are_missing(
    ray_cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Two nodes of one CPU each: three replicas of one CPU never all start; the wait says how
    many did while it lasts."""
    from openenv_hub.errors import ServerStartError
    from openenv_hub.runtimes.ray import RayProvider, replica_names

    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    with pytest.raises(ServerStartError) as info:
        RayProvider.from_folder(
            ECHO_ENV, replicas=3, num_cpus=1, address=ray_cluster.address, startup_timeout_s=20
        )
    message = str(info.value)
    assert "The 3 replicas of openenv-echo-env-" in message and "within 20 s" in message
    assert "they ask for 3 CPUs in all, and the cluster has 2, of which 0 are free" in message
    assert "fewer replicas" in info.value.hint and "Get timed out" not in message
    assert replica_names() == []
    stages = [r.stage for r in caplog.records if r.task.startswith("Ray replicas of ")]  # type: ignore[attr-defined]
    assert stages[0] == "placing 3 replicas" and "placing 3 replicas (2 started)" in stages
    assert stages[-1] == "failed", stages


def test_a_replica_serves_with_the_young_generation_raised(ray_cluster: Any) -> None:
    """A replica is a server process like any other: its collector is tuned for many sessions."""
    import httpx

    from openenv_hub.runtimes.ray import RayProvider
    from openenv_hub.transport.uvicorn_serving import YOUNG_GENERATION_THRESHOLD

    tests = Path(__file__).resolve().parents[1]
    provider = RayProvider.start(
        "gc_probe:app", replicas=1, env_dir=tests, address=ray_cluster.address
    )
    try:
        (url,) = provider.wait_ready(timeout_s=120)
        reply = httpx.post(f"{url}/reset", json={}, timeout=10)
        assert reply.json()["observation"]["young"] == YOUNG_GENERATION_THRESHOLD
    finally:
        provider.stop()
