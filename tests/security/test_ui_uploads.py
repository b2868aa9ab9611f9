"""Threat: anyone who can open the web UI fills the server's disk and memory through gradio's
upload route, which the UI does not even use (its forms have no file inputs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from openenv_hub import CallToolAction, CallToolObservation, create_app
from openenv_hub.ui import MAX_UPLOAD_BYTES


def test_uploads_over_the_limit_are_refused(serve: Callable[..., Any]) -> None:
    from echo_env.server.environment import EchoEnvironment

    app = create_app(
        EchoEnvironment, CallToolAction, CallToolObservation, env_name="echo_env", web=True
    )
    url = f"{serve(app).url}/web/gradio_api/upload"
    big = {"files": ("big.bin", b"\0" * (MAX_UPLOAD_BYTES * 5), "application/octet-stream")}
    refused = httpx.post(url, files=big, timeout=60)
    assert refused.status_code == 413, refused.text
    small = {"files": ("small.txt", b"fine", "text/plain")}
    assert httpx.post(url, files=small, timeout=60).status_code == 200
    assert MAX_UPLOAD_BYTES <= 1024 * 1024
