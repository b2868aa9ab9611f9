"""``EnvClient.from_folder``: an environment folder served by this interpreter or by uv."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

import pytest
from echo_env import CallToolAction, EchoEnv
from runtime_support import ECHO_ENV
from sample_envs import slow_echo

from openenv_hub.errors import ConfigurationError, ServerStartError
from openenv_hub.runtimes import cleanup
from openenv_hub.runtimes.local import LocalProcessProvider
from openenv_hub.runtimes.uv import UvProvider, cache_root
from openenv_hub.support.progress import ProgressEvent, listening


async def test_local_folder_async_and_sync() -> None:
    async with EchoEnv.from_folder(ECHO_ENV) as env:
        assert isinstance(env.provider, LocalProcessProvider) and env.provider.runtime == "local"
        assert env.provider in cleanup.running()
        await env.reset()
        result = await env.step(
            CallToolAction(tool_name="echo_message", arguments={"message": "a"})
        )
        assert result.observation.result["data"] == "a"
    assert env.provider not in cleanup.running() and not env.provider.running()
    with EchoEnv.from_folder(ECHO_ENV, runtime="local").sync() as sync_env:
        assert sync_env.call_tool("echo_with_length", message="ab") == {
            "message": "ab",
            "length": 2,
        }


def test_bad_folder_and_options_are_named() -> None:
    with pytest.raises(ConfigurationError, match=r"no openenv\.yaml"):
        EchoEnv.from_folder(ECHO_ENV.parent)
    with pytest.raises(ConfigurationError, match="Unknown runtime 'podman'"):
        EchoEnv.from_folder(ECHO_ENV, runtime="podman")
    with pytest.raises(ConfigurationError, match="does not take replicas"):
        EchoEnv.from_folder(ECHO_ENV, runtime="uv", replicas=2)


def test_a_server_that_fails_to_import_names_the_runtime_and_its_log(tmp_path: Path) -> None:
    broken = tmp_path / "echo_env"
    shutil.copytree(ECHO_ENV, broken, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    app = broken / "echo_env" / "server" / "app.py"
    app.write_text("raise RuntimeError('the app cannot start: no model file')\n")
    with pytest.raises(ServerStartError) as info:
        EchoEnv.from_folder(broken, startup_timeout_s=60).sync()
    assert info.value.runtime == "local" and "uvicorn echo_env.server.app:app" in info.value.command
    assert "the app cannot start: no model file" in info.value.logs


def test_a_slow_start_is_reported_as_a_wait_for_health(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    events: list[ProgressEvent] = []
    with listening(events.append), EchoEnv.from_folder(slow_echo(tmp_path, 1.5)).sync() as env:
        assert env.call_tool("echo_message", message="late") == "late"
    task = "echo_env.server.app:app (local runtime)"
    logged = [(r.task, r.stage) for r in caplog.records]  # type: ignore[attr-defined]
    assert logged == [(task, "waiting for /health"), (task, "done")]
    shown = [(e.task, e.stage, e.finished) for e in events]  # it lasted over a second: shown
    assert shown[0] == (task, "waiting for /health", False) and shown[-1] == (task, "done", True)


@pytest.mark.slow
def test_uv_folder_in_its_own_environment(tmp_path: Path) -> None:
    with EchoEnv.from_folder(ECHO_ENV, runtime="uv").sync() as env:
        provider = env.provider
        assert isinstance(provider, UvProvider) and provider.runtime == "uv"
        python = Path(str(provider.process.args[0]))  # type: ignore[index]
        assert python.parent.parent.parent == cache_root() and python != Path(sys.executable)
        assert env.call_tool("echo_message", message="uv") == "uv"
    assert not provider.running()
