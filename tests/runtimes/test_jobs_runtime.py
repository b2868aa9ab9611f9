"""The ``jobs`` runtime against LocalHub with Docker: a pushed Space runs as a Job whose exposed
port needs the token (sent in the handshake's headers, never in the URL); closing the client
cancels the Job and removes its container, and so does killing the process (its reaper)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from child_processes import end_child, start_child
from echo_env import CallToolAction, EchoEnv
from jobs_support import SPACE, job_containers, jobs_hub
from polling import wait_until

from openenv_hub.errors import ConfigurationError, ConnectError, ServerStartError
from openenv_hub.localhub import LocalHub
from openenv_hub.runtimes import get_runtime, runtime_names, start
from openenv_hub.runtimes.jobs import DEFAULT_TIMEOUT_S, JobsProvider, timeout_seconds

__all__ = ["jobs_hub"]  # the fixture, imported to be registered here

SECRET = "sk-jobs-5d2e-never-printed"


def _stage(hub: LocalHub, job_id: str) -> str:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
    return str(api.inspect_job(job_id=job_id, namespace="alice").status.stage)


@pytest.mark.docker
@pytest.mark.slow
async def test_a_space_runs_as_a_job_behind_its_token(jobs_hub: LocalHub) -> None:
    env = EchoEnv.from_hub(
        SPACE, runtime="jobs", flavor="cpu-basic", env={"LOG_LEVEL": "debug"},
        secrets={"API_KEY": SECRET},
    )  # fmt: skip
    provider = env.provider
    assert isinstance(provider, JobsProvider) and provider.runtime == "jobs"
    (job_id,) = provider.job_ids
    token = jobs_hub.token_for("alice")
    assert env.base_url.startswith(f"{jobs_hub.endpoint}/_localhub/expose/{job_id}--8000")
    assert token not in env.base_url and token not in env.url and token not in repr(env.options)
    async with env:
        await env.reset()
        step = await env.step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"}))
        assert step.observation.result["data"] == "Hi"

        with EchoEnv(env.base_url, headers=provider.headers).sync() as same_job:  # .sync()
            assert same_job.call_tool("echo_message", message="sync") == "sync"

        health = f"{env.base_url}/health"
        bob = {"Authorization": f"Bearer {jobs_hub.token_for('bob')}"}
        async with httpx.AsyncClient(timeout=10) as http:
            assert (await http.get(health)).status_code == 401
            assert (await http.get(health, headers=bob)).status_code == 403
        with pytest.raises(ConnectError) as refused:
            await EchoEnv(env.base_url).connect()
        assert refused.value.status_code == 401
        (container,) = job_containers(job_id)
        _secret_reached_only_the_environment(jobs_hub, container, job_id)
    assert _stage(jobs_hub, job_id) == "CANCELED"
    assert job_containers(job_id) == []


def _secret_reached_only_the_environment(hub: LocalHub, container: str, job_id: str) -> None:
    from docker_support.engine import docker
    from huggingface_hub import HfApi

    config = json.loads(docker("inspect", "--format", "{{json .Config}}", container).stdout)
    assert f"API_KEY={SECRET}" in config["Env"] and "LOG_LEVEL=debug" in config["Env"]
    assert SECRET not in json.dumps(config["Cmd"]) and SECRET not in json.dumps(config["Labels"])
    api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
    info = api.inspect_job(job_id=job_id, namespace="alice")
    assert info.secrets == {"API_KEY": None} and info.environment["LOG_LEVEL"] == "debug"
    assert info.environment["OPENENV_ALLOWED_HOSTS"] == ".hf.jobs"  # the proxy's names
    logs = "\n".join(api.fetch_job_logs(job_id=job_id, namespace="alice"))
    assert SECRET not in logs and SECRET not in str(hub.requests())
    assert SECRET not in _command_lines()


def _command_lines() -> str:
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
    return "\n".join(lines)


CHILD = """
import sys, time
from echo_env import EchoEnv

env = EchoEnv.from_hub(sys.argv[1], runtime="jobs")
print(env.provider.job_ids[0], flush=True)
time.sleep(600)
"""


@pytest.mark.docker
@pytest.mark.slow
def test_killing_the_process_cancels_its_job(jobs_hub: LocalHub) -> None:
    child = start_child(
        [sys.executable, "-c", textwrap.dedent(CHILD), SPACE],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        assert child.stdout is not None
        job_id = child.stdout.readline().strip()
        assert job_id, child.communicate(timeout=10)
        assert _stage(jobs_hub, job_id) == "RUNNING"
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    finally:
        end_child(child, signal.SIGTERM)
    wait_until(lambda: _stage(jobs_hub, job_id) == "CANCELED", timeout_s=60, what="canceled")
    wait_until(lambda: job_containers(job_id) == [], timeout_s=30, what="its container removed")


@pytest.mark.docker
@pytest.mark.slow
def test_a_job_that_ends_before_answering_says_its_stage(jobs_hub: LocalHub) -> None:
    from docker_support.engine import BASE_IMAGE

    with pytest.raises(ServerStartError) as ended:
        start("jobs", "image", BASE_IMAGE, startup_timeout_s=60)  # python3 with no script: exits
    assert "ended before answering (COMPLETED)" in str(ended.value)
    assert ended.value.runtime == "jobs"


def test_the_jobs_runtime_is_registered_with_its_options() -> None:
    assert "jobs" in runtime_names("space") and "jobs" in runtime_names("image")
    assert "jobs" not in runtime_names("folder")
    assert "replicas" in get_runtime("jobs").options["space"]
    with pytest.raises(ConfigurationError, match="does not take gpus"):
        EchoEnv.from_hub(SPACE, runtime="jobs", gpus=1)
    assert timeout_seconds(None) == DEFAULT_TIMEOUT_S == 3600
    assert timeout_seconds("30m") == 1800 and timeout_seconds(90) == 90
    with pytest.raises(ConfigurationError, match="not a duration"):
        timeout_seconds("soon")
