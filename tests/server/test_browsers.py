"""What other web pages may ask of a server (openenv_hub.server.browsers), on a real uvicorn:
cross-origin requests and WebSockets, bodies a page can send without asking first, and Host
names a DNS-rebinding page would use. Clients that send no Origin are unaffected."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
from sample_envs import Echoed, Message, Typed
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from openenv_hub import MCPEnvironment, create_app, tool
from openenv_hub.errors import ConfigurationError
from openenv_hub.server.browsers import BrowserPolicy

CALL = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "record"}, "id": 1}


class Recorder(MCPEnvironment):
    """A tool that counts its calls, so a test sees whether a request reached it."""

    calls = 0
    created = 0

    def __init__(self) -> None:
        type(self).created += 1
        super().__init__()

    @tool
    def record(self) -> int:
        type(self).calls += 1
        return type(self).calls


@pytest.fixture
def recorder(serve: Any) -> Any:
    Recorder.calls = Recorder.created = 0
    return serve(create_app(Recorder))


def ws_url(server: Any) -> str:
    return server.url.replace("http://", "ws://") + "/ws"


def refused_handshake(url: str, **options: Any) -> Any:
    with pytest.raises(InvalidStatus) as refused, connect(url, open_timeout=10, **options):
        pass
    return refused.value.response


def test_a_websocket_from_another_origin_is_refused_before_a_session_opens(recorder: Any) -> None:
    response = refused_handshake(ws_url(recorder), origin="http://localhost:3000")
    assert response.status_code == 403
    body = json.loads(response.body)
    assert body["code"] == "ORIGIN_NOT_ALLOWED" and body["origin"] == "http://localhost:3000"
    assert "http://localhost:3000" in body["detail"]
    assert "allowed_origins" in body["detail"] and "OPENENV_ALLOWED_ORIGINS" in body["detail"]
    mcp_socket = recorder.url.replace("http://", "ws://") + "/mcp"
    assert refused_handshake(mcp_socket, origin="null").status_code == 403
    assert Recorder.created == 0 and recorder.pool.active_sessions == 0


def test_pages_of_the_server_itself_and_clients_without_origin_are_served(recorder: Any) -> None:
    own = recorder.url  # http://127.0.0.1:PORT, as a page of the server sends it
    for origin in (own, None):
        with connect(ws_url(recorder), origin=origin, open_timeout=10) as ws:  # type: ignore[arg-type]
            ws.send(json.dumps({"type": "mcp", "data": CALL}))
            assert json.loads(ws.recv(timeout=10))["data"]["result"]["data"] >= 1
    localhost = f"localhost:{recorder.port}"
    own_name = f"http://{localhost}"
    with (
        socket.create_connection(("127.0.0.1", recorder.port), timeout=10) as sock,
        connect(f"ws://{localhost}/ws", sock=sock, origin=own_name) as ws,  # type: ignore[arg-type]
    ):
        ws.send(json.dumps({"type": "mcp", "data": CALL}))
        assert json.loads(ws.recv(timeout=10))["data"]["result"]["data"] == 3
    refused = refused_handshake(ws_url(recorder), origin=f"http://{localhost}")
    assert refused.status_code == 403  # http://localhost:PORT is not http://127.0.0.1:PORT


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://localhost:3000", "content-type": "application/json"},
        {"origin": "null", "content-type": "application/json"},
        {"content-type": "text/plain"},
        {"content-type": "application/x-www-form-urlencoded"},
        {},  # a body and no Content-Type: what fetch() sends for a Blob without a type
        {"sec-fetch-site": "cross-site", "content-type": "application/json"},
    ],
    ids=["other-origin", "null-origin", "text-plain", "form", "no-type", "cross-site"],
)
def test_what_a_page_can_send_without_asking_never_reaches_a_tool(
    recorder: Any, headers: dict[str, str]
) -> None:
    reply = httpx.post(f"{recorder.url}/mcp", content=json.dumps(CALL), headers=headers)
    assert reply.status_code in (403, 415)
    body = reply.json()
    setting = "OPENENV_ALLOWED_ORIGINS" if reply.status_code == 403 else "application/json"
    assert setting in body["detail"]
    assert Recorder.calls == 0 and Recorder.created == 0
    assert httpx.post(f"{recorder.url}/mcp", json=CALL).json()["result"]["data"] == 1


def test_every_route_refuses_other_origins(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    other = {"origin": "https://attacker.example"}
    with httpx.Client(base_url=server.url, headers=other, timeout=10) as client:
        for method, path in [("GET", "/health"), ("GET", "/state"), ("GET", "/web/")]:
            assert client.request(method, path).status_code == 403, path
        assert client.post("/reset", json={}).status_code == 403
        assert client.post("/step", json={"action": {"message": "x"}}).status_code == 403
        assert client.options("/step").status_code == 403  # a preflight
    assert server.pool.active_sessions == 0
    navigation = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}
    assert httpx.get(f"{server.url}/health", headers=navigation).status_code == 200


@pytest.mark.parametrize("host", ["rebound.example:8000", "rebound.example", "10.1.2.3.example"])
def test_a_server_reached_over_loopback_refuses_foreign_host_names(
    recorder: Any, host: str
) -> None:
    reply = httpx.post(f"{recorder.url}/mcp", json=CALL, headers={"host": host})
    assert reply.status_code == 403
    body = reply.json()
    assert body["code"] == "HOST_NOT_ALLOWED" and body["host"] == host.split(":")[0]
    assert "allowed_hosts" in body["detail"] and "OPENENV_ALLOWED_HOSTS" in body["detail"]
    with socket.create_connection(("127.0.0.1", recorder.port), timeout=10) as sock:
        response = refused_handshake(f"ws://{host}/ws", sock=sock)  # Host: as in the URL
    assert response.status_code == 403
    assert Recorder.calls == 0 and Recorder.created == 0


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:9", "127.0.0.1:80", "[::1]:8000", "app.localhost"]
)
def test_loopback_names_with_any_port_are_served(recorder: Any, host: str) -> None:
    assert httpx.get(f"{recorder.url}/health", headers={"host": host}).status_code == 200


def test_hosts_and_origins_can_be_allowed(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENENV_ALLOWED_ORIGINS", "http://localhost:3000, https://app.example")
    server = serve(create_app(Typed, Message, Echoed, allowed_hosts=["my-box.local"]))
    allowed = {"origin": "http://localhost:3000", "host": "my-box.local:8000"}
    reply = httpx.get(f"{server.url}/health", headers=allowed)
    assert reply.status_code == 200
    assert reply.headers["access-control-allow-origin"] == "http://localhost:3000"
    preflight = httpx.options(
        f"{server.url}/step",
        headers={
            "origin": "https://app.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    with connect(ws_url(server), origin="https://app.example", open_timeout=10) as ws:  # type: ignore[arg-type]
        ws.send(json.dumps({"type": "reset"}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"
    refused = httpx.get(f"{server.url}/health", headers={"origin": "http://localhost:3001"})
    assert refused.status_code == 403


def test_a_space_allows_its_own_origin_and_host(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPACE_ID", "Alice/My_Env")  # what Spaces set; SPACE_HOST too, often
    server = serve(create_app(Typed, Message, Echoed))
    space = {"origin": "https://alice-my-env.hf.space", "host": "alice-my-env.hf.space"}
    assert httpx.get(f"{server.url}/health", headers=space).status_code == 200
    other = {"origin": "https://bob-evil.hf.space"}
    assert httpx.get(f"{server.url}/health", headers=other).status_code == 403


def test_answers_say_only_the_server_may_frame_them(serve: Any) -> None:
    """Threat: a page of another site shows the server's pages (the UI at ``/web``) in a frame
    and has its user click in it (tests/ui/test_cross_origin.py shows it in chromium)."""
    server = serve(create_app(Typed, Message, Echoed))
    for path in ("/health", "/docs", "/no-such-route"):
        reply = httpx.get(f"{server.url}{path}")
        assert reply.headers["x-frame-options"] == "DENY", path
        assert reply.headers["content-security-policy"] == "frame-ancestors 'self'", path


def test_a_space_may_be_framed_by_its_page_on_the_hub(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a Space, huggingface.co/spaces/NS/NAME shows the app in a frame: it may, and so may
    the origins allowed to call the server; X-Frame-Options, which cannot name them, is left
    out (browsers that read the policy ignore it anyway)."""
    monkeypatch.setenv("SPACE_ID", "alice/my_env")
    monkeypatch.setenv("OPENENV_ALLOWED_ORIGINS", "http://localhost:3000")
    server = serve(create_app(Typed, Message, Echoed))
    reply = httpx.get(f"{server.url}/health")
    ancestors = "frame-ancestors 'self' http://localhost:3000 https://huggingface.co"
    assert reply.headers["content-security-policy"] == ancestors
    assert "x-frame-options" not in reply.headers


def test_a_trusted_proxy_names_the_host_the_page_was_served_from(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy that serves the app under its own address says so in ``Forwarded``; the server
    believes it when told the proxy's address (tests/server/test_host_names.py: else not)."""
    monkeypatch.setenv("OPENENV_TRUSTED_PROXIES", "127.0.0.1")
    Recorder.calls = 0
    server = serve(create_app(Recorder))
    through_proxy = {
        "origin": "http://127.0.0.1:9999",
        "forwarded": 'host="127.0.0.1:9999";proto=http',
        "content-type": "application/json",
    }
    reply = httpx.post(f"{server.url}/mcp", content=json.dumps(CALL), headers=through_proxy)
    assert reply.status_code == 200 and Recorder.calls == 1


def test_the_host_check_applies_to_every_connection() -> None:
    """Whatever address the connection arrived at (loopback, the machine's own, a container's),
    a name is refused unless allowed; an address is served (a page whose origin is an address
    is that address's: no rebinding there, and behind a NAT or a load balancer the address a
    client typed is not the one the server sees)."""
    policy = BrowserPolicy()
    scope = {"type": "http", "method": "GET", "path": "/health"}
    rebound = [(b"host", b"rebound.example:8000")]
    for server in ("127.0.0.1", "::ffff:127.0.0.1", "10.0.0.5", "172.17.0.2", "fd00::2"):
        assert policy.refusal({**scope, "headers": rebound, "server": (server, 8000)}), server
        for typed in (
            b"10.0.0.5:8000",
            b"[fd00::2]:8000",
            b"0.0.0.0",
            b"localhost",
            b"a.localhost",
        ):
            served = {**scope, "headers": [(b"host", typed)], "server": (server, 8000)}
            assert policy.refusal(served) is None, (server, typed)


def test_allowed_hosts_name_a_domain_with_a_leading_dot() -> None:
    policy = BrowserPolicy.from_settings(allowed_hosts=[".example.org", "box.local"])
    scope = {"type": "http", "method": "GET", "path": "/health", "server": ("10.0.0.5", 80)}
    for host, served in [
        ("app.example.org", True),
        ("a.b.example.org", True),
        ("example.org", True),
        ("evilexample.org", False),
        ("box.local", True),
        ("x.box.local", False),
    ]:
        refused = policy.refusal({**scope, "headers": [(b"host", host.encode())]})
        assert (refused is None) == served, host


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("OPENENV_ALLOWED_ORIGINS", "localhost:3000"),
        ("OPENENV_ALLOWED_ORIGINS", "http://localhost:3000/app"),
        ("OPENENV_ALLOWED_HOSTS", "http://my-box.local"),
    ],
)
def test_a_setting_that_is_not_an_origin_or_host_says_so(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as wrong:
        create_app(Typed, Message, Echoed)
    assert repr(value) in str(wrong.value)
