"""Start to healthy, cold and warm, for each runtime; beside the `openenv` package's
`from_docker_image` on the same image.

    python benchmarks/providers.py            # 3 warm runs each
    python benchmarks/providers.py --runs 5

Every figure is the wall time from the call to a client whose first `reset()` answered, for the
echo environment (envs/echo_env):

* local: `EchoEnv.from_folder(path).sync()` (this interpreter runs uvicorn). Cold is the first
  start in this process; there is nothing to cache.
* uv: `EchoEnv.from_hub(NS/NAME, runtime="uv", revision="0.1.0")` against a LocalHub. Cold: no
  environment for that commit yet (uv's own download cache as it is); warm: the environment
  made for the commit is reused.
* docker: `EchoEnv.from_docker_image(tag).sync()` after `openenv build` (not timed; its time is
  printed). Cold is the first container of the image, warm the next ones.
* localhub-space: `openenv push --wait` of the echo env to a LocalHub that runs Spaces, then
  `from_hub` (cold: build and run); warm: `restart_space` until RUNNING, then `from_hub`.
* jobs: `EchoEnv.from_hub(NS/NAME, runtime="jobs")` against a LocalHub that runs Jobs on
  the local engine (the Space's image built by a first Job, not timed; its time is printed).
  Cold is a new Job each time (create to first reset); "jobs, warm pool" hands out a Job that
  `JobsProvider(warm=1)` started ahead (`take()`, then connect and reset), the pool refilled
  between runs, untimed. On Hugging Face's service scheduling adds its own time, not measured
  here.
* daytona: `EchoEnv.from_docker_image(tag, runtime="daytona").sync()` against the local Daytona
  (openenv_hub.localdaytona) on the same engine, through the `daytona` SDK: create the sandbox,
  start the server through its toolbox, `/health` through the preview proxy with the token.
  Cold is the first sandbox of the image (and of the SDK's client), warm the next ones, each a
  new sandbox. Daytona's cloud adds its own scheduling and image pull, not measured here.
* openenv (peer): `GenericEnvClient.from_docker_image(tag)` of the `openenv` package (0.10.0,
  its own venv from tests/peer_venv.py), on the same image, one start per process (its import
  is not timed), alternated with ours so both see the same machine load. Its
  `LocalDockerProvider` maps the port with `-p`, which an engine without a bridge network
  ignores; that attempt is reported, and the timed runs use a subclass that runs the same
  `docker run` with `--network host -e PORT=...` (its bootstrap, its 1 s pause, its
  `wait_for_ready`).

Needs DOCKER_HOST (and OPENENV_TEST_BASE_IMAGE where no registry is reachable). Not a test:
nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
ECHO_ENV = ROOT / "envs" / "echo_env"
TAG = "openenv-bench/echo-env:latest"
BASE_IMAGE = os.environ.get("OPENENV_TEST_BASE_IMAGE", "openenv-test-base:py311")
NO_UI = {"ENABLE_WEB_INTERFACE": "false"}


def clock(start: Callable[[], object]) -> float:
    began = time.perf_counter()
    start()
    return time.perf_counter() - began


def measure(make: Callable[[], object], runs: int) -> tuple[float, list[float]]:
    """(cold, [warm...]): the first start, then ``runs`` more; each client closed untimed."""
    times = []
    for _ in range(runs + 1):
        began = time.perf_counter()
        client = make()
        client.reset()  # type: ignore[attr-defined]
        times.append(time.perf_counter() - began)
        client.close()  # type: ignore[attr-defined]
    return times[0], times[1:]


def local_runtime(runs: int) -> tuple[float, list[float]]:
    from echo_env import EchoEnv

    return measure(lambda: EchoEnv.from_folder(ECHO_ENV).sync(), runs)


def uv_runtime(runs: int, hub_endpoint: str) -> tuple[float, list[float]]:
    from echo_env import EchoEnv

    from openenv_hub.hub import push
    from openenv_hub.runtimes.uv import cache_root

    repo_id = f"alice/echo-uv-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(shutil.copytree(ECHO_ENV, Path(tmp) / "echo_env", ignore=_ignore()))
        push(copy, repo_id, version="0.1.0", endpoint=hub_endpoint, token="hf_alice_write")
    try:
        return measure(
            lambda: EchoEnv.from_hub(
                repo_id, runtime="uv", revision="0.1.0", trust_remote_code=True,
                endpoint=hub_endpoint, token="hf_alice_write",
            ).sync(),
            runs,
        )  # fmt: skip
    finally:
        shutil.rmtree(cache_root().parent / "spaces" / repo_id, ignore_errors=True)


def build() -> float:
    from openenv_hub.docker import build_image

    return clock(
        lambda: build_image(
            ECHO_ENV, TAG, base_image=BASE_IMAGE, build_args=["ENABLE_WEB_INTERFACE=false"],
            quiet=True,
        )
    )  # fmt: skip


def space_runtime(runs: int) -> tuple[float, list[float]]:
    from echo_env import EchoEnv
    from huggingface_hub import HfApi

    from openenv_hub.hub import push
    from openenv_hub.hub._wait import wait_for_space
    from openenv_hub.localhub import LocalHub

    with LocalHub(run_spaces=True, space_build_args={"BASE_IMAGE": BASE_IMAGE, **NO_UI}) as hub:
        endpoint, token, repo_id = hub.endpoint, hub.token_for("alice"), "alice/echo_env"
        os.environ["HF_ENDPOINT"] = endpoint

        def connect() -> object:
            return EchoEnv.from_hub(repo_id, endpoint=endpoint, token=token).sync()

        def cold_start() -> object:
            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(shutil.copytree(ECHO_ENV, Path(tmp) / "echo_env", ignore=_ignore()))
                push(copy, repo_id, endpoint=endpoint, token=token)
            assert wait_for_space(repo_id, endpoint=endpoint, token=token, poll_s=0.2).running
            return connect()

        def warm_start() -> object:
            HfApi(endpoint=endpoint, token=token).restart_space(repo_id)
            assert wait_for_space(repo_id, endpoint=endpoint, token=token, poll_s=0.2).running
            return connect()

        cold, _ = measure(cold_start, 0)
        first_warm, more = measure(warm_start, runs - 1)
        return cold, [first_warm, *more]


PEER = """
import json, subprocess, sys, time, uuid
from openenv.core.containers.runtime.providers import LocalDockerProvider
from openenv.core.generic_client import GenericEnvClient

image, mode = sys.argv[1], sys.argv[2]


class HostNetworkDockerProvider(LocalDockerProvider):
    # LocalDockerProvider's `docker run`, on the host network with PORT, as this engine needs.
    def start_container(self, image, port=None, env_vars=None, **kwargs):
        port = port or self._find_available_port()
        self._container_name = f"openenv-bench-peer-{uuid.uuid4().hex[:8]}"
        cmd = ["docker", "run", "-d", "--name", self._container_name, "--network", "host",
               "-e", f"PORT={port}", image]
        self._container_id = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        time.sleep(1)  # as LocalDockerProvider does
        return f"http://localhost:{port}"


provider = HostNetworkDockerProvider() if mode == "host" else LocalDockerProvider()
began = time.perf_counter()
try:
    env = GenericEnvClient.from_docker_image(image, provider=provider).sync()
    env.reset()
    took = time.perf_counter() - began
    env.close()
    print(json.dumps({"seconds": took}))
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"}))
finally:
    provider.stop_container()
"""


def peer_start(mode: str) -> dict[str, object]:
    """One start of the peer's ``from_docker_image`` (``mode``: default or host provider)."""
    from peer_venv import ensure_peer_python

    done = subprocess.run(
        [str(ensure_peer_python()), "-c", textwrap.dedent(PEER), TAG, mode],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return dict(json.loads(lines[-1]))


def docker_beside_peer(runs: int) -> tuple[tuple[float, list[float]], tuple[float, list[float]]]:
    """Ours and the peer's from_docker_image, alternated so both see the same machine load."""
    from echo_env import EchoEnv

    ours, theirs = [], []
    for _ in range(runs + 1):
        ours.append(measure(lambda: EchoEnv.from_docker_image(TAG).sync(), 0)[0])
        peer = peer_start("host")
        theirs.append(float(peer["seconds"]) if "seconds" in peer else float("nan"))
    return (ours[0], ours[1:]), (theirs[0], theirs[1:])


def jobs_runtime(runs: int) -> tuple[float, tuple[float, list[float]], tuple[float, list[float]]]:
    """(first Job with the image build, new Jobs, warm-pool Jobs)."""
    from echo_env import EchoEnv

    from openenv_hub.hub import push
    from openenv_hub.runtimes.jobs import JobsProvider
    from openenv_hub.testing.localhub import LocalHub

    build_args = {"BASE_IMAGE": BASE_IMAGE, **NO_UI}
    with LocalHub(run_jobs=True, space_build_args=build_args) as hub:
        endpoint, token, repo_id = hub.endpoint, "hf_alice_write", "alice/echo_env"
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(shutil.copytree(ECHO_ENV, Path(tmp) / "echo_env", ignore=_ignore()))
            push(copy, repo_id, endpoint=endpoint, token=token)

        def new_job() -> object:
            return EchoEnv.from_hub(repo_id, runtime="jobs", endpoint=endpoint, token=token).sync()

        first, _ = measure(new_job, 0)
        cold = measure(new_job, runs)
        warm: list[float] = []
        with JobsProvider.from_hub(repo_id, warm=1, endpoint=endpoint, token=token) as jobs:
            for _ in range(runs + 1):
                jobs.wait_warm()
                began = time.perf_counter()
                client = EchoEnv(jobs.take(), headers=jobs.headers).sync()
                client.reset()
                warm.append(time.perf_counter() - began)
                client.close()
        return first, cold, (warm[0], warm[1:])


def daytona_runtime(runs: int) -> tuple[float, list[float]]:
    from echo_env import EchoEnv

    from openenv_hub.localdaytona import LocalDaytona

    with LocalDaytona() as daytona:
        os.environ.update(daytona.environment())
        return measure(lambda: EchoEnv.from_docker_image(TAG, runtime="daytona").sync(), runs)


def _ignore() -> Callable[[str, list[str]], set[str]]:
    return shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")


def row(name: str, cold: float, warm: list[float], ref: float | None) -> str:
    middle = statistics.median(warm) if warm else float("nan")
    ratio = f"{middle / ref:5.2f}x" if ref else "   - "
    return f"| {name} | {cold:6.2f} | {middle:6.2f} | {ratio} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="warm starts per runtime")
    args = parser.parse_args()
    from docker_support.engine import docker_host

    host = docker_host()
    if host is None:
        sys.exit("No Docker engine: export DOCKER_HOST (see .ci/docker/setup.sh).")
    os.environ["DOCKER_HOST"] = host
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from openenv_hub.localhub import DEMO_TOKENS, LocalHub

    results: dict[str, tuple[float, list[float]]] = {}
    results["local"] = local_runtime(args.runs)
    with LocalHub(tokens=DEMO_TOKENS) as hub:
        results["uv (Space at a revision)"] = uv_runtime(args.runs, hub.endpoint)
    build_s = build()
    results["docker"], peer_times = docker_beside_peer(args.runs)
    results["openenv from_docker_image (host-network provider)"] = peer_times
    results["localhub-space"] = space_runtime(args.runs)
    first_job_s, results["jobs (a new Job)"], results["jobs, warm pool"] = jobs_runtime(args.runs)
    results["daytona (local Daytona, a new sandbox)"] = daytona_runtime(args.runs)
    peer = peer_start("default")

    docker_warm = statistics.median(results["docker"][1])
    print(f"\nStart to healthy (first reset answered), s; {args.runs} warm runs, median.\n")
    print("| runtime | cold | warm | warm / our docker |")
    print("|---|---:|---:|---:|")
    for name, (cold, warm) in results.items():
        print(row(name, cold, warm, docker_warm))
    print(f"\nopenenv build of the echo env (layer cache as found): {build_s:.1f} s")
    print(
        f"First Job of the Space (its image built on LocalHub, layer cache as found): {first_job_s:.1f} s"
    )
    if "error" in peer:
        print(f"openenv's default LocalDockerProvider on this engine: {peer['error']}")
    else:
        print(f"openenv's default LocalDockerProvider: {peer['seconds']:.2f} s")


if __name__ == "__main__":
    main()
