"""DNS rebinding where the server sees an address that is not loopback: a server bound to
``0.0.0.0`` reached at one of the machine's own addresses, and a server in a container reached
through a port published on 127.0.0.1 (which the container sees arrive at its own address, from
the engine's). Either way a page whose name was rebound to that address sends its own name in
``Host``, and the server refuses it; the address a client typed (``http://10.0.0.5:8000``) and
the loopback names are served.

The Docker engine of CI has no bridge network, so no port can be published there. The container
is played by what it sees: a server on ``0.0.0.0`` that a relay (docker-proxy's part: it accepts
on 127.0.0.1 and connects to the container's address) reaches at the machine's own address,
from that address."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serving import ServerThread
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from openenv_hub import MCPEnvironment, create_app, tool

REBOUND = "rebind.evil.com"


class Counted(MCPEnvironment):
    """An environment that counts the instances made, so a test sees whether a session opened."""

    created = 0

    def __init__(self) -> None:
        type(self).created += 1
        super().__init__()

    @tool
    def ping(self) -> str:
        return "pong"


def own_address() -> str:
    """An address of this machine that is not loopback (the one its default route leaves from;
    a UDP socket's connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.1", 9))
        except OSError:
            pytest.skip("this machine has no address but loopback: nothing to reach it at")
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback: nothing to reach it at")
    return address


@pytest.fixture
def on_every_address() -> Iterator[ServerThread]:
    """A server bound to 0.0.0.0, as ``openenv serve --host 0.0.0.0`` and the images run."""
    Counted.created = 0
    server = ServerThread(create_app(Counted), host="0.0.0.0")
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Relay:
    """Accepts on 127.0.0.1 and pipes each connection to ``target``, as Docker's userland proxy
    does for a port published on 127.0.0.1."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.open: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, name="relay", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(self.target, timeout=10)
            self.open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for sock in self.open:
            with contextlib.suppress(OSError):
                sock.close()
        self.thread.join(timeout=10)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def rebound_requests(url: str, port: int) -> tuple[httpx.Response, Any]:
    """What a page named ``rebind.evil.com`` sends once its name points at ``url``'s address:
    ``POST /reset`` and a ``/ws`` handshake, with its own ``Host`` and a matching ``Origin``."""
    page = {"host": f"{REBOUND}:{port}", "origin": f"http://{REBOUND}:{port}"}
    reply = httpx.post(f"{url}/reset", json={}, headers=page, timeout=10)
    address, _, at = url.removeprefix("http://").rpartition(":")
    with (
        socket.create_connection((address, int(at)), timeout=10) as sock,
        pytest.raises(InvalidStatus) as refused,
        connect(f"ws://{REBOUND}:{port}/ws", sock=sock, origin=page["origin"], open_timeout=10),  # type: ignore[arg-type]
    ):
        pass
    return reply, refused.value.response


def test_a_server_on_every_address_refuses_foreign_hosts_at_its_own_address(
    on_every_address: ServerThread,
) -> None:
    """Threat: a server on 0.0.0.0 reached at the machine's address (10.0.0.5) takes a rebound
    page for its own; the Host check ran for connections over loopback only."""
    address, port = own_address(), on_every_address.port
    reply, handshake = rebound_requests(f"http://{address}:{port}", port)
    assert reply.status_code == 403 and reply.json()["code"] == "HOST_NOT_ALLOWED"
    assert reply.json()["host"] == REBOUND
    assert handshake.status_code == 403
    assert Counted.created == 0

    typed = {"origin": f"http://{address}:{port}"}  # a user who typed http://ADDRESS:PORT
    served = httpx.post(f"http://{address}:{port}/reset", json={}, headers=typed, timeout=10)
    assert served.status_code == 200
    with connect(f"ws://{address}:{port}/ws", origin=typed["origin"], open_timeout=10) as ws:  # type: ignore[arg-type]
        ws.send(json.dumps({"type": "reset"}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_a_container_behind_a_port_published_on_loopback_refuses_foreign_hosts(
    on_every_address: ServerThread,
) -> None:
    """Threat: a server in a container (bound to 0.0.0.0, reached at its own address from the
    engine's) behind ``-p 127.0.0.1:PORT:8000`` takes a page rebound to 127.0.0.1 for its own."""
    relay = Relay((own_address(), on_every_address.port))
    try:
        published = f"http://127.0.0.1:{relay.port}"
        reply, handshake = rebound_requests(published, relay.port)
        assert reply.status_code == 403 and reply.json()["code"] == "HOST_NOT_ALLOWED"
        assert handshake.status_code == 403
        assert Counted.created == 0
        for host in (f"127.0.0.1:{relay.port}", f"localhost:{relay.port}"):
            page = {"host": host, "origin": f"http://{host}"}
            served = httpx.post(f"{published}/reset", json={}, headers=page, timeout=10)
            assert served.status_code == 200, host
    finally:
        relay.close()


def test_forwarded_hosts_count_only_from_trusted_proxies(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threat: a page names the host it wants in ``Forwarded`` / ``X-Forwarded-Host``, and the
    server takes its origin for its own: only a configured proxy's word counts."""
    page = {"origin": "http://127.0.0.1:9999", "content-type": "application/json"}
    forwarded = [
        {"forwarded": 'host="127.0.0.1:9999";proto=http'},
        {"x-forwarded-host": "127.0.0.1:9999"},
    ]
    untrusted = serve(create_app(Counted))
    for header in forwarded:
        reply = httpx.post(f"{untrusted.url}/reset", json={}, headers={**page, **header})
        assert reply.status_code == 403 and reply.json()["code"] == "ORIGIN_NOT_ALLOWED"
    monkeypatch.setenv("OPENENV_TRUSTED_PROXIES", "127.0.0.0/8")
    behind_a_proxy = serve(create_app(Counted))
    for header in forwarded:
        reply = httpx.post(f"{behind_a_proxy.url}/reset", json={}, headers={**page, **header})
        assert reply.status_code == 200


def test_the_in_process_test_client_is_served_under_its_own_name_and_only_in_process() -> None:
    """Starlette's ``TestClient(app)`` calls the app ``testserver``, in process, as FastAPI's
    own docs do and generated environments' tests do; over the network that name is refused
    like any other a page could rebind."""
    from starlette.testclient import TestClient

    app = create_app(Counted)
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "healthy"}
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "reset", "data": {}})
            assert ws.receive_json()["type"] == "observation"
    server = ServerThread(create_app(Counted))
    server.start()
    try:
        refused = httpx.get(f"{server.url}/health", headers={"Host": "testserver"}, timeout=30)
        assert refused.status_code == 403
        assert refused.json()["code"] == "HOST_NOT_ALLOWED"
    finally:
        server.stop()
