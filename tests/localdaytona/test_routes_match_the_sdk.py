"""Every route of the local Daytona is an operation of the ``daytona`` SDK's generated clients
(``daytona-api-client``, ``daytona-toolbox-api-client``, from PyPI): same method, same path,
and an answer that the SDK's own generated model for that operation parses.

What each operation answers is read from the generated code itself (its ``_response_types_map``
and its ``_serialize`` method), not written here; the answers are parsed with the generated
``ApiClient.deserialize``, the function the SDK runs on every answer it gets."""

from __future__ import annotations

import inspect
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from openenv_hub.localdaytona import LocalDaytona

SANDBOX_OPERATIONS = [
    "create_sandbox", "list_sandboxes", "get_sandbox", "delete_sandbox", "start_sandbox",
    "stop_sandbox", "replace_labels", "set_autostop_interval", "update_public_status",
    "get_port_preview_url", "get_toolbox_proxy_url",
]  # fmt: skip
TOOLBOX_OPERATIONS = ["execute_command"]


@dataclass(frozen=True)
class Operation:
    """An operation of the SDK's generated client: where it goes and what it parses."""

    name: str
    method: str
    path: str  # with each parameter written {}, as the local service serves it
    answer: str | None  # the generated model of a 200
    api_client: Any  # the generated ApiClient class that parses it


def _operation(api: type, name: str, prefix: str, api_client: Any) -> Operation:
    serialize = inspect.getsource(getattr(api, f"_{name}_serialize"))
    method = re.search(r"method='(\w+)'", serialize)
    path = re.search(r"resource_path='([^']+)'", serialize)
    answer = re.search(r"'200': (?:\"(\w+)\"|None)", inspect.getsource(getattr(api, name)))
    assert method and path and answer, f"the SDK's {name} changed shape"
    template = re.sub(r"\{[^}]+\}", "{}", prefix + path[1])
    return Operation(name, method[1], template, answer[1], api_client)


def sdk_operations() -> dict[str, Operation]:
    """The SDK's operations the local Daytona serves, by name."""
    import daytona_api_client
    import daytona_toolbox_api_client

    found = {
        name: _operation(daytona_api_client.SandboxApi, name, "/api", daytona_api_client.ApiClient)
        for name in SANDBOX_OPERATIONS
    }
    toolbox = daytona_toolbox_api_client  # the toolbox proxy puts /{sandboxId} before the path
    for name in TOOLBOX_OPERATIONS:
        found[name] = _operation(toolbox.ProcessApi, name, "/toolbox/{}", toolbox.ApiClient)
    return found


def parse(operation: Operation, answer: httpx.Response) -> Any:
    """``answer`` as the SDK reads it (raises if the generated model does not parse it)."""
    assert answer.status_code == 200, (operation.name, answer.status_code, answer.text)
    if operation.answer is None:
        return None
    parsed = operation.api_client().deserialize(answer.text, operation.answer, "application/json")
    assert parsed is not None, operation.name
    return parsed


def test_each_route_is_an_operation_of_the_sdk() -> None:
    from openenv_hub.localdaytona.routes import Service, api_routes

    operations = sdk_operations()
    routes = api_routes(Service(None, None, "key"))  # type: ignore[arg-type]  # paths only
    served = {
        route.name: (_method(route), re.sub(r"\{[^}]+\}", "{}", route.path)) for route in routes
    }
    assert set(served) == set(operations), "each route is named after the SDK's operation"
    for name, (method, path) in served.items():
        assert (method, path) == (operations[name].method, operations[name].path), name


def test_a_missing_field_fails_to_parse() -> None:
    """The check has teeth: an answer without a field the model needs does not parse."""
    from pydantic import ValidationError

    operation = sdk_operations()["get_toolbox_proxy_url"]
    with pytest.raises(ValidationError):
        parse(operation, httpx.Response(200, json={"address": "http://127.0.0.1:1/toolbox"}))
    with pytest.raises(ValidationError):  # an item lacks the sandbox's required fields
        parse(sdk_operations()["list_sandboxes"], httpx.Response(200, json={"items": [{}]}))


@pytest.fixture(scope="module")
def daytona() -> Iterator[LocalDaytona]:
    from docker_support.engine import require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    with LocalDaytona() as service:
        yield service


@pytest.mark.docker
def test_each_answer_parses_with_the_sdks_model(daytona: LocalDaytona) -> None:
    from docker_support.engine import BASE_IMAGE

    operations = sdk_operations()
    called: set[str] = set()
    base = daytona.api_url.removesuffix("/api")
    key = {"Authorization": f"Bearer {daytona.api_key}"}

    answers: dict[str, httpx.Response] = {}

    def call(name: str, path: str, body: Any = None, **params: Any) -> Any:
        operation = operations[name]
        answer = httpx.request(
            operation.method, base + path, json=body, params=params, headers=key, timeout=60
        )
        called.add(name)
        answers[name] = answer
        return parse(operation, answer)

    body = {
        "buildInfo": {"dockerfileContent": f"FROM {BASE_IMAGE}\n"}, "env": {"A": "1"},
        "labels": {"suite": "routes"}, "autoStopInterval": 5, "networkBlockAll": True,
        "cpu": 1, "memory": 1,
    }  # fmt: skip
    created = call("create_sandbox", "/api/sandbox", body)
    sandbox = f"/api/sandbox/{created.id}"
    assert created.state.value == "started" and created.env == {"A": "1"}
    assert call("get_sandbox", sandbox).labels == {"suite": "routes"}
    listed = call("list_sandboxes", "/api/sandbox", labels=json.dumps({"suite": "routes"}))
    assert [item.id for item in listed.items] == [created.id] and listed.next_cursor is None
    assert call("replace_labels", f"{sandbox}/labels", {"labels": {"b": "2"}}).labels == {"b": "2"}
    assert call("set_autostop_interval", f"{sandbox}/autostop/7").auto_stop_interval == 7
    assert call("update_public_status", f"{sandbox}/public/false").public is False
    link = call("get_port_preview_url", f"{sandbox}/ports/8000/preview-url")
    assert link.url.endswith(f"/preview/8000-{created.id}") and link.token
    toolbox = call("get_toolbox_proxy_url", f"{sandbox}/toolbox-proxy-url").url
    ran = call("execute_command", f"/toolbox/{created.id}/process/execute", {"command": "echo $A"})
    assert toolbox == created.toolbox_proxy_url and (ran.exit_code, ran.result) == (0, "1\n")
    assert call("stop_sandbox", f"{sandbox}/stop").state.value == "stopped"
    assert call("start_sandbox", f"{sandbox}/start").state.value == "started"
    assert call("delete_sandbox", sandbox).state.value == "destroyed"
    assert called == set(operations), "every route answered once"
    shape = answers["get_sandbox"].json()
    del shape["toolboxProxyUrl"]  # what the SDK needs to reach the toolbox
    with pytest.raises(ValueError, match="toolbox_proxy_url"):
        parse(operations["get_sandbox"], httpx.Response(200, json=shape))
    assert httpx.get(base + sandbox, headers=key).status_code == 404


@pytest.mark.docker
def test_without_the_api_key_every_route_answers_401(daytona: LocalDaytona) -> None:
    base = daytona.api_url.removesuffix("/api")
    for operation in sdk_operations().values():
        path = operation.path.replace("{}", "1")
        for headers in ({}, {"Authorization": "Bearer not-the-key"}):
            answer = httpx.request(operation.method, base + path, headers=headers, timeout=10)
            assert answer.status_code == 401, (operation.name, answer.text)


def _method(route: Any) -> str:
    """The route's method; Starlette adds HEAD to every GET route, and a set has no order."""
    (method,) = set(route.methods or ()) - {"HEAD"}
    return str(method)
