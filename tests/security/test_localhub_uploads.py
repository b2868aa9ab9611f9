"""Bodies sent to LocalHub have a bound: a commit, a ``git push``, a request to a Space's app or
to any other route gets 413 beyond it, before LocalHub has read it whole; an upload under it
goes to disk as it arrives, so a big commit does not take LocalHub's memory."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError

from openenv_hub.localhub import LocalHub

REPO = Path(__file__).resolve().parents[2]
LIMIT_MB = 1
SEND_AT_MOST = 64 << 20


@pytest.fixture(scope="module")
def small_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """A LocalHub taking uploads of at most 1 MB; alice has a Space."""
    with LocalHub(data_dir=tmp_path_factory.mktemp("hub"), max_upload_mb=LIMIT_MB) as hub:
        api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
        api.create_repo("alice/space", repo_type="space", space_sdk="docker")
        yield hub


PATHS = [
    "/api/spaces/alice/space/commit/main",
    "/spaces/alice/space.git/git-receive-pack",
    "/_localhub/apps/alice/space/reset",
    "/api/repos/create",
]


def _request_head(hub: LocalHub, path: str, length: str | None) -> bytes:
    framing = f"Content-Length: {length}" if length else "Transfer-Encoding: chunked"
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\n"
        f"Authorization: Bearer {hub.token_for('alice')}\r\n"
        f"Content-Type: application/octet-stream\r\n{framing}\r\n\r\n"
    ).encode()


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize("path", PATHS)
def test_a_body_declared_over_the_limit_is_refused_unread(small_hub: LocalHub, path: str) -> None:
    """Threat: a client announces a huge body and LocalHub reads (and holds) it all."""
    with socket.create_connection(("127.0.0.1", small_hub.port), timeout=10) as sock:
        sock.sendall(_request_head(small_hub, path, str(50 << 30)) + b"x" * 1000)
        answer = sock.recv(65536)
    assert _status(answer) == 413
    assert b"over 1 MB" in answer


@pytest.mark.parametrize("path", PATHS[:2] + PATHS[3:])  # a running app's: in Docker tests
def test_a_chunked_body_is_cut_off_at_the_limit(small_hub: LocalHub, path: str) -> None:
    """Threat: a body without a declared size (chunked, as git sends big pushes) is read
    until it ends, however long that is."""
    sent, answer = send_chunked(small_hub.port, _request_head(small_hub, path, None))
    assert _status(answer) == 413, answer[:200]
    assert sent < SEND_AT_MOST // 2  # refused while the client was still sending


def send_chunked(port: int, head: bytes) -> tuple[int, bytes]:
    """Send ``head``, then body chunks until an answer comes (or 64 MB went); returns how many
    bytes of body were sent, and the answer's first bytes."""
    chunk = b"x" * 65536
    frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    answer: list[bytes] = []
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        reader = threading.Thread(target=lambda: answer.append(_recv(sock)), daemon=True)
        sock.sendall(head)
        reader.start()
        with contextlib.suppress(OSError):  # reset, once the server has answered and closed
            while sent < SEND_AT_MOST and reader.is_alive():
                sent += sock.send(frame)
        reader.join(timeout=30)
    return sent, answer[0] if answer else b""


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def test_the_client_is_told_which_limit_it_hit(small_hub: LocalHub) -> None:
    api = HfApi(endpoint=small_hub.endpoint, token=small_hub.token_for("alice"))
    with pytest.raises(HfHubHTTPError, match="413") as refused:
        api.upload_file(
            path_or_fileobj=os.urandom(2 << 20),
            path_in_repo="weights.bin",
            repo_id="alice/space",
            repo_type="space",
        )
    assert "max_upload_mb" in str(refused.value)


def _peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


@pytest.mark.slow
def test_a_big_commit_goes_to_disk_not_to_memory(tmp_path: Path) -> None:
    """Threat: each commit is held whole in memory (base64, then decoded), so a few big ones at
    once take the machine's memory (a 134 MB commit took LocalHub to 686 MB)."""
    command = [sys.executable, "-m", "openenv_hub.localhub", "--port", "0", "--no-spaces"]
    server = subprocess.Popen(
        [*command, "--data", str(tmp_path / "data")], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        lines = [server.stdout.readline() for _ in range(8)]
        endpoint = lines[0].split()[-1]
        (alice,) = [line.split()[0] for line in lines if " alice (write" in line]
        api = HfApi(endpoint=endpoint, token=alice)
        api.create_repo("alice/weights", repo_type="space", space_sdk="docker")
        before = _peak_rss_mb(server.pid)
        content = os.urandom(96 << 20)
        api.upload_file(
            path_or_fileobj=content, path_in_repo="weights.bin", repo_id="alice/weights",
            repo_type="space",
        )  # fmt: skip
        grown = _peak_rss_mb(server.pid) - before
        (entry,) = api.get_paths_info("alice/weights", ["weights.bin"], repo_type="space")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        if server.stdout is not None:
            server.stdout.close()
    blob_id = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
    assert (entry.size, entry.blob_id) == (len(content), blob_id)
    assert grown < 32, f"LocalHub's memory grew by {grown:.0f} MB for a 96 MB commit"
