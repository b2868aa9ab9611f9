"""The harness's sandbox: TCP on its own loopback and nowhere else, two ways out through Unix
sockets, names refused and reported, the cgroup bound (TCP buffers included), nothing left
running after a command, secrets never on a command line, a first process it cannot kill."""

from __future__ import annotations

import http.server
import os
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from openenv_hub.harness import HarnessLimits, HarnessSandbox, Relay, find_launcher
from openenv_hub.harness.relay import UnixRelay
from openenv_hub.sandbox import tcp_bytes

pytestmark = pytest.mark.timeout(120)

PY = "/usr/bin/python3"


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def host_server() -> Iterator[int]:
    """An HTTP server on the host's 127.0.0.1 (its port)."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Iterator[object]:
    made: list[HarnessSandbox] = []

    def make(relays: list[Relay] | None = None, **options: object) -> HarnessSandbox:
        sandbox = HarnessSandbox(
            find_launcher(),
            workspace=tmp_path / f"workspace{len(made)}",
            home=tmp_path / f"home{len(made)}",
            read_only=[],
            relays=relays or [],
            **options,  # type: ignore[arg-type]
        )
        made.append(sandbox)
        sandbox.start()
        return sandbox

    yield make
    for sandbox in made:
        sandbox.stop()


def python(sandbox: HarnessSandbox, code: str, **options: object) -> str:
    result = sandbox.run([PY, "-c", code], timeout_s=30, **options)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_tcp_works_on_the_sandbox_loopback_and_reaches_nothing_else(
    make_sandbox: object, host_server: int
) -> None:
    sandbox = make_sandbox()  # type: ignore[operator]
    code = f"""
import socket
server = socket.socket(); server.bind(("127.0.0.1", 9000)); server.listen()
client = socket.create_connection(("127.0.0.1", 9000)); peer, _ = server.accept()
client.sendall(b"ping"); print("loopback", peer.recv(4).decode())
for address in [("127.0.0.1", {host_server}), ("1.1.1.1", 443), ("10.0.0.1", 80)]:
    s = socket.socket(); s.settimeout(3); print(address[0], s.connect_ex(address))
"""
    lines = python(sandbox, code).splitlines()
    assert lines[0] == "loopback ping"
    # The host's own loopback server is not there (refused), and there is no route out.
    assert lines[1] == "127.0.0.1 111"
    assert lines[2:] == ["1.1.1.1 101", "10.0.0.1 101"]


def test_a_relay_carries_the_sandbox_to_one_host_address(
    make_sandbox: object, host_server: int, tmp_path: Path
) -> None:
    relay = UnixRelay(tmp_path / "proxy.sock", ("127.0.0.1", host_server))
    os.chmod(relay.path, 0o666)
    try:
        sandbox = make_sandbox([Relay("proxy", 8100, str(relay.path))])  # type: ignore[operator]
        code = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8100/').read().decode())"
        assert python(sandbox, code).strip() == "hello from the host"
    finally:
        relay.close()
    assert not relay.path.exists()


def test_names_are_refused_and_reported(make_sandbox: object) -> None:
    sandbox = make_sandbox()  # type: ignore[operator]
    events: list[dict[str, object]] = []
    result = sandbox.run(["getent", "hosts", "example.org"], timeout_s=30, on_event=events.append)
    assert result.exit_code != 0
    assert "example.org" in sandbox.refused
    assert {"event": "refused", "kind": "dns", "name": "example.org"} in events


def test_sockets_are_unix_and_ip_only(make_sandbox: object) -> None:
    sandbox = make_sandbox()  # type: ignore[operator]
    code = """
import errno, socket
for family in ("AF_NETLINK", "AF_PACKET", "AF_ALG"):
    try:
        socket.socket(getattr(socket, family), socket.SOCK_RAW if family != "AF_ALG" else socket.SOCK_SEQPACKET)
    except OSError as exc:
        print(family, errno.errorcode[exc.errno])
"""
    assert python(sandbox, code).split() == [
        "AF_NETLINK", "EAFNOSUPPORT", "AF_PACKET", "EAFNOSUPPORT", "AF_ALG", "EAFNOSUPPORT",
    ]  # fmt: skip


def test_the_sandbox_has_a_cgroup_bounding_memory_tasks_and_tcp_buffers(
    make_sandbox: object,
) -> None:
    limits = HarnessLimits(memory_mb=512, max_processes=64)
    sandbox = make_sandbox(limits=limits)  # type: ignore[operator]
    group = sandbox._live.group  # type: ignore[attr-defined]
    assert group is not None, "this machine makes cgroups (tests/security/README.md)"
    if group.version == 1:
        memory, pids = group.folders
        assert int((memory / "memory.limit_in_bytes").read_text()) == 512 << 20
        tcp = memory / "memory.kmem.tcp.limit_in_bytes"
        assert int(tcp.read_text()) == tcp_bytes(512 << 20)
    else:
        (folder,) = group.folders
        assert int((folder / "memory.max").read_text()) == 512 << 20
        pids = folder
    assert int((pids / "pids.max").read_text()) == 64
    result = sandbox.run([PY, "-c", "b = bytearray(1 << 30)"], timeout_s=60)
    assert result.exit_code in (-9, 137), result
    assert sandbox.alive


def test_what_a_command_leaves_running_is_killed_when_it_ends(make_sandbox: object) -> None:
    sandbox = make_sandbox()  # type: ignore[operator]
    first = sandbox.run(["/bin/sh", "-c", "sleep 300 & sleep 300 & echo started"], timeout_s=30)
    assert first.stdout.strip() == "started" and not first.timed_out
    listed = python(
        sandbox, "import os; print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    )
    pids = [int(p) for p in listed.strip().strip("[]").split(",")]
    assert len(pids) == 2 and pids[0] == 1  # the supervisor, and the listing itself


def test_a_command_past_its_time_is_killed(make_sandbox: object) -> None:
    sandbox = make_sandbox()  # type: ignore[operator]
    result = sandbox.run(["sleep", "60"], timeout_s=1)
    assert result.timed_out
    assert sandbox.run(["true"], timeout_s=10).exit_code == 0


def test_secrets_reach_the_command_but_no_command_line(make_sandbox: object) -> None:
    sandbox = make_sandbox()  # type: ignore[operator]
    secret = "cap-secret-" + os.urandom(8).hex()
    seen: list[str] = []

    def scan(event: dict[str, object]) -> None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                seen.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
            except OSError:
                continue

    code = "import os, time; print(os.environ['SESSION_KEY']); time.sleep(1)"
    output = python(sandbox, code, env={"SESSION_KEY": secret}, on_event=scan)
    assert output.strip() == secret
    assert seen and not any(secret in line for line in seen)


def test_the_sandbox_sees_none_of_the_server_and_cannot_end_its_supervisor(
    make_sandbox: object, tmp_path: Path
) -> None:
    (tmp_path / "server-secret.txt").write_text("not for the harness")
    sandbox = make_sandbox()  # type: ignore[operator]
    code = f"""
import os, signal
for path in ["{tmp_path}/server-secret.txt", "/root", "/etc/shadow", "/proc/1/environ"]:
    try:
        open(path).read(); print(path, "read")
    except OSError as exc:
        print(path, type(exc).__name__)
for path in ["/usr/x", "/etc/x", "/x", "/home/x"]:
    try:
        open(path, "w"); print(path, "written")
    except OSError as exc:
        print(path, type(exc).__name__)
os.kill(1, signal.SIGKILL)
print("uid", os.getuid())
"""
    lines = python(sandbox, code).splitlines()
    assert lines[:4] == [
        f"{tmp_path}/server-secret.txt FileNotFoundError",
        "/root FileNotFoundError",
        "/etc/shadow FileNotFoundError",
        "/proc/1/environ PermissionError",
    ]
    assert all(not line.endswith("written") for line in lines[4:8])
    assert lines[8] != "uid 0"
    assert sandbox.alive and sandbox.run(["true"], timeout_s=10).exit_code == 0
