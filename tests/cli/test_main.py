"""The root command: --version, --help everywhere, and the error boundary."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openenv_hub import __version__

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "#!/usr/bin/python3\nimport sys\nfrom {module} import main\nsys.exit(main())\n"


def _command_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str) -> Path:
    """An ``openenv`` script as pip writes it, running ``module``, first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "openenv"
    script.write_text(SCRIPT.format(module=module), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return script


def test_version_names_the_package_that_owns_the_command(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _command_on_path(tmp_path, monkeypatch, "openenv_hub_cli.main")
    result = cli("--version")
    assert result.code == 0
    first, second, *_ = result.out.splitlines()
    assert first == f"openenv-hub {__version__}"
    assert second == f"'openenv' on PATH: {script} (openenv-hub {__version__}'s)."
    assert "also installs" not in result.out


def test_version_says_when_the_openenv_package_owns_the_command(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``openenv`` package (as TRL users may have it) declares an ``openenv`` script too."""
    site = tmp_path / "site"
    info = site / "openenv-0.10.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: openenv\nVersion: 0.10.0\n")
    (info / "entry_points.txt").write_text(
        "[console_scripts]\nopenenv = openenv.cli.__main__:main\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    script = _command_on_path(tmp_path, monkeypatch, "openenv.cli.__main__")
    result = cli("--version")
    assert f"'openenv' on PATH: {script} (openenv 0.10.0's)." in result.out
    assert "openenv 0.10.0 also installs an 'openenv' command" in result.out
    assert "'openenv-hub' always runs openenv-hub." in result.out


def test_the_command_is_installed_under_both_names() -> None:
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["openenv"] == scripts["openenv-hub"] == "openenv_hub_cli.main:main"


def test_started_as_openenv_hub_it_calls_itself_so(
    cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["/venv/bin/openenv-hub", "--help"])
    result = cli("--help")
    assert "Usage: openenv-hub [OPTIONS] COMMAND" in result.out


@pytest.mark.parametrize("command", [[], ["init"], ["serve"], ["validate"], ["build"]])
def test_help(cli: Callable[..., Any], command: list[str]) -> None:
    result = cli(*command, "--help")
    assert result.code == 0
    assert "Usage" in result.out


def test_unknown_command_is_a_usage_error(cli: Callable[..., Any]) -> None:
    result = cli("frobnicate")
    assert result.code == 2
    assert "No such command" in result.err


def test_tracebacks_only_with_the_debug_variable(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "openenv.yaml").write_text("name: my_env\nprot: 1\n")
    quiet = cli("serve", tmp_path)
    assert quiet.code == 1
    assert "Did you mean 'port'" in quiet.err and "Traceback" not in quiet.err
    assert "OPENENV_DEBUG=1" in quiet.err
    monkeypatch.setenv("OPENENV_DEBUG", "1")
    loud = cli("serve", tmp_path)
    assert loud.code == 1 and "Traceback" in loud.err


def test_a_docker_failure_is_a_library_error_the_cli_prints_plainly(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DockerError is raised by the library (openenv_hub.docker), so it is no CLI CommandError;
    the command still prints its message and hint, without a traceback."""
    from openenv_hub.errors import CommandError, DockerError, OpenEnvError

    assert issubclass(DockerError, OpenEnvError) and not issubclass(DockerError, CommandError)
    socket = tmp_path / "no-engine.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{socket}")
    result = cli("build", REPO / "envs" / "echo_env", "--tag", "openenv-house-no-engine:test")
    assert result.code == 1
    assert f"Error: No Docker engine answers at unix://{socket}" in result.err
    assert "Hint: Start one, or point DOCKER_HOST at a running engine" in result.err
    assert "Traceback" not in result.err
