"""``EnvClient.from_hub(..., local=True)`` end to end against LocalHub.

The environment is installed into a throwaway virtual environment (``python=``), whose python
also runs the server, so the test interpreter is never changed. Marked slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from echo_env import CallToolAction, EchoEnv
from hub_support import OFFLINE_PIP, Venv, unique_repo

from openenv_hub.discovery import list_environments
from openenv_hub.errors import RemoteCodeNotTrustedError
from openenv_hub.hub import install, push
from openenv_hub.testing.pytest_plugin import HubEnv

pytestmark = pytest.mark.slow


def _git_requests(hub_env: HubEnv, repo_id: str) -> list[str]:
    return [r["path"] for r in hub_env.hub.requests() if r["path"].startswith(f"/spaces/{repo_id}")]


async def test_from_hub_local_installs_serves_and_stops(
    hub_env: HubEnv, hub_venv: Venv, echo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in OFFLINE_PIP.items():
        monkeypatch.setenv(key, value)
    repo_id, decoy = unique_repo(hub_env, "local"), unique_repo(hub_env, "decoy")
    push(echo_copy, decoy, version="0.1.0", bundle_wheel=False)
    install(decoy, "0.1.0", yes=True, python=hub_venv.python)  # same name and version, elsewhere
    push(echo_copy, repo_id, version="0.1.0", bundle_wheel=False)
    (echo_copy / "LATER.md").write_text("x\n", encoding="utf-8")
    push(echo_copy, repo_id, bundle_wheel=False)  # main moves on; 0.1.0 stays
    with pytest.raises(RemoteCodeNotTrustedError):
        EchoEnv.from_hub(repo_id, revision="0.1.0", local=True, python=str(hub_venv.python))

    hub_env.hub.clear_requests()
    env = EchoEnv.from_hub(
        repo_id, revision="0.1.0", local=True, trust_remote_code=True, python=str(hub_venv.python)
    )
    assert _git_requests(hub_env, repo_id)  # pip cloned it, although 0.1.0 was installed
    (installed,) = [e for e in list_environments(python=hub_venv.python) if e.name == "echo_env"]
    assert installed.source_url == f"{hub_env.endpoint}/spaces/{repo_id}"
    provider = env.provider
    assert provider is not None and env.base_url.startswith("http://127.0.0.1:")
    async with env:
        await env.reset()
        result = await env.step(
            CallToolAction(tool_name="echo_message", arguments={"message": "Hi"})
        )
        assert result.observation.result["data"] == "Hi"
    assert not provider.running()

    hub_env.hub.clear_requests()
    with EchoEnv.from_hub(
        repo_id, revision="0.1.0", local=True, trust_remote_code=True, python=str(hub_venv.python)
    ).sync() as sync_env:
        sync_env.reset()
        assert sync_env.call_tool("echo_with_length", message="Hi") == {
            "message": "Hi",
            "length": 2,
        }
    assert _git_requests(hub_env, repo_id) == []  # the install of that commit was reused
