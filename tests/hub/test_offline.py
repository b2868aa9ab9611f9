"""The Hub tests talk to LocalHub on 127.0.0.1 and to nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hub_support import _REMOTE_CONNECTS, _record_remote_connects, unique_repo

from openenv_hub.errors import SpaceNotFoundError
from openenv_hub.hub import HubContext, push, versions
from openenv_hub.hub._client import resolve_endpoint
from openenv_hub.localhub import LocalHub
from openenv_hub.testing.pytest_plugin import HubEnv


def test_the_endpoint_in_use_is_local_hubs(
    hub_env: HubEnv, local_hub: LocalHub, echo_copy: Path
) -> None:
    import huggingface_hub.constants

    assert local_hub.endpoint == huggingface_hub.constants.ENDPOINT
    assert resolve_endpoint() == local_hub.endpoint
    assert HubContext.create().api.endpoint == local_hub.endpoint
    local_hub.clear_requests()
    repo_id = unique_repo(hub_env, "offline")
    push(echo_copy, repo_id, version="0.1.0", bundle_wheel=False)
    assert [v.name for v in versions(repo_id)] == ["0.1.0"]
    hosts = {entry["host"] for entry in local_hub.requests()}
    assert hosts == {f"127.0.0.1:{local_hub.port}"}


def test_an_explicit_endpoint_wins_over_hf_endpoint(
    hub_env: HubEnv, local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert resolve_endpoint() == "http://127.0.0.1:9"  # read at call time
    assert resolve_endpoint(local_hub.endpoint) == local_hub.endpoint
    with pytest.raises(SpaceNotFoundError) as info:
        versions("alice/none", endpoint=local_hub.endpoint)
    assert local_hub.endpoint in str(info.value)


def test_a_connection_elsewhere_would_be_caught() -> None:
    _record_remote_connects("socket.connect", (None, ("192.0.2.1", 9)))  # TEST-NET-1
    _record_remote_connects("socket.connect", (None, ("127.0.0.1", 9)))
    _record_remote_connects("socket.connect", (None, "/var/run/some.sock"))
    assert _REMOTE_CONNECTS == [("192.0.2.1", 9)]
    _REMOTE_CONNECTS.clear()
