"""``openenv serve NS/NAME --jobs``, ``openenv ps --jobs`` and ``openenv stop --jobs`` end to
end against LocalHub: replicas' URLs, stage and hourly cost; ps with stage, age and cost so far;
Ctrl-C cancels the Jobs, ``--detach`` leaves them running with the command that stops them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable

import pytest
from child_processes import end_child, start_child
from cli_runner import CliResult, cli
from jobs_support import SPACE, job_containers, jobs_hub
from polling import wait_until

from openenv_hub.localhub import LocalHub

__all__ = ["cli", "jobs_hub"]  # the fixtures, imported to be registered here

JOB_ID = re.compile(r"\b[0-9a-f]{24}\b")


def _stage(hub: LocalHub, job_id: str) -> str:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
    return str(api.inspect_job(job_id=job_id, namespace="alice").status.stage)


@pytest.mark.docker
@pytest.mark.slow
def test_serve_jobs_prints_each_replica_and_ctrl_c_cancels_them(
    jobs_hub: LocalHub, cli: Callable[..., CliResult]
) -> None:
    command = [SPACE, "--jobs", "--replicas", "2", "--flavor", "cpu-upgrade", "--timeout", "10m"]
    child = start_child(
        [sys.executable, "-c", "from openenv_hub_cli.main import main; main()", "serve", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "250"},
    )  # fmt: skip
    printed: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            printed.append(line)
            if "Press Ctrl+C" in line:
                break
        out = "".join(printed)
        assert "Starting 2 Job(s) of alice/echo_env on cpu-upgrade (each for at most 10m)" in out
        ids = JOB_ID.findall(out)
        assert len(set(ids)) == 2, out
        for job_id in set(ids):
            assert f"/_localhub/expose/{job_id}--8000" in out
        assert out.count("RUNNING") == 2 and "$0.03/hour" in out and "$0.06/hour in all" in out

        listed = cli("ps", "--jobs")
        assert listed.code == 0, listed.text
        rows = [line for line in listed.out.splitlines() if JOB_ID.search(line)]
        assert {JOB_ID.findall(row)[0] for row in rows} >= set(ids)
        for row in rows:
            if JOB_ID.findall(row)[0] in ids:
                assert "RUNNING" in row and "cpu-upgrade" in row and "$0.0" in row
                assert re.search(r"\b\d+s\b|\b\d+m\d\ds\b", row), row  # the age

        child.send_signal(signal.SIGINT)
        rest, _ = child.communicate(timeout=60)
        assert "Stopped." in rest
    finally:
        end_child(child, signal.SIGTERM)
    for job_id in set(ids):
        assert _stage(jobs_hub, job_id) == "CANCELED"
        wait_until(lambda j=job_id: job_containers(j) == [], timeout_s=30, what="removed")


@pytest.mark.docker
@pytest.mark.slow
def test_detach_leaves_the_job_running_until_stop_jobs(
    jobs_hub: LocalHub, cli: Callable[..., CliResult]
) -> None:
    served = cli("serve", SPACE, "--jobs", "--detach", "--timeout", "5m")
    assert served.code == 0, served.text
    (job_id,) = set(JOB_ID.findall(served.out))
    assert f"Stop them with: openenv stop --jobs {job_id}" in served.out
    assert "Left running for at most 5m" in served.out
    assert _stage(jobs_hub, job_id) == "RUNNING"
    listed = cli("ps", "--jobs", "--json")
    (mine,) = [job for job in json.loads(listed.out) if job["id"] == job_id]
    assert mine["detached"] and mine["stage"] == "RUNNING" and mine["hourly_usd"] > 0

    unknown = cli("stop", "--jobs", "ffffffffffffffffffffffff")
    assert unknown.code == 1 and "nothing was cancelled" in unknown.text
    assert _stage(jobs_hub, job_id) == "RUNNING"
    stopped = cli("stop", "--jobs", job_id)
    assert stopped.code == 0 and f"Cancelled Job {job_id} (alice-echo_env)" in stopped.out
    assert _stage(jobs_hub, job_id) == "CANCELED"
    assert "CANCELED" in cli("ps", "--jobs").out
