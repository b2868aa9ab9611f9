"""LocalHub's app proxy (``/_localhub/apps/NS/NAME/...``) checks read access as its API does,
before it looks for the app: a private Space's app, its stage included, is nobody else's.

The same checks against apps that really run, in Docker, are in test_localhub_running_spaces.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from openenv_hub.localhub import LocalHub


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[LocalHub]:
    """A LocalHub whose alice has a private Space (not running: no Space runtime)."""
    with LocalHub(data_dir=tmp_path) as hub:
        alice = {"authorization": f"Bearer {hub.token_for('alice')}"}
        body = {"name": "private-app", "type": "space", "sdk": "docker", "private": True}
        assert httpx.post(f"{hub.endpoint}/api/repos/create", json=body, headers=alice).is_success
        hub.set_space_runtime("alice/private-app", stage="RUNTIME_ERROR", error_message="no game")
        yield hub


def _get(hub: LocalHub, path: str, caller: str | None) -> httpx.Response:
    headers = {"authorization": f"Bearer {hub.token_for(caller)}"} if caller else {}
    return httpx.post(f"{hub.endpoint}/_localhub/apps/{path}", headers=headers, timeout=10)


@pytest.mark.parametrize("caller", [None, "bob"])
def test_a_private_app_looks_missing_to_others(hub: LocalHub, caller: str | None) -> None:
    """Threat: anyone calls a private Space's app (``/reset``, its data), and the 503 text
    tells others that the private Space exists and what stage it is in."""
    private = _get(hub, "alice/private-app/reset", caller)
    missing = _get(hub, "alice/no-such-app/reset", caller)
    assert private.status_code == missing.status_code == 404
    assert private.headers["x-error-code"] == missing.headers["x-error-code"] == "RepoNotFound"
    assert private.json()["error"].replace("private-app", "X") == missing.json()["error"].replace(
        "no-such-app", "X"
    )
    assert "RUNTIME_ERROR" not in private.text and "stage" not in private.text


def test_the_owner_gets_past_the_check(hub: LocalHub) -> None:
    seen = _get(hub, "alice/private-app/reset", "alice")
    assert seen.status_code == 503  # the runtime is off: nothing runs the app here
    basic = httpx.post(
        f"{hub.endpoint}/_localhub/apps/alice/private-app/reset",
        auth=("alice", hub.token_for("alice")),
        timeout=10,
    )
    assert basic.status_code == 503


@pytest.mark.parametrize("caller", [None, "bob"])
def test_a_private_apps_websocket_is_refused_to_others(hub: LocalHub, caller: str | None) -> None:
    """Threat: a WebSocket session with a private Space's app opened by anyone."""
    url = hub.endpoint.replace("http", "ws", 1) + "/_localhub/apps/alice/private-app/ws"
    headers = {"authorization": f"Bearer {hub.token_for(caller)}"} if caller else None
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers=headers, open_timeout=10).close()
    assert refused.value.response.status_code == 404
