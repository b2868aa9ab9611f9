"""Messages of ``openenv serve`` and ``openenv validate`` that used to mislead: a Space's id
served as a folder says how to serve a Space; the banner reports the UI the app really has; a
manifest port the Dockerfile does not serve gets a hint about the port, not the base image."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import free_port

WEB_APP = """
from echo_env.server.environment import EchoEnvironment
from openenv_hub import CallToolAction, CallToolObservation, create_app

app = create_app(EchoEnvironment, CallToolAction, CallToolObservation, web={web})
"""


def test_a_space_id_is_not_a_missing_path(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("serve", "alice/echo_env", "--port", free_port())
    assert result.code == 1, result.text
    assert "Path does not exist" not in result.err
    assert "To serve the Space alice/echo_env" in result.err
    assert "openenv serve alice/echo_env --runtime uv" in result.err
    assert "openenv pull alice/echo_env" in result.err
    (tmp_path / "envs").mkdir()
    typo = cli("serve", "envs/echo_envv", "--port", free_port())  # a typo of a folder's path
    assert typo.code == 1 and "Path does not exist" in typo.err and "Space" not in typo.err


@contextlib.contextmanager
def _banner(spec: str, cwd: Path, *args: str) -> Iterator[str]:
    """The first lines ``openenv serve SPEC`` prints (its banner); the server is stopped."""
    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.transport.local_ports import wait_for_health

    port = free_port()
    command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", spec, "--port", str(port)]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
    process = subprocess.Popen([*command, *args], cwd=cwd, stdout=log, stderr=log)
    server = LocalProcessProvider(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_health(server.base_url, timeout_s=90, alive=server.running)
        time.sleep(0.2)
        yield server.output()
    finally:
        server.stop()


@pytest.mark.parametrize(("web", "args", "shown"), [
    (True, (), "/web"),
    (False, ("--web",), "off"),
    (None, (), "off"),
])  # fmt: skip
def test_the_banner_reports_the_ui_the_app_has(
    tmp_path: Path, web: bool | None, args: tuple[str, ...], shown: str
) -> None:
    """An app built with web=True has its UI whatever the flag; one built with web=False has
    none even with --web (the flag sets what create_app reads when it is not told)."""
    (tmp_path / "webapp.py").write_text(WEB_APP.format(web=web), encoding="utf-8")
    with _banner("webapp:app", tmp_path, *args) as output:
        [ui] = [line for line in output.splitlines() if line.startswith("UI")]
    if shown == "/web":
        assert ui.split()[1].startswith("http://127.0.0.1:") and ui.endswith("/web"), output
    else:
        assert "off" in ui, output


def test_a_manifest_port_the_dockerfile_does_not_serve_gets_a_port_hint(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    env = new_env()
    manifest = env / "openenv.yaml"
    text = manifest.read_text(encoding="utf-8")
    port = next(line for line in text.splitlines() if line.startswith("port:")).split()[1]
    manifest.write_text(text.replace(f"port: {port}", "port: 8001"), encoding="utf-8")
    result = cli("validate", env, "--level", "static", "--json")
    assert result.code == 1, result.text
    [check] = [c for c in json.loads(result.out)["checks"] if c["name"] == "dockerfile"]
    assert check["message"] == "port 8001 (the manifest's) is neither EXPOSEd nor the default PORT"
    assert "BASE_IMAGE" not in check["hint"], check
    assert "'ENV PORT=8001' and 'EXPOSE 8001'" in check["hint"]
    assert f"({port} now)" in check["hint"]
