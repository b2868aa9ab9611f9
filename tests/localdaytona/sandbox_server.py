"""A server to run inside a sandbox (its own ``python3``, standard library only) on port 8000:
it answers any HTTP request with what it received (path and headers, as JSON), and a WebSocket
handshake by sending that first and then echoing each text message back. The preview tests read
from it what the proxy passed on."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _exactly(conn: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _send(conn: socket.socket, payload: bytes) -> None:
    size = len(payload)
    head = bytes([0x81, size]) if size < 126 else bytes([0x81, 126]) + struct.pack("!H", size)
    conn.sendall(head + payload)


def _receive(conn: socket.socket) -> bytes | None:
    head = _exactly(conn, 2)
    if head is None or head[0] & 0x0F == 8:  # closed, or a close frame
        return None
    size = head[1] & 0x7F
    if size == 126:
        size = struct.unpack("!H", _exactly(conn, 2) or b"\0\0")[0]
    mask = _exactly(conn, 4) or b"\0\0\0\0"
    data = _exactly(conn, size) or b""
    return bytes(byte ^ mask[i % 4] for i, byte in enumerate(data))


def _serve(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    lines = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers = dict((k.strip().lower(), v.strip()) for k, v in (x.split(":", 1) for x in lines[1:]))
    seen = json.dumps({"path": lines[0].split()[1], "headers": headers}).encode()
    if headers.get("upgrade", "").lower() != "websocket":
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(seen)}\r\n\r\n".encode()
            + seen
        )
        conn.close()
        return
    accept = base64.b64encode(
        hashlib.sha1((headers["sec-websocket-key"] + _GUID).encode()).digest()
    )
    conn.sendall(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + b"Sec-WebSocket-Accept: "
        + accept
        + b"\r\n\r\n"
    )
    _send(conn, seen)
    while True:
        message = _receive(conn)
        if message is None:
            conn.close()
            return
        _send(conn, message)


def main() -> None:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 8000))
    listener.listen()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
