"""The first process of a harness's sandbox: it carries the harness's only network, runs its
commands, and ends everything they left behind. Standard library only: it runs inside the
sandbox, started by :mod:`openenv_hub.harness.sandbox` as ``python3 -I -B supervisor.py``.

It speaks JSON lines with the server on its standard input and output (moved to private
descriptors; 0, 1 and 2 then point at ``/dev/null``):

- ``{"op": "init", "uid": ..., "relays": [{"port": P, "socket": PATH}], "dns": true,
  "limits": {...}}``: listen on ``127.0.0.1:P`` for each relay (each connection is carried to
  the Unix socket ``PATH``, which the server bound into the sandbox and which leads to the
  capture proxy or the tool bridge), answer DNS on ``127.0.0.1:53`` by refusing every name and
  reporting it, then take the sandbox's unprivileged user id (root mode), become undumpable (no
  process of the harness can open its descriptors through ``/proc``) and set the limits.
  Replies ``{"ready": true}``.
- ``{"op": "run", "id": N, "argv": [...], "env": {...}, "cwd": DIR, "timeout_s": T,
  "max_output_bytes": B}``: run a command (its variables, which may hold the session's key,
  travel here and never on a command line), sending ``{"id": N, "event": "output", "stream":
  ..., "text": ...}`` as it writes, then ``{"id": N, "done": true, "exit_code": ...,
  "timed_out": ...}`` once it ended and every other process of the sandbox was killed.

Refused names are sent as ``{"event": "refused", "kind": "dns", "name": ...}`` whenever they
happen. As the PID namespace's first process it cannot be killed from inside the sandbox.

Layer: client.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import threading
import time
from typing import Any

_LIMITS = {
    "max_open_files": resource.RLIMIT_NOFILE,
    "max_file_size_bytes": resource.RLIMIT_FSIZE,
}
_PR_SET_DUMPABLE = 4
_MAX_REPORTED_NAMES = 200
_MAX_RELAYED = 256  # connections open at once, per relay
_CHUNK = 65536
_DRAIN_S = 1.0  # output read after a command ended, from what it left running


class Channel:
    """The request/reply descriptors, moved away from 0/1/2; sends are whole lines."""

    def __init__(self) -> None:
        read_fd, self.write_fd = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        self.reader = os.fdopen(read_fd, "rb")
        self._lock = threading.Lock()

    def receive(self) -> dict[str, Any] | None:
        line = self.reader.readline()
        return json.loads(line) if line else None

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.write_fd, view) :]


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(_CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def _carry(client: socket.socket, path: str, slots: threading.BoundedSemaphore) -> None:
    try:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            upstream.close()
            return
        back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        upstream.close()
    finally:
        client.close()
        slots.release()


def _relay(listener: socket.socket, path: str) -> None:
    slots = threading.BoundedSemaphore(_MAX_RELAYED)
    while True:
        client, _ = listener.accept()
        if not slots.acquire(blocking=False):
            client.close()
            continue
        threading.Thread(target=_carry, args=(client, path, slots), daemon=True).start()


def _question_name(packet: bytes) -> str:
    labels: list[str] = []
    at = 12
    while at < len(packet) and packet[at] and len(labels) < 128:
        length = packet[at]
        labels.append(packet[at + 1 : at + 1 + length].decode("ascii", "replace"))
        at += 1 + length
    return ".".join(labels)


def _dns(listener: socket.socket, channel: Channel) -> None:
    """Refuse every name (RCODE 5), reporting the first few hundred."""
    reported = 0
    while True:
        packet, sender = listener.recvfrom(4096)
        if len(packet) < 12:
            continue
        if reported < _MAX_REPORTED_NAMES:
            reported += 1
            channel.send({"event": "refused", "kind": "dns", "name": _question_name(packet)})
        flags = 0x8000 | (packet[2] & 0x79) << 8 | 0x0005  # a response, opcode and RD kept
        reply = packet[:2] + flags.to_bytes(2, "big") + packet[4:6] + b"\0\0\0\0\0\0" + packet[12:]
        with contextlib.suppress(OSError):
            listener.sendto(reply, sender)


def initialize(request: dict[str, Any], channel: Channel) -> dict[str, Any]:
    listeners = []
    for relay in request.get("relays", []):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(relay["port"])))
        listener.listen(64)
        listeners.append((listener, str(relay["socket"])))
    dns = None
    if request.get("dns"):
        dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            dns.bind(("127.0.0.1", 53))
        except OSError:  # no privilege for port 53 (user namespaces): names fail unreported
            dns.close()
            dns = None
    uid = request.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    for name, which in _LIMITS.items():
        value = request.get("limits", {}).get(name)
        if value is not None:
            resource.setrlimit(which, (int(value), int(value)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for listener, path in listeners:
        threading.Thread(target=_relay, args=(listener, path), daemon=True).start()
    if dns is not None:
        threading.Thread(target=_dns, args=(dns, channel), daemon=True).start()
    return {"ready": True, "uid": os.getuid(), "dns": dns is not None}


def _end_everything_else() -> None:
    """Kill every process of the sandbox but this one (the PID namespace's first)."""
    for _ in range(50):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if not any(p.isdigit() and p != "1" for p in os.listdir("/proc")):
            return
        time.sleep(0.02)


def run(request: dict[str, Any], channel: Channel) -> dict[str, Any]:
    ident = request.get("id")
    deadline = time.monotonic() + float(request.get("timeout_s", 600))
    budget = int(request.get("max_output_bytes", 1 << 20))
    try:
        process = subprocess.Popen(
            [str(a) for a in request["argv"]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=request.get("cwd") or None,
            env={str(k): str(v) for k, v in request.get("env", {}).items()},
            start_new_session=True,
        )
    except OSError as exc:
        return {"id": ident, "done": True, "exit_code": 127, "timed_out": False, "error": str(exc)}
    selector = selectors.DefaultSelector()
    for name, stream in (("stdout", process.stdout), ("stderr", process.stderr)):
        assert stream is not None
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ, name)
    timed_out, truncated, open_streams, drained_by = False, False, 2, None
    while open_streams:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        if drained_by is None and process.poll() is not None:
            drained_by = time.monotonic() + _DRAIN_S  # what it started in the background
        if drained_by is not None and time.monotonic() > drained_by:
            break  # may still hold the pipes open
        for key, _ in selector.select(min(left, 1.0)):
            data = os.read(key.fd, _CHUNK)
            if not data:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            if budget > 0:
                text = data[:budget].decode("utf-8", "replace")
                channel.send({"id": ident, "event": "output", "stream": key.data, "text": text})
            truncated = truncated or len(data) > budget
            budget = max(budget - len(data), 0)
    if timed_out:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    try:
        code = process.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        timed_out = True
        process.kill()
        code = process.wait()
    selector.close()
    _end_everything_else()
    reply = {"id": ident, "done": True, "exit_code": code, "timed_out": timed_out}
    return {**reply, "output_truncated": truncated}


def main() -> None:
    channel = Channel()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    while True:
        request = channel.receive()
        if request is None:
            return
        op = request.get("op")
        try:
            if op == "init":
                channel.send({"id": request.get("id"), **initialize(request, channel)})
            elif op == "run":
                channel.send(run(request, channel))
            else:
                channel.send({"id": request.get("id"), "protocol_error": f"unknown op {op!r}"})
        except Exception as exc:  # the server hears of it; the sandbox goes on
            channel.send({"id": request.get("id"), "protocol_error": repr(exc)})


if __name__ == "__main__":
    main()
