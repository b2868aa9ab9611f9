"""``uvicorn_options``: WebSocket frames bounded as the app bounds HTTP bodies, one setting for
both, wherever the app is served from (serve_app, ``openenv serve``, Ray replicas)."""

from __future__ import annotations

import pickle

import pytest
from sample_envs import Echoed, Message, Typed

from openenv_hub import create_app
from openenv_hub.transport.uvicorn_serving import uvicorn_options

MB = 1024 * 1024


def test_frames_follow_the_apps_body_limit_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENENV_MAX_MESSAGE_SIZE_MB", raising=False)
    app = create_app(Typed, Message, Echoed, max_message_size_mb=2)
    assert uvicorn_options(app=app)["ws_max_size"] == 2 * MB
    assert uvicorn_options(app=app, max_message_size_mb=3)["ws_max_size"] == 3 * MB
    assert uvicorn_options(app="pkg.server.app:app")["ws_max_size"] == 16 * MB
    assert uvicorn_options()["ws_max_size"] == 16 * MB


def test_request_heads_are_bounded_and_forwarded_clients_are_the_apps_to_trust(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openenv_hub.errors import ConfigurationError
    from openenv_hub.transport.uvicorn_http import BoundedHeadsProtocol

    options = uvicorn_options(app="pkg.server.app:app")
    assert options["http"] is BoundedHeadsProtocol
    assert options["h11_max_incomplete_event_size"] == 64 * 1024
    assert options["proxy_headers"] is False  # create_app(trusted_proxies=...) decides
    assert pickle.loads(pickle.dumps(options)) == options  # --reload and workers pickle them
    assert uvicorn_options(max_header_size_kb=8)["h11_max_incomplete_event_size"] == 8 * 1024
    monkeypatch.setenv("OPENENV_HEADER_TIMEOUT_S", "soon")
    with pytest.raises(ConfigurationError) as wrong:
        uvicorn_options()
    assert "OPENENV_HEADER_TIMEOUT_S" in str(wrong.value)
