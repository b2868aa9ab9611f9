"""Wait for a Space to build and run, and read its build and run logs (real Hub and LocalHub).

The stage comes from ``get_space_runtime``; the logs from ``/api/spaces/NS/NAME/logs/build``
and ``.../logs/run``, server-sent events of ``{"timestamp", "data"}`` that the Hub streams
(read here until the stream pauses, as ``huggingface_hub.fetch_space_logs`` does). The wait is
reported through :mod:`openenv_hub.support.progress` (task ``Space NS/NAME``): each stage, and while it
builds the last line of its build log, read every :data:`LOG_EVERY_S` seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from openenv_hub.errors import SpaceNotRunningError
from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call
from openenv_hub.support.progress import Progress, report_progress

__all__ = ["SpaceState", "space_logs", "wait_for_space"]

INTERMEDIATE = frozenset({"BUILDING", "APP_STARTING", "RUNNING_BUILDING", "RUNNING_APP_STARTING"})
LOG_EVERY_S = 5.0


@dataclass
class SpaceState:
    """Where a Space ended up: its stage, the Hub's error message, and the relevant log."""

    repo_id: str
    stage: str
    error_message: str = ""
    logs: list[str] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.stage == "RUNNING"


def wait_for_space(
    repo_id: str,
    *,
    timeout_s: float = 900.0,
    poll_s: float = 1.0,
    endpoint: str | None = None,
    token: str | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> SpaceState:
    """Poll until the Space leaves BUILDING / APP_STARTING; with its log unless it runs.

    Raises:
        SpaceNotRunningError: Still building after ``timeout_s``.
    """
    ctx = HubContext.create(endpoint=endpoint, token=token)
    with report_progress(f"Space {repo_id}", "asking for its stage") as progress:
        runtime = _poll(ctx, repo_id, progress, timeout_s, poll_s, on_stage)
        stage = str(getattr(runtime.stage, "value", runtime.stage))
        progress.finish(stage, failed=stage != "RUNNING")
    raw = getattr(runtime, "raw", {}) or {}
    state = SpaceState(repo_id, stage, str(raw.get("errorMessage") or ""))
    if not state.running:
        build = stage in ("BUILD_ERROR", "CONFIG_ERROR", "NO_APP_FILE")
        state.logs = space_logs(repo_id, build=build, endpoint=ctx.endpoint, token=ctx.token)
    return state


def _poll(
    ctx: HubContext,
    repo_id: str,
    progress: Progress,
    timeout_s: float,
    poll_s: float,
    on_stage: Callable[[str], None] | None,
) -> Any:
    """``get_space_runtime`` until the stage is not an intermediate one; returns the last."""
    deadline = time.monotonic() + timeout_s
    seen, logs_read = "", 0.0
    while True:
        with hub_call(ctx, "read the Space's stage", repo_id=repo_id):
            runtime = ctx.api.get_space_runtime(repo_id)
        stage = str(getattr(runtime.stage, "value", runtime.stage))
        if stage != seen and on_stage is not None:
            on_stage(stage)
        seen = stage
        if stage not in INTERMEDIATE:
            return runtime
        progress.stage(stage)
        if "BUILDING" in stage and time.monotonic() - logs_read >= LOG_EVERY_S:
            logs_read = time.monotonic()
            lines = space_logs(repo_id, build=True, endpoint=ctx.endpoint, token=ctx.token)
            if lines:
                progress.line(lines[-1])
        if time.monotonic() > deadline:
            raise SpaceNotRunningError(
                repo_id,
                stage,
                hint=f"It is still {stage} after {timeout_s:g} s; wait longer with "
                "--wait-timeout, or look at its build log.",
            )
        time.sleep(poll_s)


def space_logs(
    repo_id: str,
    *,
    build: bool,
    endpoint: str | None = None,
    token: str | None = None,
    timeout_s: float = 5.0,
) -> list[str]:
    """The lines of the Space's build (or run) log available now; ``[]`` if none can be read."""
    ctx = HubContext.create(endpoint=endpoint, token=token)
    url = f"{ctx.endpoint}/api/spaces/{repo_id}/logs/{'build' if build else 'run'}"
    headers = {"Authorization": f"Bearer {ctx.token}"} if ctx.token else {}
    lines: list[str] = []
    try:
        with httpx.stream("GET", url, headers=headers, timeout=timeout_s) as response:
            if response.status_code != 200:
                return []
            for event in response.iter_lines():
                if event.startswith("data: {"):
                    lines.append(str(json.loads(event[6:]).get("data", "")).rstrip("\n"))
    except (httpx.HTTPError, ValueError):
        pass  # a log stream that pauses or breaks ends the read, as on the Hub
    return lines
