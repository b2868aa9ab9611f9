"""The UI is mounted by ``web=True`` or ``ENABLE_WEB_INTERFACE``, at ``/web`` beside ``/ws``."""

from __future__ import annotations

import pytest
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
    assert ("/" in paths(app)) is mounted  # the redirect to /web/
    assert {"/ws", "/mcp"} <= paths(app)
