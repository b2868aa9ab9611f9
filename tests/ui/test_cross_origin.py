"""Pages of other origins against a local server, in Debian's chromium: a page served on
another port cannot open ``/ws`` or call ``/mcp`` (and the server never ran what it sent), nor
show the UI in a frame; a page of the server itself can, and a DNS-rebinding name pointed at
127.0.0.1 is refused."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route
from ui.conftest import CHROMIUM, CHROMIUM_ARGS
from ui.ui_envs import TypedEchoAction, TypedEchoEnvironment, TypedEchoObservation

from openenv_hub import MCPEnvironment, create_app, tool

pytestmark = pytest.mark.browser

# Opens /ws and sends a tool call over it, then POSTs the same call to /mcp twice: as a CORS
# request (the page would read the answer) and blind (mode "no-cors": the page cannot read it,
# but the request is sent all the same).
ATTEMPT = """
async ({target, kind}) => {
  const call = {jsonrpc: "2.0", method: "tools/call", params: {name: "record"}, id: 1};
  const socket = await new Promise((resolve) => {
    const ws = new WebSocket(target.replace("http://", "ws://") + "/ws");
    ws.onopen = () => ws.send(JSON.stringify({type: "mcp", data: call}));
    ws.onmessage = (event) => { resolve("answered " + event.data); ws.close(); };
    ws.onerror = () => resolve("error");
    ws.onclose = (event) => resolve("closed " + event.code);
  });
  const post = async (mode) => {
    try {
      const reply = await fetch(target + "/mcp", {
        method: "POST", mode, body: JSON.stringify(call), headers: {"content-type": kind},
      });
      return "status " + reply.status;
    } catch (error) {
      return "failed: " + error;
    }
  };
  return {socket, fetched: await post("cors"), blind: await post("no-cors")};
}
"""


class Recorder(MCPEnvironment):
    """A tool that counts its calls, and a count of the environments made."""

    calls = 0
    created = 0

    def __init__(self) -> None:
        type(self).created += 1
        super().__init__()

    @tool
    def record(self) -> int:
        type(self).calls += 1
        return type(self).calls


@pytest.fixture
def local_server(serve: Any) -> Any:
    Recorder.calls = Recorder.created = 0
    return serve(create_app(Recorder))


@pytest.fixture
def other_site(serve: Any) -> Any:
    """A second local server, on another port: the page a user happens to have open."""

    async def page(request: Any) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>Another site</title><p>Hello</p>")

    return serve(Starlette(routes=[Route("/", page)]))


def test_a_page_of_another_origin_cannot_drive_the_server(
    local_server: Any, other_site: Any, new_page: Any
) -> None:
    page = new_page()
    port = other_site.base_url.rsplit(":", 1)[1]
    page.goto(f"http://localhost:{port}/")  # as in the report: http://localhost:3000
    seen = page.evaluate(ATTEMPT, {"target": local_server.base_url, "kind": "text/plain"})
    assert seen["socket"] in ("error", "closed 1006"), seen
    assert seen["fetched"].startswith("failed: TypeError"), seen
    assert seen["blind"] == "status 0", seen  # sent, its answer hidden from the page
    # What the browser hides is not the test: the server never made an environment, so no
    # session was opened and no tool ran.
    assert Recorder.created == 0 and Recorder.calls == 0
    assert local_server.pool.active_sessions == 0


def test_a_page_of_the_server_itself_can(local_server: Any, new_page: Any) -> None:
    page = new_page()
    page.goto(f"{local_server.base_url}/health")
    seen = page.evaluate(ATTEMPT, {"target": local_server.base_url, "kind": "application/json"})
    assert seen["socket"].startswith("answered"), seen
    assert '"data":1' in seen["socket"], seen
    assert seen["fetched"] == "status 200", seen
    assert Recorder.calls == 2  # the socket's and the CORS request's; no-cors cannot send JSON


def test_a_name_rebound_to_loopback_is_refused(browser: Any, local_server: Any) -> None:
    """A DNS-rebinding page: its own name, resolved to 127.0.0.1, reaches the local port."""
    rebinding = browser.browser_type.launch(
        executable_path=str(CHROMIUM),
        headless=True,
        args=[
            *CHROMIUM_ARGS,
            "--no-proxy-server",
            "--host-resolver-rules=MAP rebound.test 127.0.0.1",
        ],
    )
    try:
        page = rebinding.new_page()
        port = local_server.base_url.rsplit(":", 1)[1]
        refused = page.goto(f"http://rebound.test:{port}/health")
        assert refused is not None and refused.status == 403
        assert "HOST_NOT_ALLOWED" in page.content()
        served = page.goto(f"http://localhost:{port}/health")
        assert served is not None and served.status == 200
    finally:
        rebinding.close()
    assert Recorder.created == 0


FRAME_THE_UI = """
async (url) => {
  const frame = document.createElement("iframe");
  frame.src = url;
  frame.style = "width: 1000px; height: 700px";
  const loaded = new Promise((resolve) => { frame.onload = resolve; });
  document.body.append(frame);
  await loaded;
}
"""


def test_a_page_of_another_site_cannot_show_the_ui_in_a_frame(
    serve: Any, other_site: Any, new_page: Any
) -> None:
    """Threat: another site shows the UI in a frame (invisible, or under a decoy) and has its
    user click in it: reset, step, read what the Sessions tab shows."""
    app = create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True)
    server = serve(app)
    own = new_page()
    own.goto(f"{server.base_url}/health")  # a page of the server itself may
    own.evaluate(FRAME_THE_UI, server.web_url)
    (framed,) = own.frames[1:]
    framed.locator("gradio-app").wait_for(state="attached", timeout=30_000)
    page = new_page()
    page.goto(f"{other_site.base_url}/")
    page.evaluate(FRAME_THE_UI, server.web_url)
    (refused,) = page.frames[1:]
    assert refused.url.startswith("chrome-error://"), refused.url
    assert refused.locator("gradio-app").count() == 0
