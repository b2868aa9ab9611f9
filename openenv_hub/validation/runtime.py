"""Checks against a running server: OpenEnv's ``validate --url`` criteria, then an episode.

The first six checks carry the ids of OpenEnv's runtime criteria, so a Space built with
OpenEnv can be checked too. ``reset``, ``step`` and ``websocket`` then play a short episode
with a sample action built from the server's ``/schema``.

Every bound is a total, never per read (:mod:`openenv_hub.validation.remote`), so a server that
trickles its answers cannot hold a validation: each check gets ``timeout_s`` (all its requests
together), the whole validation ``total_timeout_s`` (six times ``timeout_s`` by default), and an
answer larger than ``max_reply_bytes`` fails its check without being read whole.

Layer: client.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from openenv_hub.checks.result import Check, CheckResult, run_checks
from openenv_hub.protocol.connection import request_frame
from openenv_hub.protocol.urls import is_loopback, ws_url
from openenv_hub.validation.remote import LimitExceeded, RemoteTarget, Reply

__all__ = ["RUNTIME_CHECKS", "RemoteTarget", "check_target", "runtime_checks"]


def runtime_checks(
    base_url: str,
    *,
    timeout_s: float = 10.0,
    total_timeout_s: float | None = None,
    level: str = "runtime",
) -> list[CheckResult]:
    """Every check below; when nothing answers, only ``reachable`` is reported."""
    with RemoteTarget(base_url, timeout_s=timeout_s, total_timeout_s=total_timeout_s) as target:
        return check_target(target, level=level)


def check_target(target: RemoteTarget, *, level: str = "runtime") -> list[CheckResult]:
    """The checks of :func:`runtime_checks` against an open target (which keeps what they
    learned, such as the schemas)."""
    first = run_checks([_timed(check_reachable, target)], target, level=level)
    if not first[0].ok:
        return first
    return first + run_checks([_timed(c, target) for c in RUNTIME_CHECKS], target, level=level)


def _timed(check: Check[RemoteTarget], target: RemoteTarget) -> Check[RemoteTarget]:
    """``check``, with a time limit of its own starting when it starts."""

    def timed(given: RemoteTarget) -> CheckResult:
        given.start_check()
        return check(given)

    timed.__name__ = check.__name__
    return timed


def _json(response: Reply) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def check_reachable(target: RemoteTarget) -> CheckResult:
    try:
        response = target.get("/health")
    except (httpx.HTTPError, LimitExceeded) as exc:
        return CheckResult(
            "reachable",
            False,
            f"nothing answers at {target.base_url} ({type(exc).__name__}: {exc})",
            "Start the server (openenv serve) or check the URL.",
        )
    return CheckResult(
        "reachable", True, f"{target.base_url} answers (HTTP {response.status_code})"
    )


def check_openapi_version_available(target: RemoteTarget) -> CheckResult:
    response = target.get("/openapi.json")
    body = _json(response)
    version = body.get("info", {}).get("version") if isinstance(body, dict) else None
    if response.status_code != 200 or not isinstance(version, str):
        return CheckResult(
            "openapi_version_available",
            False,
            f"GET /openapi.json gave HTTP {response.status_code} without info.version",
            "Is this an OpenEnv server? Its apps are built with create_app().",
        )
    target.openapi = body
    return CheckResult("openapi_version_available", True, f"API version {version}")


def check_health_endpoint(target: RemoteTarget) -> CheckResult:
    response = target.get("/health")
    body = _json(response)
    ok = response.status_code == 200 and isinstance(body, dict) and body.get("status") == "healthy"
    message = (
        "healthy"
        if ok
        else f"GET /health gave HTTP {response.status_code}: {response.text[:100]!r}"
    )
    return CheckResult(
        "health_endpoint", ok, message, "" if ok else '/health must answer {"status": "healthy"}.'
    )


def check_metadata_endpoint(target: RemoteTarget) -> CheckResult:
    response = target.get("/metadata")
    body = _json(response)
    ok = (
        response.status_code == 200
        and isinstance(body, dict)
        and isinstance(body.get("name"), str)
        and isinstance(body.get("description"), str)
    )
    if not ok:
        return CheckResult(
            "metadata_endpoint",
            False,
            f"GET /metadata gave HTTP {response.status_code} without name and description",
        )
    # Long enough for what an environment says first about itself (e.g. the coding
    # environment's memory bound), short enough for one line of the table.
    return CheckResult("metadata_endpoint", True, f"{body['name']}: {body['description'][:160]}")


def check_schema_endpoint(target: RemoteTarget) -> CheckResult:
    response = target.get("/schema")
    body = _json(response)
    keys = ("action", "observation", "state")
    if (
        response.status_code != 200
        or not isinstance(body, dict)
        or not all(isinstance(body.get(k), dict) for k in keys)
    ):
        return CheckResult(
            "schema_endpoint",
            False,
            f"GET /schema gave HTTP {response.status_code} without action, observation and state",
        )
    target.schemas = body
    return CheckResult(
        "schema_endpoint",
        True,
        f"action {body['action'].get('title', '?')}, observation {body['observation'].get('title', '?')}",
    )


def check_mcp_endpoint(target: RemoteTarget) -> CheckResult:
    response = target.post("/mcp", {})
    body = _json(response)
    if response.status_code != 200 or not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        return CheckResult(
            "mcp_endpoint",
            False,
            f"POST /mcp gave HTTP {response.status_code} without a JSON-RPC 2.0 reply",
        )
    return CheckResult("mcp_endpoint", True, "JSON-RPC 2.0")


def check_mode_endpoint_consistency(target: RemoteTarget) -> CheckResult:
    paths = set(target.openapi.get("paths", {}))
    if not paths:
        return CheckResult(
            "mode_endpoint_consistency", False, "cannot determine the mode without OpenAPI paths"
        )
    present = {p for p in ("/reset", "/step", "/state") if p in paths}
    if present in ({"/reset", "/step", "/state"}, set()):
        mode = "simulation" if present else "production"
        return CheckResult("mode_endpoint_consistency", True, f"{mode} mode")
    return CheckResult(
        "mode_endpoint_consistency", False, f"only {sorted(present)} of /reset, /step, /state"
    )


def check_reset(target: RemoteTarget) -> CheckResult:
    if not target.simulation:
        return CheckResult.skip("reset", "production mode (no HTTP /reset)", level="runtime")
    response = target.post("/reset", {})
    body = _json(response)
    if (
        response.status_code != 200
        or not isinstance(body, dict)
        or not isinstance(body.get("observation"), dict)
    ):
        return CheckResult(
            "reset", False, f"POST /reset gave HTTP {response.status_code}: {response.text[:200]!r}"
        )
    return CheckResult("reset", True, f"observation {json.dumps(body['observation'])[:80]}")


def check_step(target: RemoteTarget) -> CheckResult:
    if not target.simulation or not target.schemas:
        return CheckResult.skip("step", "no HTTP /step or no /schema", level="runtime")
    action = target.sample_action()
    response = target.post("/step", {"action": action})
    body = _json(response)
    if response.status_code != 200 or not isinstance(body, dict) or "observation" not in body:
        return CheckResult(
            "step",
            False,
            f"POST /step with {json.dumps(action)[:80]} gave HTTP {response.status_code}: {response.text[:200]!r}",
        )
    return CheckResult("step", True, f"{json.dumps(action)[:60]} -> reward {body.get('reward')}")


def check_websocket(target: RemoteTarget) -> CheckResult:
    from websockets.sync.client import connect

    url = ws_url(target.base_url)
    frames = []
    with connect(
        url,
        open_timeout=target.remaining_s("opening /ws"),
        close_timeout=min(target.timeout_s, 5.0),
        max_size=target.max_reply_bytes,
        proxy=None if is_loopback(url) else True,
    ) as ws:
        for kind, request in (
            ("reset", request_frame("reset", {})),
            ("step", request_frame("step", target.sample_action())),
            ("state", request_frame("state")),
        ):
            ws.send(request)
            what = f"the answer to a {kind} message on /ws"
            try:
                frames.append(json.loads(ws.recv(timeout=target.remaining_s(what))))
            except TimeoutError:
                target.remaining_s(what)  # raises, saying which limit passed
                raise
        ws.send(request_frame("close"))
    kinds = [frame.get("type") for frame in frames]
    if kinds != ["observation", "observation", "state"]:
        return CheckResult("websocket", False, f"/ws replied {kinds}: {json.dumps(frames)[:200]}")
    return CheckResult("websocket", True, "reset, step and state over /ws")


RUNTIME_CHECKS: list[Check[RemoteTarget]] = [
    check_openapi_version_available,
    check_health_endpoint,
    check_metadata_endpoint,
    check_schema_endpoint,
    check_mcp_endpoint,
    check_mode_endpoint_consistency,
    check_reset,
    check_step,
    check_websocket,
]
