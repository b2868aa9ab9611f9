"""Space-only endpoints: secrets, variables, the runtime and its logs.

With its Space runtime on (``space_runtime.py``), LocalHub builds and runs Docker Spaces, and
the stage is theirs; changing variables or secrets restarts the app; where no engine answers,
Docker Spaces are ``STOPPED`` with a message that says why. With the runtime off the stage is
``RUNNING`` unless a test changes it through the control routes (see ``control.py``).

Layer: runtimes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel
from starlette.responses import StreamingResponse

from ..payloads import runtime_json, secrets_json, variables_json
from ..space_runtime import without_runtime
from ..storage import KeyValue
from .deps import Context, HubContext, OpenRepo, ReadableRepo, WritableRepo

router = APIRouter()

SPACE = "/api/{plural}/{namespace}/{name}"


class KeyValueBody(BaseModel):
    """Body of ``POST .../secrets`` and ``POST .../variables``."""

    key: str
    value: str = ""
    description: str | None = None


class KeyBody(BaseModel):
    """Body of ``DELETE .../secrets`` and ``DELETE .../variables``."""

    key: str


@router.get(f"{SPACE}/secrets")
def get_secrets(repo: WritableRepo) -> dict[str, Any]:
    """Secret names and descriptions; values are write-only."""
    return secrets_json(repo.require_space().meta)


@router.post(f"{SPACE}/secrets")
def add_secret(body: KeyValueBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Add or replace a secret."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.secrets[body.key] = KeyValue(body.value, body.description)
    _env_changed(context, repo)
    return secrets_json(meta)


@router.delete(f"{SPACE}/secrets")
def delete_secret(body: KeyBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Remove a secret (no error if absent)."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.secrets.pop(body.key, None)
    _env_changed(context, repo)
    return secrets_json(meta)


def _env_changed(context: HubContext, repo: OpenRepo) -> None:
    """The app sees variables and secrets when it starts: restart it if it runs."""
    if context.spaces is not None and context.spaces.app_url(repo.key) is not None:
        context.spaces.restart(repo.key)


@router.get(f"{SPACE}/variables")
def get_variables(repo: ReadableRepo) -> dict[str, Any]:
    """Variables with values."""
    return variables_json(repo.require_space().meta)


@router.post(f"{SPACE}/variables")
def add_variable(body: KeyValueBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Add or replace a variable; returns all variables (the client parses them)."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.variables[body.key] = KeyValue(body.value, body.description)
    _env_changed(context, repo)
    return variables_json(meta)


@router.delete(f"{SPACE}/variables")
def delete_variable(body: KeyBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Remove a variable (no error if absent); returns the remaining ones."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.variables.pop(body.key, None)
    _env_changed(context, repo)
    return variables_json(meta)


@router.get(f"{SPACE}/runtime")
def get_runtime(repo: ReadableRepo, context: Context) -> dict[str, Any]:
    """Report the stage, then advance to the next scripted stage, if any."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        runtime = runtime_json(meta)
        if meta.next_stages:
            meta.stage = meta.next_stages.pop(0)
    return runtime


def _set_stage(context: HubContext, repo: OpenRepo, stage: str) -> dict[str, Any]:
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.stage, meta.next_stages, meta.error_message = stage, [], None
    return runtime_json(meta)


@router.post(f"{SPACE}/restart")
def restart(repo: WritableRepo, context: Context, factory: bool = False) -> dict[str, Any]:
    """Restart: the app starts again (rebuilt with ``factory``); without a runtime, at once
    where an app was registered for it (``host``), else it stays ``STOPPED``, saying why.

    Where the runtime cannot run Spaces (no engine), the Space stays ``STOPPED``, saying why.
    """
    if context.spaces is None:
        meta = context.store.read_meta(repo.require_space().key)
        if meta.host is None and meta.sdk != "static":  # no app runs it
            with context.store.edit_meta(repo.key) as meta:
                meta.next_stages = []
                without_runtime(meta, repo.key)
            return runtime_json(meta)
        return _set_stage(context, repo, "RUNNING")
    if factory:
        context.spaces.forget(repo.key)
        context.spaces.changed(repo.key)
    else:
        context.spaces.restart(repo.key)
    return runtime_json(context.store.read_meta(repo.key))


@router.post(f"{SPACE}/pause")
def pause(repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Pause: the app stops and the Space is ``PAUSED`` until restarted."""
    if context.spaces is not None:
        context.spaces.pause(repo.key)
    return _set_stage(context, repo, "PAUSED")


@router.get(f"{SPACE}/logs/{{kind}}")
def logs(kind: Literal["build", "run"], repo: WritableRepo, context: Context) -> StreamingResponse:
    """The build or run log as server-sent events, as the Hub sends them; ends when sent."""
    lines = context.spaces.logs(repo.key, build=kind == "build") if context.spaces else []

    def events() -> Iterator[str]:
        for line in lines:
            yield f"data: {json.dumps({'timestamp': line.timestamp, 'data': line.data + chr(10)})}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


class HardwareBody(BaseModel):
    """Body of ``POST .../hardware``."""

    flavor: str
    sleepTimeSeconds: int | None = None


@router.post(f"{SPACE}/hardware")
def request_hardware(body: HardwareBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Switch hardware flavour (takes effect immediately)."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.hardware = body.flavor
        meta.sleep_time_s = body.sleepTimeSeconds or meta.sleep_time_s
    return runtime_json(meta)


class SleepTimeBody(BaseModel):
    """Body of ``POST .../sleeptime``."""

    seconds: int


@router.post(f"{SPACE}/sleeptime")
def set_sleep_time(body: SleepTimeBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Set the inactivity timeout."""
    with context.store.edit_meta(repo.require_space().key) as meta:
        meta.sleep_time_s = body.seconds
    return runtime_json(meta)
