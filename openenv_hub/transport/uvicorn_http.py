"""The HTTP protocol the servers of :mod:`openenv_hub.transport.uvicorn_serving` (and LocalHub) run under uvicorn:
uvicorn's ``httptools`` protocol, with a bound on each request's head (its request line and
headers) in size and in time.

uvicorn bounds neither: llhttp keeps a header however long it grows (a 100 MB header was read
whole, the server's memory growing by more than that while other requests waited), and a
connection that never finishes its headers is kept open for ever (200 such connections were all
still open after 90 s). With :class:`BoundedHeadsProtocol`:

- a head over ``max_header_bytes`` is answered 431 (Request Header Fields Too Large) and the
  connection closed, as soon as the bytes received say so: at most one read of the socket
  (256 KB) more than the bound is ever held;
- a head not complete ``header_timeout_s`` after the connection opened (or after its first byte,
  for the next request on a kept-alive connection) is answered 408 (Request Timeout) and the
  connection closed. Between requests, uvicorn's own keep-alive timeout closes an idle
  connection, as before.

Bodies are not concerned: the app bounds them (:mod:`openenv_hub.server.limits`), and a
WebSocket's frames are its protocol's (:mod:`openenv_hub.transport.uvicorn_websocket`).

Layer: core.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from openenv_hub.support.settings import header_timeout_s, max_header_size_kb

__all__ = ["BoundedHeadsProtocol"]

HEADER_TOO_LARGE: Final = 431
REQUEST_TIMEOUT: Final = 408


class BoundedHeadsProtocol(HttpToolsProtocol):
    """See the module's docstring. The size bound is uvicorn's ``h11_max_incomplete_event_size``
    (the same bound with uvicorn's own ``h11`` protocol), else ``$OPENENV_MAX_HEADER_SIZE_KB``
    or 64 KB; the time bound ``$OPENENV_HEADER_TIMEOUT_S``, else 20 s, read as each connection
    opens (uvicorn's settings must be picklable, for its reloader and workers: a class made for
    each bound would not be)."""

    def __init__(self, config: Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        configured = config.h11_max_incomplete_event_size
        self.max_header_bytes = configured or int(max_header_size_kb(None) * 1024)
        self.header_timeout_s = header_timeout_s(None)
        self.reading_head = True  # from the connection's start, or a request's first byte
        self.head_bytes = 0  # bytes received since then (an upper bound of the head's size)
        self.in_message = False  # between a request's first byte and its end
        self.begun = 0  # requests begun in the data being parsed
        self.head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        began_with_a_request = not self.in_message
        self.begun = 0
        super().data_received(data)
        if not self.reading_head or self.transport.is_closing():
            return
        if self.begun == 0:
            self.head_bytes += len(data)  # the head goes on
        elif self.begun == 1 and began_with_a_request:
            self.head_bytes = len(data)  # the head began with this data
        else:
            # The head began after another request's end in this data (pipelined): it is
            # counted from the next data on, so that the other request is not counted.
            self.head_bytes = 0
        if self.head_bytes > self.max_header_bytes:
            self._refuse(HEADER_TOO_LARGE, "Request header fields too large.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading_head, self.in_message = True, True
        self.begun += 1
        self._start_head_timer()

    def on_headers_complete(self) -> None:
        self.reading_head = False
        self._stop_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self.in_message = False
        super().on_message_complete()

    def _start_head_timer(self) -> None:
        if self.head_timer is None:
            self.head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_timed_out(self) -> None:
        self.head_timer = None
        if self.reading_head and not self.transport.is_closing():
            self._refuse(REQUEST_TIMEOUT, "Request headers not received in time.")

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with ``message`` and close, as uvicorn answers a request it cannot
        parse (400)."""
        self._stop_head_timer()
        self.reading_head = False
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()  # an answer to an earlier request is being written
            return
        body = message.encode("ascii")
        head = [STATUS_LINE[status]]
        head += [
            name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers
        ]
        head += [
            b"content-type: text/plain; charset=utf-8\r\n",
            b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
            b"connection: close\r\n\r\n",
        ]
        self.transport.write(b"".join(head) + body)
        self.transport.close()
