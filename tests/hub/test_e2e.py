"""What a user does, end to end: push to LocalHub, pip install from it into a fresh virtual
environment, serve the environment, and step it with the installed client (async and sync).

Marked slow: each creates (once per session) a virtual environment with openenv-hub from the
checkout's wheel. pip runs with PIP_NO_INDEX=1: everything it installs here comes from LocalHub.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import Venv, run_python, serve_app, unique_repo

from openenv_hub.testing.pytest_plugin import HubEnv
from openenv_hub_cli.init import class_prefix

pytestmark = pytest.mark.slow

ECHO_SCRIPT = """
import asyncio
from echo_env import CallToolAction, EchoEnv

async def main():
    async with EchoEnv(base_url={url!r}) as env:
        await env.reset()
        result = await env.step(CallToolAction(tool_name="echo_message", arguments={{"message": "Hi"}}))
        print("async", result.observation.result["data"])

asyncio.run(main())
with EchoEnv(base_url={url!r}).sync() as env:
    env.reset()
    print("sync", env.call_tool("echo_with_length", message="Hi"))
"""

PACKAGE_FILE = "import openenv_hub; print(openenv_hub.__file__)"

TYPED_SCRIPT = """
import asyncio
from {name} import {prefix}Action, {prefix}Env

async def main():
    async with {prefix}Env(base_url={url!r}) as env:
        await env.reset()
        result = await env.step({prefix}Action(message="hello"))
        print("async", result.observation.echoed_message, result.reward)

asyncio.run(main())
with {prefix}Env(base_url={url!r}).sync() as env:
    env.reset()
    print("sync", env.step({prefix}Action(message="hi")).observation.message_length)
"""


def _push_and_install(
    cli: Callable[..., CliResult], hub_venv: Venv, path: Path, repo_id: str
) -> str:
    """``openenv push --version 0.1.0``, then the pip line it printed, run in the venv."""
    pushed = cli("push", path, "--repo-id", repo_id, "--version", "0.1.0")
    assert pushed.code == 0, pushed.text
    (line,) = [row for row in pushed.out.splitlines() if row.startswith("Install: ")]
    command = line.removeprefix("Install: ")
    assert command.endswith(f"/spaces/{repo_id}@0.1.0") and command.startswith(
        "pip install git+http://127.0.0.1:"
    )
    return hub_venv.run(hub_venv.python, "-m", *command.split())


def test_echo_env_push_install_serve_step(
    hub_env: HubEnv, hub_venv: Venv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "e2e-echo")
    _push_and_install(cli, hub_venv, echo_copy, repo_id)
    with serve_app(hub_venv.python, "echo_env.server.app:app") as url:
        out = run_python(hub_venv.python, ECHO_SCRIPT.format(url=url), env=hub_venv.env())
    assert "async Hi" in out
    assert "sync {'message': 'Hi', 'length': 2}" in out
    where = run_python(
        hub_venv.python, "import echo_env; print(echo_env.__file__)", env=hub_venv.env()
    )
    assert str(hub_venv.root) in where  # the installed copy, not the checkout


def test_init_env_push_install_serve_step(
    hub_env: HubEnv, hub_venv: Venv, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    name = f"game_{tmp_path.name[-6:].replace('-', '_')}_env"
    assert cli("init", name, "--no-input", "--output-dir", tmp_path).code == 0
    repo_id = unique_repo(hub_env, "e2e-init")
    _push_and_install(cli, hub_venv, tmp_path / name, repo_id)
    prefix = class_prefix(name)
    with serve_app(hub_venv.python, f"{name}.server.app:app") as url:
        script = TYPED_SCRIPT.format(name=name, prefix=prefix, url=url)
        out = run_python(hub_venv.python, script, env=hub_venv.env())
    assert "async hello 0.5" in out
    assert "sync 2" in out


def test_a_fresh_venv_with_nothing_but_pip_installs_a_pushed_space_and_drives_it(
    hub_env: HubEnv,
    cli: Callable[..., CliResult],
    echo_copy: Path,
    tmp_path: Path,
    wheelhouse: Path,
) -> None:
    """The first thing a new user does: the exact pip line push printed, in a new virtual
    environment. openenv-hub is on no package index: the Space names its bundled wheel.
    (Third-party packages come from a local copy of the index: see ``wheelhouse``.)"""
    repo_id = unique_repo(hub_env, "e2e-bare")
    pushed = cli("push", echo_copy, "--repo-id", repo_id, "--version", "0.1.0")
    assert pushed.code == 0, pushed.text
    (line,) = [row for row in pushed.out.splitlines() if row.startswith("Install: ")]
    command = line.removeprefix("Install: ").split()
    assert command[:2] == ["pip", "install"] and command[2].endswith(f"{repo_id}@0.1.0")
    venv = Venv(tmp_path / "bare")
    subprocess.run([sys.executable, "-m", "venv", str(venv.root)], check=True)
    env = venv.env(PIP_FIND_LINKS=str(wheelhouse))
    del env["PIP_NO_BUILD_ISOLATION"]  # as a user's pip: builds in isolation
    done = subprocess.run(
        [str(venv.python), "-m", *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    hub_requests = [r["path"] for r in hub_env.hub.requests()]
    assert any("/resolve/" in path and path.endswith(".whl") for path in hub_requests)
    with serve_app(venv.python, "echo_env.server.app:app") as url:
        out = run_python(venv.python, ECHO_SCRIPT.format(url=url), env=venv.env())
    assert "async Hi" in out and "sync {'message': 'Hi', 'length': 2}" in out
    installed = run_python(venv.python, PACKAGE_FILE, env=venv.env()).strip()
    assert installed.startswith(str(venv.root) + os.sep)  # from the Space's wheel, not the checkout
