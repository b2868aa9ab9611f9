"""Where no sandbox can be made the environment refuses to start, unless the operator sets
``unsafe_no_sandbox``, which /metadata and the web UI then show."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest
from coding_env.server.app import build_app
from coding_env.server.environment import CodingEnvironment
from coding_env.server.mechanism import SandboxUnavailableError, detect
from coding_env.server.sandbox import Launcher, Mechanism, Sandbox, SandboxError
from coding_env.server.settings import SandboxSettings
from coding_support import LIMITS, serve

from openenv_hub.errors import ConfigurationError


def test_without_bubblewrap_it_refuses_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailableError) as info:
        CodingEnvironment.configured(SandboxSettings(**LIMITS))  # type: ignore[arg-type]
    assert "bubblewrap (the 'bwrap' command) is not installed" in str(info.value)
    assert "apt-get install bubblewrap" in info.value.hint
    assert "CODING_ENV_UNSAFE_NO_SANDBOX=1" in info.value.hint


def _expected_mechanism() -> Mechanism:
    return Mechanism.ROOT if os.geteuid() == 0 else Mechanism.USER_NAMESPACES


def test_as_root_each_session_gets_its_own_user_else_user_namespaces_do() -> None:
    """CI installs bubblewrap, so detect() proves a sandbox by running code in one."""
    assert detect(SandboxSettings(**LIMITS)).mechanism is _expected_mechanism()  # type: ignore[arg-type]


def test_unsafe_no_sandbox_is_shown_by_metadata_and_the_ui() -> None:
    settings = SandboxSettings(**LIMITS, unsafe_no_sandbox=True)  # type: ignore[arg-type]
    with serve(build_app(settings, web=True)) as base_url:
        metadata = httpx.get(f"{base_url}/metadata", timeout=30).json()
        page = httpx.get(f"{base_url}/web/config", timeout=30).text
        reply = httpx.post(f"{base_url}/step", json={"action": {"code": "6 * 7"}}, timeout=60)
    assert metadata["description"].startswith("UNSAFE: no sandbox")
    assert "UNSAFE: no sandbox" in page
    assert reply.json()["observation"]["result"] == "42"


def test_settings_from_the_environment() -> None:
    settings = SandboxSettings.from_env(
        {"CODING_ENV_MEMORY_MB": "256", "CODING_ENV_UNSAFE_NO_SANDBOX": "yes"}
    )
    assert (settings.memory_mb, settings.unsafe_no_sandbox) == (256, True)
    with pytest.raises(ConfigurationError, match="CODING_ENV_MEMORY_MB='lots' is not a valid int"):
        SandboxSettings.from_env({"CODING_ENV_MEMORY_MB": "lots"})
    with pytest.raises(ConfigurationError, match="memory_mb must be positive"):
        SandboxSettings(memory_mb=0)


def test_an_interpreter_installed_under_tmp_runs_sandboxed() -> None:
    """The sandbox's /tmp is empty and its own: an interpreter from /tmp is bound over it."""
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        settings = SandboxSettings(**LIMITS, python=str(venv / "bin" / "python"))  # type: ignore[arg-type]
        assert detect(settings).mechanism is _expected_mechanism()


def test_unsafe_mode_removes_its_working_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without a sandbox the interpreter works in a host folder: gone once it stops, and never
    left behind when the interpreter cannot even be started."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    sandbox = Sandbox(SandboxSettings(**LIMITS, unsafe_no_sandbox=True), Launcher(Mechanism.NONE))  # type: ignore[arg-type]
    sandbox.start()
    reply = sandbox.request({"op": "run", "code": "import os; os.getcwd()"}, 30)
    (workdir,) = tmp_path.iterdir()
    assert workdir.name.startswith("coding-unsafe-")
    assert reply["value"] == repr(str(workdir))
    sandbox.stop()
    assert list(tmp_path.iterdir()) == []
    missing = SandboxSettings(**LIMITS, unsafe_no_sandbox=True, python=str(tmp_path / "nope"))  # type: ignore[arg-type]
    with pytest.raises(SandboxError, match="could not run"):
        Sandbox(missing, Launcher(Mechanism.NONE)).start()
    assert list(tmp_path.iterdir()) == []
