"""The server's end of a sandbox's way out: a Unix socket whose connections are carried to one
TCP address of the server (the capture proxy on 127.0.0.1).

The socket is made in a folder only the server can enter, handed to the sandbox's user (root
mode) and bound into that one sandbox; nothing else on the machine reaches it. A relay carries
at most ``max_connections`` connections at once (more are closed at once), each one byte stream
both ways, and nothing else: it reads no request and adds nothing.

Layer: client.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path

__all__ = ["UnixRelay"]

_CHUNK = 65536


class UnixRelay:
    """Carries connections made to the Unix socket ``path`` to ``target`` (host, port).

    Args:
        path: Where the socket is made (its folder must exist and be the server's own).
        target: The TCP address each connection is carried to.
        owner: The user id that may connect (the sandbox's, in root mode); None: this
            process's user.
        max_connections: Connections carried at once.
    """

    def __init__(
        self,
        path: Path,
        target: tuple[str, int],
        *,
        owner: int | None = None,
        max_connections: int = 64,
    ) -> None:
        self.path = Path(path)
        self.target = target
        self._slots = threading.BoundedSemaphore(max_connections)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        if owner is not None:
            os.chown(self.path, owner, owner)
        self._listener.listen(64)
        self._closed = False
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="harness-relay")
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                client.close()
                continue
            threading.Thread(target=self._carry, args=(client,), daemon=True).start()

    def _carry(self, client: socket.socket) -> None:
        upstream = None
        try:
            upstream = socket.create_connection(self.target, timeout=10)
            upstream.settimeout(None)
            with self._lock:
                self._open |= {client, upstream}
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()
        except OSError:
            pass
        finally:
            for end in (client, upstream):
                if end is not None:
                    end.close()
            with self._lock:
                self._open -= {client, upstream}
            self._slots.release()

    def close(self) -> None:
        """Stop accepting, end the connections being carried, remove the socket."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            ends = list(self._open)
        for end in ends:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
        self.path.unlink(missing_ok=True)


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
