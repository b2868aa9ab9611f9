"""``POST /reset`` and ``/step`` are answered before FastAPI's router (EpisodeDispatch), with no
task per stateless call that answers within WATCH_AFTER_S, and alike whichever way a request
goes: the requests the dispatcher passes on (an app under a ``root_path``) reach the routes,
which answer with the same function."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sample_envs import Echoed, Message, Typed
from starlette.types import ASGIApp, Receive, Scope, Send

from openenv_hub import create_app


class CountedRouter:
    """An ASGI app in front of the router's own stack, counting the requests that reach it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


class CountedTasks:
    """The running loop's task factory, counting the tasks created."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.count = 0
        loop.set_task_factory(self)

    def __call__(self, loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> Any:
        self.count += 1
        return asyncio.Task(coro, loop=loop, **options)


@pytest.fixture
async def served() -> AsyncIterator[tuple[Any, CountedRouter]]:
    app = create_app(Typed, Message, Echoed)
    router = CountedRouter(app.router.middleware_stack)
    app.router.middleware_stack = router
    async with app.router.lifespan_context(app):
        yield app, router


def client(app: Any, root_path: str = "") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, root_path=root_path)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@pytest.mark.parametrize(
    ("path", "body"), [("/step", {"action": {"message": "hi"}}), ("/reset", {"seed": 1})]
)
async def test_a_stateless_call_skips_the_router_and_creates_no_task(
    served: tuple[Any, CountedRouter], path: str, body: dict[str, Any]
) -> None:
    app, router = served
    async with client(app) as http:
        (await http.post(path, json=body)).raise_for_status()  # threads and caches started
        tasks = CountedTasks(asyncio.get_running_loop())
        replies = [await http.post(path, json=body) for _ in range(5)]
        assert [reply.status_code for reply in replies] == [200] * 5
        assert tasks.count == 0
        assert (await http.get("/health")).status_code == 200
    assert router.paths == ["/health"]


@pytest.mark.parametrize(
    ("path", "body", "headers"),
    [
        ("/step", {"action": {"message": "hi"}}, {}),
        ("/step", {"action": {"message": 5}}, {}),  # the action does not validate
        ("/step", {"action": "hi"}, {}),  # the body does not
        ("/step", None, {}),  # no body
        ("/reset", {"seed": -1}, {}),
        ("/step", {"action": {"message": "x", "fail": True}}, {}),  # the environment raises
        ("/step", {"action": {"message": "hi"}}, {"X-OpenEnv-Session": "no-such-session"}),
    ],
)
async def test_the_dispatcher_and_the_routes_answer_alike(
    served: tuple[Any, CountedRouter],
    path: str,
    body: dict[str, Any] | None,
    headers: dict[str, str],
) -> None:
    app, router = served
    answers = []
    for root_path in ("", "/api"):  # under a root_path, the request goes to the router
        async with client(app, root_path) as http:
            reply = await http.post(path, json=body, headers=headers)
        content = reply.json()
        if isinstance(content.get("observation"), dict):
            content["observation"].pop("episode_id", None)
        answers.append((reply.status_code, content, reply.headers["content-type"]))
    assert answers[0] == answers[1]
    assert router.paths == [path]


async def test_a_client_that_leaves_during_a_long_stateless_call_is_noticed(
    served: tuple[Any, CountedRouter],
) -> None:
    app, _ = served
    body = b'{"action": {"message": "x", "delay_s": 2.0}}'
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/step", "raw_path": b"/step", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
    }  # fmt: skip
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.sleep(0.2)  # the client leaves while the step runs
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    loop = asyncio.get_running_loop()
    started = loop.time()
    request = asyncio.create_task(app(scope, receive, send))  # the request's task, as uvicorn's
    with pytest.raises(asyncio.CancelledError):
        await request
    assert loop.time() - started < 1.5  # the step itself runs 2 s
    assert sent == []
