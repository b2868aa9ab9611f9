"""Who a client is: the address that connected, unless a proxy the server trusts names it.

Threat: ``max_sessions_per_client`` bounds one client's share of the sessions, but uvicorn took
the client's address from ``X-Forwarded-For`` whenever the connection came from 127.0.0.1, so
any local process (or a page of LocalHub, which passed the header on) named itself a new client
with each request and held every slot."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import httpx
import pytest
from limits_app import make_app
from websockets.sync.client import connect

CREATE = {"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1}


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws"


def refusal(ws: Any) -> dict[str, Any]:
    """The error a socket opened past the client's share gets first."""
    reply = json.loads(ws.recv(timeout=10))
    assert reply["type"] == "error", reply
    return dict(reply["data"])


def test_x_forwarded_for_does_not_make_another_client(serve: Any) -> None:
    server = serve(make_app(max_sessions_per_client=1))
    with contextlib.ExitStack() as held:
        held.enter_context(connect(ws_url(server.url), open_timeout=10))
        server.wait_for(lambda: server.pool.active_sessions == 1)
        for forwarded in ("10.9.9.9", "10.9.9.9, 10.8.8.8", "127.0.0.2"):
            headers = {"x-forwarded-for": forwarded, "x-real-ip": forwarded}
            with connect(ws_url(server.url), additional_headers=headers, open_timeout=10) as ws:
                refused = refusal(ws)
            assert refused["code"] == "CAPACITY_REACHED", forwarded
            assert "Client 127.0.0.1 holds 1 sessions" in refused["message"]
            over_http = httpx.post(f"{server.url}/mcp", json=CREATE, headers=headers).json()
            assert "holds 1 sessions" in over_http["error"]["message"], forwarded
        forwarded_rfc = {"forwarded": "for=10.9.9.9"}
        with connect(ws_url(server.url), additional_headers=forwarded_rfc) as ws:
            assert refusal(ws)["code"] == "CAPACITY_REACHED"


def test_a_trusted_proxy_names_its_clients(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind a proxy the operator names, each client it forwards has a share of its own."""
    monkeypatch.setenv("OPENENV_TRUSTED_PROXIES", "127.0.0.1")
    server = serve(make_app(max_sessions_per_client=1))
    with contextlib.ExitStack() as held:
        for client in ("10.9.9.9", "10.8.8.8"):
            headers = {"x-forwarded-for": client}
            ws = held.enter_context(connect(ws_url(server.url), additional_headers=headers))
            ws.send(json.dumps({"type": "reset"}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation", client
        again = {"x-forwarded-for": "10.9.9.9"}
        with connect(ws_url(server.url), additional_headers=again, open_timeout=10) as ws:
            refused = refusal(ws)
        assert "Client 10.9.9.9 holds 1 sessions" in refused["message"]
        # The proxy's own X-Forwarded-For entry is the last: a client cannot put one before it.
        spoofed = {"x-forwarded-for": "10.7.7.7, 10.9.9.9"}
        with connect(ws_url(server.url), additional_headers=spoofed, open_timeout=10) as ws:
            assert "Client 10.9.9.9 holds" in refusal(ws)["message"]


@pytest.mark.parametrize("entry", ["10.0.0.300", "proxy.local", "10.0.0.0/33"])
def test_a_trusted_proxy_that_is_no_address_says_so(
    monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    from openenv_hub.errors import ConfigurationError

    monkeypatch.setenv("OPENENV_TRUSTED_PROXIES", f"127.0.0.1, {entry}")
    with pytest.raises(ConfigurationError) as wrong:
        make_app()
    assert repr(entry) in str(wrong.value) and "10.0.0.0/8" in str(wrong.value)
