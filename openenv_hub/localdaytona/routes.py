"""The routes of the local Daytona: the part of Daytona's REST API the ``daytona`` SDK calls to
create, read, list, start, stop and delete sandboxes, set their labels, auto-stop and
visibility, and get their preview links (under ``/api``), and the toolbox's command execution
(under ``/toolbox``, the ``toolboxProxyUrl`` each sandbox carries).

Each answer has the shape of the SDK's generated model for that route (``Sandbox``,
``ListSandboxesResponse``, ``PortPreviewUrl``, ``ToolboxProxyUrl``, ``SandboxLabels``,
``ExecuteResponse``); tests/localdaytona/test_routes_match_the_sdk.py parses each with them.
Every route needs the API key as ``Authorization: Bearer``.

Layer: runtimes.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .errors import ApiError, error_response
from .preview import PreviewProxy, preview_path
from .records import SandboxRecord
from .sandboxes import Sandboxes

__all__ = ["Service", "api_routes"]

_MAX_BODY_BYTES = 1024 * 1024
_PAGE = 100


class Service:
    """What the routes act on: the sandboxes, the preview proxy, the key, and the base URL."""

    def __init__(self, sandboxes: Sandboxes, preview: PreviewProxy, api_key: str) -> None:
        self.sandboxes = sandboxes
        self.preview = preview
        self.api_key = api_key

    def check_key(self, request: Request) -> None:
        given = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not given or not hmac.compare_digest(given, self.api_key):
            raise ApiError.unauthorized(
                "Unauthorized: send the API key as 'Authorization: Bearer <key>' "
                "(DAYTONA_API_KEY, as the local Daytona printed it)."
            )

    @staticmethod
    def base(request: Request) -> str:
        return str(request.base_url).rstrip("/")

    def dto(self, request: Request, record: SandboxRecord) -> dict[str, Any]:
        return record.to_dto(f"{self.base(request)}/toolbox")


Handler = Callable[[Service, Request], Awaitable[Any]]


def _route(path: str, method: str, handler: Handler, service: Service) -> Route:
    async def endpoint(request: Request) -> Response:
        try:
            service.check_key(request)
            answer = await handler(service, request)
        except ApiError as error:
            return error_response(error)
        return JSONResponse(answer)

    return Route(path, endpoint, methods=[method], name=handler.__name__)


async def _json(request: Request) -> Any:
    """The request's JSON body, refused (413) as soon as more than :data:`_MAX_BODY_BYTES`
    arrived: a body is never read whole before its size is known."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > _MAX_BODY_BYTES:
            raise ApiError(413, f"The body is over {_MAX_BODY_BYTES} bytes.")
    try:
        return json.loads(bytes(body) or b"{}")
    except ValueError:
        raise ApiError(400, "The body is not JSON.") from None


def _key(request: Request) -> str:
    return str(request.path_params["key"])


async def create_sandbox(service: Service, request: Request) -> Any:
    record = await run_in_threadpool(service.sandboxes.create, await _json(request))
    return service.dto(request, record)


async def get_sandbox(service: Service, request: Request) -> Any:
    record = service.sandboxes.find(_key(request))
    record.touch()
    return service.dto(request, record)


async def list_sandboxes(service: Service, request: Request) -> Any:
    query = request.query_params
    try:
        labels = json.loads(query.get("labels") or "{}")
        start = int(query.get("cursor") or 0)
        limit = int(query.get("limit") or _PAGE)
    except ValueError:
        raise ApiError(400, "labels must be a JSON object; cursor and limit numbers.") from None
    if not isinstance(labels, dict) or limit < 1:
        raise ApiError(400, "labels must be a JSON object and limit at least 1.")
    found = service.sandboxes.listed(
        labels=labels, states=query.getlist("states"), ids=query.getlist("id")
    )
    page = found[start : start + limit]
    more = start + limit < len(found)
    toolbox = f"{service.base(request)}/toolbox"
    return {
        "items": [record.to_list_item(toolbox) for record in page],
        "nextCursor": str(start + limit) if more else None,
    }


async def delete_sandbox(service: Service, request: Request) -> Any:
    record = await run_in_threadpool(service.sandboxes.delete, _key(request))
    service.preview.forget(record.id)
    return service.dto(request, record)


async def start_sandbox(service: Service, request: Request) -> Any:
    record = await run_in_threadpool(service.sandboxes.start, _key(request))
    return service.dto(request, record)


async def stop_sandbox(service: Service, request: Request) -> Any:
    force = request.query_params.get("force") == "true"
    record = await run_in_threadpool(service.sandboxes.stop, _key(request), force=force)
    return service.dto(request, record)


async def replace_labels(service: Service, request: Request) -> Any:
    body = await _json(request)
    labels = body.get("labels") if isinstance(body, dict) else None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ApiError(400, "The body must be {'labels': {name: value}} (SandboxLabels).")
    record = service.sandboxes.set_labels(_key(request), labels)
    return {"labels": dict(record.labels)}


async def set_autostop_interval(service: Service, request: Request) -> Any:
    record = service.sandboxes.set_auto_stop(_key(request), int(request.path_params["interval"]))
    return service.dto(request, record)


async def update_public_status(service: Service, request: Request) -> Any:
    public = request.path_params["public"] == "true"
    return service.dto(request, service.sandboxes.set_public(_key(request), public))


async def get_port_preview_url(service: Service, request: Request) -> Any:
    record = service.sandboxes.find(_key(request))
    port = int(request.path_params["port"])
    if not 0 < port < 65536:
        raise ApiError(400, f"Port {port} is not between 1 and 65535.")
    url = service.base(request) + preview_path(record.id, port)
    return {"sandboxId": record.id, "url": url, "token": record.preview_token}


async def get_toolbox_proxy_url(service: Service, request: Request) -> Any:
    service.sandboxes.find(_key(request))
    return {"url": f"{service.base(request)}/toolbox"}


async def execute_command(service: Service, request: Request) -> Any:
    body = await _json(request)
    code, output = await run_in_threadpool(service.sandboxes.execute, _key(request), body)
    return {"exitCode": code, "result": output}


def api_routes(service: Service) -> list[Route]:
    """Every route of the service but the preview proxy."""
    table: list[tuple[str, str, Handler]] = [
        ("/api/sandbox", "POST", create_sandbox),
        ("/api/sandbox", "GET", list_sandboxes),
        ("/api/sandbox/{key}", "GET", get_sandbox),
        ("/api/sandbox/{key}", "DELETE", delete_sandbox),
        ("/api/sandbox/{key}/start", "POST", start_sandbox),
        ("/api/sandbox/{key}/stop", "POST", stop_sandbox),
        ("/api/sandbox/{key}/labels", "PUT", replace_labels),
        ("/api/sandbox/{key}/autostop/{interval:int}", "POST", set_autostop_interval),
        ("/api/sandbox/{key}/public/{public}", "POST", update_public_status),
        ("/api/sandbox/{key}/ports/{port:int}/preview-url", "GET", get_port_preview_url),
        ("/api/sandbox/{key}/toolbox-proxy-url", "GET", get_toolbox_proxy_url),
        ("/toolbox/{key}/process/execute", "POST", execute_command),
    ]
    return [_route(path, method, handler, service) for path, method, handler in table]
