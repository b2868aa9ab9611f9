"""``uvicorn_options``: WebSocket frames bounded as the app bounds HTTP bodies, one setting for
both, wherever the app is served from (serve_app, ``openenv serve``, Ray replicas)."""

from __future__ import annotations

import pytest
from sample_envs import Echoed, Message, Typed

from openenv_hub import create_app
from openenv_hub.serving import uvicorn_options

MB = 1024 * 1024


def test_frames_follow_the_apps_body_limit_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENENV_MAX_MESSAGE_SIZE_MB", raising=False)
    app = create_app(Typed, Message, Echoed, max_message_size_mb=2)
    assert uvicorn_options(app=app)["ws_max_size"] == 2 * MB
    assert uvicorn_options(app=app, max_message_size_mb=3)["ws_max_size"] == 3 * MB
    assert uvicorn_options(app="pkg.server.app:app")["ws_max_size"] == 16 * MB
    assert uvicorn_options()["ws_max_size"] == 16 * MB
