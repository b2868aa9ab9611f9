"""The UI is mounted by ``web=True`` or ``ENABLE_WEB_INTERFACE``, at ``/web`` beside ``/ws``."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from ui_envs import TypedEchoAction, TypedEchoEnvironment

from openenv_hub import create_app


def paths(app) -> set[str]:
    return {getattr(route, "path", "") for route in app.routes}


@pytest.mark.parametrize(
    ("setting", "web", "mounted"),
    [
        ("true", None, True),
        ("1", None, True),
        ("", None, False),
        ("false", None, False),
        ("false", True, True),
        ("true", False, False),
    ],
)
def test_the_switches(monkeypatch, setting, web, mounted):
    monkeypatch.setenv("ENABLE_WEB_INTERFACE", setting)
    app = create_app(TypedEchoEnvironment, TypedEchoAction, web=web)
    assert ("/web" in paths(app)) is mounted
    assert {"/", "/ws", "/mcp"} <= paths(app)
    root = TestClient(app).get("/", follow_redirects=False)
    if mounted:  # the redirect to /web/
        assert root.is_redirect and root.headers["location"].endswith("/web/")
    else:  # where things are, and how to turn the UI on
        assert root.status_code == 200 and root.json()["web"].startswith("off: start the server")
