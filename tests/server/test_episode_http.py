"""``POST /reset`` and ``/step`` are answered before FastAPI's router (EpisodeDispatch), and
alike whichever way a request goes: the requests the dispatcher passes on (an app under a ``root_path``) reach the routes,
which answer with the same function."""

from __future__ import annotations

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
async def test_a_stateless_call_skips_the_router(
    served: tuple[Any, CountedRouter], path: str, body: dict[str, Any]
) -> None:
    app, router = served
    async with client(app) as http:
        (await http.post(path, json=body)).raise_for_status()  # threads and caches started
        replies = [await http.post(path, json=body) for _ in range(5)]
        assert [reply.status_code for reply in replies] == [200] * 5
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
