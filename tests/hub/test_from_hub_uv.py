"""``EnvClient.from_hub(..., runtime="uv")``: a Space served at an exact revision from an
environment uv made for that commit, leaving the caller's interpreter as it was."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from doc_blocks import doc_block
from echo_env import CallToolAction, EchoEnv
from hub_support import unique_repo

from openenv_hub.errors import RemoteCodeNotTrustedError
from openenv_hub.hub import push
from openenv_hub.runtimes.uv import UvProvider, cache_root
from openenv_hub.testing.pytest_plugin import HubEnv

pytestmark = pytest.mark.slow


def _freeze() -> str:
    return subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout


def _downloads(hub_env: HubEnv, repo_id: str) -> list[str]:
    return [r["path"] for r in hub_env.hub.requests() if f"{repo_id}/resolve/" in r["path"]]


async def test_from_hub_uv_serves_that_revision_and_leaves_the_caller_alone(
    hub_env: HubEnv, echo_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo_id = unique_repo(hub_env, "uv")
    push(echo_copy, repo_id, version="0.1.0")
    tool = echo_copy / "echo_env" / "server" / "environment.py"
    tool.write_text(tool.read_text().replace("return message\n", "return message.upper()\n"))
    push(echo_copy, repo_id)  # main moves on and shouts; 0.1.0 does not
    with pytest.raises(RemoteCodeNotTrustedError):
        EchoEnv.from_hub(repo_id, runtime="uv", revision="0.1.0")

    before = _freeze()
    started = time.monotonic()
    env = EchoEnv.from_hub(repo_id, runtime="uv", revision="0.1.0", trust_remote_code=True)
    cold_s = time.monotonic() - started
    provider = env.provider
    assert isinstance(provider, UvProvider) and provider.runtime == "uv"
    venv = Path(provider.process.args[0]).parent.parent  # type: ignore[index]
    assert venv.parent == cache_root() and Path(sys.prefix) != venv
    try:
        async with env:
            await env.reset()
            result = await env.step(
                CallToolAction(tool_name="echo_message", arguments={"message": "Hi"})
            )
            assert result.observation.result["data"] == "Hi"  # 0.1.0's code, not main's
        assert not provider.running()
        assert _freeze() == before

        hub_env.hub.clear_requests()
        code = doc_block("docs/runtimes.md", "uv space").code.replace("YOUR_NAME/echo_env", repo_id)
        capsys.readouterr()
        started = time.monotonic()
        exec(compile(code, "docs/runtimes.md", "exec"), {})  # the documented warm start
        warm_s = time.monotonic() - started
        assert capsys.readouterr().out.strip() == "Hi"
        assert _downloads(hub_env, repo_id) == []  # the second start reused that commit's env
        print(f"uv runtime: cold start {cold_s:.1f} s, warm start {warm_s:.1f} s")
    finally:
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(cache_root().parent / "spaces" / repo_id, ignore_errors=True)
