"""Fewer animation frames for gradio's elapsed-time counters.

gradio's status tracker counts the seconds an event has been running by asking for an animation
frame, sixty times a second, while its status is pending, and shows the count to a tenth of a
second. A tracker removed while pending (the app's own loading tracker is, on every page) asks
for ever: an idle page drew sixty frames a second, about 6% of a core of the browser, which on
the server's machine slows the server's clients (a page watching a session is such a page).
:data:`FRAMES_SCRIPT` gives those counters a frame every :data:`COUNTER_FRAME_MS` instead (all
they show) and leaves every other animation frame as it is. gradio keeps the browser's
``requestAnimationFrame`` when its scripts load, so :class:`FramesFirst` puts the script at the
top of the UI page's ``<head>``, before them.

Layer: ui.
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["COUNTER_FRAME_MS", "FRAMES_SCRIPT", "FramesFirst"]

COUNTER_FRAME_MS = 100

FRAMES_SCRIPT = """<script>
(() => {
  const frame = window.requestAnimationFrame.bind(window);
  const cancel = window.cancelAnimationFrame.bind(window);
  const later = new Map();
  let next = -1;
  const counter = (callback) => {
    const text = Function.prototype.toString.call(callback);
    return text.length < 120 && text.includes("performance.now()") && text.includes("/1e3");
  };
  window.requestAnimationFrame = (callback) => {
    if (!counter(callback)) return frame(callback);
    const id = next--;
    later.set(id, setTimeout(() => { later.delete(id); frame(callback); }, COUNTER_FRAME_MS));
    return id;
  };
  window.cancelAnimationFrame = (id) => {
    if (later.has(id)) { clearTimeout(later.get(id)); later.delete(id); } else cancel(id);
  };
})();
</script>""".replace("COUNTER_FRAME_MS", str(COUNTER_FRAME_MS))


class FramesFirst:
    """ASGI middleware of the UI's app: :data:`FRAMES_SCRIPT` first in the ``<head>`` of its
    page (``GET /``); every other answer passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or _route_path(scope) not in ("", "/")
        ):
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def first_script(message: Message) -> None:
            if message["type"] == "http.response.start" or held:
                held.append(message)
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    for each in _with_script(held):
                        await send(each)
                return
            await send(message)

        await self.app(scope, receive, first_script)


def _route_path(scope: Scope) -> str:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if path.startswith(root) else path


def _with_script(messages: list[Message]) -> list[Message]:
    """The held answer, its HTML with the script after ``<head>`` (other answers as they were)."""
    start, bodies = messages[0], messages[1:]
    headers = MutableHeaders(raw=list(start["headers"]))
    body = b"".join(message.get("body", b"") for message in bodies)
    html_page = headers.get("content-type", "").startswith("text/html")
    if not html_page or "content-encoding" in headers or b"<head>" not in body:
        return messages
    body = body.replace(b"<head>", b"<head>" + FRAMES_SCRIPT.encode(), 1)
    headers["content-length"] = str(len(body))
    started: dict[str, Any] = {**start, "headers": headers.raw}
    return [started, {"type": "http.response.body", "body": body}]
