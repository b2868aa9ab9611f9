"""The Jobs API, as far as ``huggingface_hub`` calls it: run, inspect, list, cancel, logs
(server-sent events), hardware, exposed ports and labels. The Jobs themselves run on the Docker
engine (``jobs.py``); their exposed ports are served by ``jobs_proxy.py``.

Reading a namespace's Jobs needs a token that can see it; running or changing one needs write
access. Secret values are write-only: a Job's ``secrets`` lists their names.

Layer: runtimes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Query, Request
from starlette.responses import StreamingResponse

from ..auth import User
from ..clock import iso_time
from ..errors import HubError
from ..jobs import HARDWARE, Job, JobRunner, JobSpec
from ..jobs_proxy import expose_path
from .deps import Context, CurrentUser, HubContext, base_url

router = APIRouter()

JOBS = "/api/jobs/{namespace}"
JOB = "/api/jobs/{namespace}/{job_id}"


def _runner(context: HubContext) -> JobRunner:
    if context.jobs is None:
        raise HubError(
            503,
            "LocalHub does not run Jobs: start it with --jobs (python -m openenv_hub.localhub) "
            "or LocalHub(run_jobs=True); a Docker engine is needed.",
        )
    return context.jobs


def _readable(user: User, namespace: str) -> None:
    if not user.can_see(namespace):
        raise HubError.forbidden(f"The token of {user.name!r} cannot read Jobs of {namespace!r}.")


def _writable(user: User, namespace: str) -> None:
    if not user.can_write(namespace):
        raise HubError.forbidden(
            f"The token of {user.name!r} (role {user.role!r}) cannot run or change Jobs of "
            f"{namespace!r}."
        )


def _account_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def job_json(job: Job, base: str, user: User | None = None) -> dict[str, Any]:
    """A Job as the Hub describes it (``JobInfo``)."""
    spec = job.spec
    ports = spec.ports
    now = job.finished_at or time.time()
    started = job.started_at
    payload: dict[str, Any] = {
        "id": job.id,
        "createdAt": iso_time(job.created_at),
        "startedAt": iso_time(started) if started else None,
        "finishedAt": iso_time(job.finished_at) if job.finished_at else None,
        "command": spec.command,
        "arguments": spec.arguments,
        "environment": spec.environment,
        "secrets": dict.fromkeys(spec.secrets),
        "flavor": spec.flavor,
        "labels": spec.labels or None,
        "status": {
            "stage": job.stage,
            "message": job.message,
            "exposeUrls": [base + expose_path(job.id, port) for port in ports] or None,
        },
        "owner": {"id": _account_id(job.namespace), "name": job.namespace, "type": "user"},
        "initiator": {"type": "user", "id": _account_id(job.namespace), "name": job.namespace},
        "durations": {
            "schedulingSecs": int((started or now) - job.created_at),
            "runningSecs": int(now - started) if started else None,
            "totalSecs": int(now - job.created_at),
        },
    }
    payload["spaceId" if spec.space_id else "dockerImage"] = spec.space_id or spec.docker_image
    if ports:
        payload["expose"] = {"ports": ports, "portsPublic": spec.ports_public}
    if spec.timeout_s:
        payload["timeoutSeconds"] = spec.timeout_s
    return payload


@router.get("/api/jobs/hardware")
def hardware() -> list[dict[str, Any]]:
    """The flavors and their prices."""
    return HARDWARE


@router.post(JOBS)
async def run_job(
    namespace: str, request: Request, user: CurrentUser, context: Context
) -> dict[str, Any]:
    """Run a Job: it is SCHEDULING until its container starts."""
    _writable(user, namespace)
    try:
        body = await request.json()
    except ValueError:
        raise HubError.bad_request("The body of a Job is JSON.") from None
    spec = JobSpec.parse(body if isinstance(body, dict) else {})
    job = _runner(context).create(namespace, spec)
    return job_json(job, base_url(request))


@router.get(JOBS)
def list_jobs(
    namespace: str,
    request: Request,
    user: CurrentUser,
    context: Context,
    stage: list[str] = Query(default=[]),  # noqa: B008 - FastAPI's way to take a list
    label: list[str] = Query(default=[]),  # noqa: B008
) -> list[dict[str, Any]]:
    """The namespace's Jobs, newest first, filtered by stage and ``key=value`` labels."""
    _readable(user, namespace)
    wanted = dict(item.partition("=")[::2] for item in label)
    jobs = [
        job
        for job in _runner(context).of_namespace(namespace)
        if (not stage or job.stage in stage)
        and all(job.spec.labels.get(k) == v for k, v in wanted.items())
    ]
    jobs.sort(key=lambda job: job.created_at, reverse=True)
    return [job_json(job, base_url(request)) for job in jobs]


@router.get(JOB)
def inspect_job(
    namespace: str, job_id: str, request: Request, user: CurrentUser, context: Context
) -> dict[str, Any]:
    _readable(user, namespace)
    return job_json(_runner(context).get(namespace, job_id), base_url(request))


@router.post(f"{JOB}/cancel")
def cancel_job(namespace: str, job_id: str, user: CurrentUser, context: Context) -> dict[str, Any]:
    """Stop the Job and remove its container (a finished Job stays as it was)."""
    _writable(user, namespace)
    runner = _runner(context)
    job = runner.get(namespace, job_id)
    runner.cancel(job)
    return {"id": job.id, "stage": job.stage}


@router.api_route(f"{JOB}/expose", methods=["PUT", "POST"])
async def update_expose(
    namespace: str, job_id: str, request: Request, user: CurrentUser, context: Context
) -> dict[str, Any]:
    """Replace the exposed ports (``{"ports": [...], "portsPublic": [...]}``)."""
    _writable(user, namespace)
    runner = _runner(context)
    job = runner.get(namespace, job_id)
    body = await request.json()
    runner.expose(
        job,
        [int(p) for p in body.get("ports") or []],
        [int(p) for p in body.get("portsPublic") or []],
    )
    return job_json(job, base_url(request))


@router.put(f"{JOB}/labels")
async def update_labels(
    namespace: str, job_id: str, request: Request, user: CurrentUser, context: Context
) -> dict[str, Any]:
    _writable(user, namespace)
    job = _runner(context).get(namespace, job_id)
    labels = (await request.json()).get("labels") or {}
    checked = JobSpec.parse({"dockerImage": "-", "labels": labels}).labels
    job.spec = replace(job.spec, labels=checked)
    return job_json(job, base_url(request))


@router.get(f"{JOB}/logs")
def job_logs(
    namespace: str, job_id: str, user: CurrentUser, context: Context, tail: int | None = None
) -> StreamingResponse:
    """The log so far as server-sent events; the stream ends when sent (the client asks again
    while the Job runs, and stops once it finished)."""
    _readable(user, namespace)
    runner = _runner(context)
    lines = runner.logs(runner.get(namespace, job_id))
    if tail is not None:
        lines = lines[-tail:] if tail > 0 else []

    def events() -> Iterator[str]:
        for line in lines:
            yield f"data: {json.dumps({'timestamp': line.timestamp, 'data': line.data})}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")
