"""A WebSocket's frames without ASGI's messages: what the ``/ws`` endpoint and the transport of
:mod:`openenv_hub.transport.uvicorn_websocket` agree on.

Under ASGI every frame a client sends is a message the endpoint awaits (``receive()`` through
the server's queue and starlette's socket) and every reply one it sends through the same layers.
With thousands of sessions stepping at once each of those layers' objects, per connection, is
touched once a step and is cold by then, and that, more than the work itself, is what a step
costs at that scale. So a server whose WebSocket transport offers this extension in the
connection's scope (``scope["extensions"][EXTENSION]``, a dict with ``"take"`` and
``"channel"``) lets the endpoint take the frames itself once the handshake is done: after
``take(listener)`` each message calls ``listener.message`` at once (those that came before
first), and a reply is written by ``channel.send_text`` (a :class:`FrameChannel`), in the order
called. Servers without it (``uvicorn
app:app`` with its own protocols, or any other ASGI server) keep the ASGI path.

Layer: core.
"""

from __future__ import annotations

from typing import Final, Protocol

__all__ = ["EXTENSION", "FrameChannel", "FrameListener"]

EXTENSION: Final = "openenv_hub.model.image_fields"


class FrameListener(Protocol):
    """Who takes a connection's messages (called on the event loop, in the order they came)."""

    def message(self, data: str | bytes) -> bool:
        """A whole message: ``str`` for a text one, ``bytes`` for a binary one. ``False``: hold
        the messages after it until :meth:`FrameChannel.resume_reading` is called."""

    def closed(self, code: int) -> None:
        """The connection is over (the client closed it, or it was lost): called once."""

    def writing_paused(self, paused: bool) -> None:
        """The client reads replies more slowly than they are written (``True``: answer no
        more for now), or has caught up (``False``)."""


class FrameChannel(Protocol):
    """Where replies go once the frames were taken."""

    def send_text(self, payload: bytes) -> None:
        """Send ``payload`` (UTF-8) as one text message now; nothing once the socket closed."""

    def resume_reading(self) -> None:
        """Hand over the messages held since a :meth:`FrameListener.message` said ``False``."""
