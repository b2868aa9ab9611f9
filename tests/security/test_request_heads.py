"""A request's head (its request line and headers) is bounded in size and in time, on an
environment's server and on LocalHub.

Threats: a client sends a header without end, which the server reads whole (a 100 MB header
was answered 200, the server's memory growing by more than 100 MB and other requests waiting
seconds meanwhile); clients open connections and never finish their headers, each held for
ever (200 such connections were all open after 90 s)."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from limits_app import make_app
from serving import ServerThread

from openenv_hub.localhub import LocalHub


@dataclass
class Served:
    """A server: where it listens, and the path of its health route."""

    address: tuple[str, int]
    health: str

    @property
    def health_url(self) -> str:
        return f"http://{self.address[0]}:{self.address[1]}{self.health}"

    def head(self) -> bytes:
        """The start of a request's head, without its end."""
        return f"GET {self.health} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()

    def connect(self) -> socket.socket:
        return socket.create_connection(self.address, timeout=20)


@pytest.fixture(params=["environment server", "LocalHub"])
def server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Served]:
    """A server of each kind, with the bounds of this test: heads up to 8 KB, within 2 s."""
    monkeypatch.setenv("OPENENV_MAX_HEADER_SIZE_KB", "8")
    monkeypatch.setenv("OPENENV_HEADER_TIMEOUT_S", "2")
    if request.param == "LocalHub":
        with LocalHub(data_dir=tmp_path) as hub:
            yield Served(("127.0.0.1", hub.port), "/_localhub/health")
        return
    environment = ServerThread(make_app())
    environment.start()
    try:
        yield Served(("127.0.0.1", environment.port), "/health")
    finally:
        environment.stop()


def _answer(sock: socket.socket) -> bytes:
    """What the server sent before it closed the connection (b"" if nothing)."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_a_head_over_the_bound_is_refused_unread(server: Served) -> None:
    with server.connect() as sock:
        sock.sendall(server.head() + b"X-Big: " + b"a" * 20_000 + b"\r\n")  # and no end
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"connection: close" in answer.lower()
    fits = {"x-fits": "a" * 6000}
    assert httpx.get(server.health_url, headers=fits, timeout=10).status_code == 200


def test_a_head_that_never_ends_is_cut_off(server: Served) -> None:
    socks = [server.connect() for _ in range(20)]
    try:
        for sock in socks[:10]:
            sock.sendall(server.head() + b"X-Slow: ")  # a head begun and never finished
        # socks[10:] send nothing at all
        started = time.monotonic()
        answers = [_answer(sock) for sock in socks]
        waited = time.monotonic() - started
    finally:
        for sock in socks:
            sock.close()
    assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers), answers
    assert waited < 15, f"the connections were held {waited:.1f} s"


def test_a_slow_but_whole_head_and_kept_alive_requests_are_served(server: Served) -> None:
    """The time bound is for a head, not for a connection: each request on a kept-alive
    connection has its own, and one that comes in pieces within it is served."""
    with server.connect() as sock:
        for _ in range(3):
            for piece in (server.head(), b"X-Piece: 1\r\n", b"\r\n"):
                sock.sendall(piece)
                time.sleep(0.3)
            assert _response_status(sock.recv) == 200
            time.sleep(1.5)  # 2.4 s on this connection each round: past the bound, in total


def _response_status(recv: Callable[[int], bytes]) -> int:
    """The status of the response ``recv`` reads, whose body it reads too."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = recv(65536)
        assert chunk, f"the connection closed after {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").lower().split("\r\n")
    length = next(
        int(line.split(":", 1)[1]) for line in lines if line.startswith("content-length:")
    )
    while len(body) < length:
        body += recv(65536)
    return int(lines[0].split(" ", 2)[1])
