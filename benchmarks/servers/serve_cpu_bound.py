"""The CPU-bound environment as a Ray Serve deployment, for ``scale.py --serve``.

Serve puts an HTTP proxy in front of the replicas and routes each connection (here each
WebSocket, so each session) to a replica. Needs ``pip install "ray[serve]"``.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).resolve().parent
HEAD_IP = "127.0.0.2"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HEAD_IP, 0))
        return int(sock.getsockname()[1])


def deploy(address: str, replicas: int) -> str:
    """Start Serve on the cluster with the environment's app; return the proxy's URL."""
    import ray
    from cpu_bound import app
    from ray import serve

    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    port = _free_port()
    serve.start(http_options={"host": HEAD_IP, "port": port, "location": "HeadOnly"})

    # The replicas import cpu_bound (the app is pickled by reference): this folder on their path
    options = {"num_cpus": 1, "runtime_env": {"env_vars": {"PYTHONPATH": str(SERVERS)}}}

    @serve.deployment(num_replicas=replicas, ray_actor_options=options, max_ongoing_requests=64)
    @serve.ingress(app)
    class CpuBound:
        pass

    serve.run(
        CpuBound.bind(),  # type: ignore[attr-defined]
        name="cpu_bound",
        route_prefix="/",
    )
    return f"http://{HEAD_IP}:{port}"


async def serve_rate(address: str, size: int, rounds: int) -> float:
    from ray import serve
    from scale import WORK, pool_rate

    url = await asyncio.to_thread(deploy, address, 2)
    try:
        return await pool_rate(url, size, rounds, WORK)
    finally:
        await asyncio.to_thread(serve.shutdown)


def main(*args: Any) -> None:  # pragma: no cover - run through scale.py
    raise SystemExit("Run: python benchmarks/scale.py --serve")
