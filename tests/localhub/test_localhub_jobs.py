"""LocalHub runs Jobs on the Docker engine, and the real ``huggingface_hub`` client drives them:
run, inspect, list by label and stage, logs, cancel, hardware, and exposed ports whose proxy
checks the token (none: 401, another user's: 403; public ports need none)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import httpx
import pytest

from openenv_hub.localhub import LocalHub

SERVER = """\
import os, http.server as h
class H(h.BaseHTTPRequestHandler):
    def do_GET(self):
        body = repr(self.headers.get("authorization")).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
print("serving on", os.environ["PORT"], "secret set:", os.environ.get("API_KEY") is not None, flush=True)
h.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"""
SECRET = "sk-job-3b1f-never-shown"


@pytest.fixture(scope="module")
def jobs_hub() -> Iterator[LocalHub]:
    from docker_support.engine import require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    hub = LocalHub(run_jobs=True)
    hub.start()
    try:
        yield hub
    finally:
        hub.stop()
        from docker_support.engine import docker

        from openenv_hub.runtimes import labels

        mine = f"label={labels.OWNER}={labels.owner_id()}"
        left = docker(
            "ps", "-aq", "--filter", "label=openenv-hub.runtime=localhub-job", "--filter", mine
        ).stdout
        assert left.strip() == "", "LocalHub left a Job's container behind"


def _api(hub: LocalHub, user: str = "alice"):  # type: ignore[no-untyped-def]
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.endpoint, token=hub.token_for(user))


def _until_answers(url: str, headers: dict[str, str]) -> httpx.Response:
    deadline = time.monotonic() + 60
    while True:
        response = httpx.get(url, headers=headers, timeout=5)
        if response.status_code == 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


@pytest.mark.docker
@pytest.mark.slow
def test_a_job_serves_its_exposed_port_to_its_namespace_only(jobs_hub: LocalHub) -> None:
    from docker_support.engine import BASE_IMAGE, docker

    api = _api(jobs_hub)
    job = api.run_job(
        image=BASE_IMAGE, command=["python3", "-c", SERVER], expose=[8000], expose_public=[9000],
        secrets={"API_KEY": SECRET}, labels={"suite": "localhub-jobs"}, flavor="cpu-upgrade",
    )  # fmt: skip
    assert job.status.stage == "SCHEDULING" and job.expose == [8000, 9000]
    url, public_url = job.status.expose_urls or []
    assert url == f"{jobs_hub.endpoint}/_localhub/expose/{job.id}--8000"
    running = api.wait_for_job(job.id, stages=["RUNNING"], timeout=60, poll_interval=0.2)
    assert running.status.stage == "RUNNING" and running.started_at is not None
    assert running.secrets == {"API_KEY": None} and running.flavor == "cpu-upgrade"

    alice = {"Authorization": f"Bearer {jobs_hub.token_for('alice')}"}
    answered = _until_answers(f"{url}/health", alice)
    assert answered.status_code == 200 and answered.text == "None"  # the token is not passed on
    assert httpx.get(f"{url}/health", timeout=5).status_code == 401
    bob = {"Authorization": f"Bearer {jobs_hub.token_for('bob')}"}
    refused = httpx.get(f"{url}/health", headers=bob, timeout=5)
    assert refused.status_code == 403 and "bob" in refused.json()["error"]
    unknown = {"Authorization": "Bearer hf_not_a_token"}
    assert httpx.get(f"{url}/health", headers=unknown, timeout=5).status_code == 401
    # public: no token asked; nothing listens on that port, so the proxy says it got no answer
    assert httpx.get(f"{public_url}/health", timeout=5).status_code == 502

    listed = api.list_jobs(labels={"suite": "localhub-jobs"}, namespace="alice")
    assert [j.id for j in listed] == [job.id]
    assert [j.id for j in api.list_jobs(status="RUNNING", namespace="alice")] == [job.id]
    assert list(api.list_jobs(status="COMPLETED", namespace="alice")) == []
    logs = list(api.fetch_job_logs(job_id=job.id))
    assert logs[0].startswith("serving on") and "secret set: True" in logs[0]
    (container,) = docker("ps", "-q", "--filter", f"label=openenv-hub.job={job.id}").stdout.split()
    assert SECRET not in docker("inspect", "--format", "{{json .Config.Cmd}}", container).stdout

    api.cancel_job(job_id=job.id)
    assert api.inspect_job(job_id=job.id).status.stage == "CANCELED"
    assert docker("ps", "-aq", "--filter", f"label=openenv-hub.job={job.id}").stdout == ""
    assert httpx.get(f"{url}/health", headers=alice, timeout=5).status_code == 503
    assert SECRET not in str(jobs_hub.requests()) and SECRET not in "\n".join(logs)


@pytest.mark.docker
@pytest.mark.slow
def test_a_failing_job_is_error_with_its_log_and_a_slow_one_times_out(jobs_hub: LocalHub) -> None:
    from docker_support.engine import BASE_IMAGE

    api = _api(jobs_hub)
    failing = api.run_job(image=BASE_IMAGE, command=["sh", "-c", "echo no dataset; exit 3"])
    slow = api.run_job(image=BASE_IMAGE, command=["sleep", "60"], timeout="2s")
    done = api.wait_for_job(failing.id, timeout=60, poll_interval=0.2)
    assert done.status.stage == "ERROR" and done.status.message == "Exited with code 3"
    assert list(api.fetch_job_logs(job_id=failing.id, follow=True)) == ["no dataset"]
    timed_out = api.wait_for_job(slow.id, timeout=60, poll_interval=0.2)
    assert timed_out.status.stage == "ERROR" and "timed out after 2 s" in str(
        timed_out.status.message
    )


def test_the_jobs_api_checks_what_it_is_given(local_hub: LocalHub) -> None:
    """Without a Docker engine: bad specs and other namespaces are refused before anything
    runs, and a LocalHub that runs no Jobs says how to make it."""
    from huggingface_hub.errors import HfHubHTTPError

    api = _api(local_hub)
    hardware = {h.name: h for h in api.list_jobs_hardware()}
    assert hardware["cpu-basic"].unit_cost_usd > 0 and hardware["cpu-basic"].unit_label == "minute"
    with pytest.raises(HfHubHTTPError) as unknown_flavor:
        api.run_job(image="python:3.12", command=["true"], flavor="quantum-xl")
    assert unknown_flavor.value.response.status_code == 400
    assert "cpu-basic" in str(unknown_flavor.value)
    with pytest.raises(HfHubHTTPError) as bad_label:
        api.run_job(image="python:3.12", command=["true"], labels={"a/b": "c"})
    assert bad_label.value.response.status_code == 400
    with pytest.raises(HfHubHTTPError) as foreign:
        _api(local_hub, "bob").run_job(image="python:3.12", command=["true"], namespace="alice")
    assert foreign.value.response.status_code == 403
    with pytest.raises(HfHubHTTPError) as off:
        api.run_job(image="python:3.12", command=["true"])
    assert off.value.response.status_code == 503 and "run_jobs=True" in str(off.value)
