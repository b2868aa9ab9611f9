"""``install``: consent first, real ``pip install git+http://127.0.0.1...``, no token printed.

These install a tiny package into a ``--target`` folder, so the test interpreter is untouched.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import OFFLINE_PIP, REPO, Venv, run_python, unique_repo

from openenv_hub.errors import RemoteCodeNotTrustedError
from openenv_hub.hub import install, parse_spec, push
from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory

PIP_ARGS = ["--no-deps", "--no-index", "--no-build-isolation", "--quiet"]


def tiny_package(name: str) -> dict[str, str]:
    """The files of a Space that pip can install without any index."""
    return {
        "pyproject.toml": (
            '[build-system]\nrequires = ["setuptools>=70.1"]\nbuild-backend = "setuptools.build_meta"\n'
            f'[project]\nname = "{name.replace("_", "-")}"\nversion = "0.1.0"\n'
            f'[project.entry-points."openenv.environments"]\n{name} = "{name}.client:Client"\n'
            f'[tool.setuptools]\npackages = ["{name}"]\n'
        ),
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{name}/client.py": "class Client:\n    pass\n",
    }


@pytest.fixture
def tiny_space(hub_env: HubEnv, make_space: SpaceFactory) -> Callable[..., tuple[str, str]]:
    def make(private: bool = False) -> tuple[str, str]:
        name = f"tiny_{uuid.uuid4().hex[:8]}"
        repo_id = make_space(private=private, files=tiny_package(name))
        hub_env.api("alice").create_tag(repo_id, tag="1.0.0", repo_type="space")
        return repo_id, name

    return make


def _direct_url(target: Path) -> dict[str, object]:
    (dist,) = target.glob("*.dist-info")
    data: dict[str, object] = json.loads((dist / "direct_url.json").read_text())
    return data


def test_install_at_a_version_into_a_target(
    hub_env: HubEnv, tiny_space: Callable[..., tuple[str, str]], tmp_path: Path
) -> None:
    repo_id, name = tiny_space()
    lines: list[str] = []
    result = install(
        repo_id,
        "1.0.0",
        yes=True,
        pip_args=[*PIP_ARGS, "--target", str(tmp_path)],
        on_output=lines.append,
    )
    assert (tmp_path / name / "__init__.py").read_text() == "VALUE = 42\n"
    direct = _direct_url(tmp_path)
    assert direct["url"] == f"{hub_env.endpoint}/spaces/{repo_id}"
    assert direct["vcs_info"]["commit_id"] == result.commit  # type: ignore[index]
    assert result.command[:4] == [sys.executable, "-m", "pip", "install"]
    assert result.command[-1] == f"git+{hub_env.endpoint}/spaces/{repo_id}@{result.commit}"


def test_private_space_token_goes_to_pip_but_is_never_printed(
    hub_env: HubEnv,
    tiny_space: Callable[..., tuple[str, str]],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    repo_id, name = tiny_space(private=True)
    lines: list[str] = []
    args = [*PIP_ARGS[:-1], "-v", "--target", str(tmp_path)]  # verbose: pip shows the URL
    result = install(repo_id, yes=True, pip_args=args, on_output=lines.append)
    assert result.private and (tmp_path / name).is_dir()
    token = hub_env.hub.token_for("alice")
    seen = "\n".join(lines) + "".join(capfd.readouterr()) + " ".join(result.command)
    assert token not in seen
    assert "git+" in seen and repo_id in seen
    assert "@" not in str(_direct_url(tmp_path)["url"]).split("//")[1]  # pip keeps no credentials


def test_no_terminal_and_no_consent_refuses(
    hub_env: HubEnv,
    tiny_space: Callable[..., tuple[str, str]],
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    repo_id, _ = tiny_space()
    with pytest.raises(RemoteCodeNotTrustedError) as info:
        install(repo_id, pip_args=["--target", str(tmp_path)])
    assert "no terminal" in str(info.value) and "OPENENV_TRUST_REMOTE_CODE=1" in info.value.hint
    result = cli("install", repo_id)
    assert result.code == 1 and "--yes" in result.err
    assert list(tmp_path.iterdir()) == []


def test_consent_from_the_environment_or_the_terminal(
    hub_env: HubEnv,
    tiny_space: Callable[..., tuple[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo_id, name = tiny_space()
    args = [*PIP_ARGS, "--target", str(tmp_path / "a")]
    monkeypatch.setenv("OPENENV_TRUST_REMOTE_CODE", "1")
    install(repo_id, pip_args=args)
    assert (tmp_path / "a" / name).is_dir()

    monkeypatch.delenv("OPENENV_TRUST_REMOTE_CODE")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)  # as at a terminal
    asked: list[str] = []

    def no(question: str) -> bool:
        asked.append(question)
        return False

    with pytest.raises(RemoteCodeNotTrustedError, match="not confirmed"):
        install(repo_id, pip_args=[*PIP_ARGS, "--target", str(tmp_path / "b")], confirm=no)
    assert f"pip install git+{hub_env.endpoint}/spaces/{repo_id}" in asked[0]
    assert not (tmp_path / "b").exists()
    install(repo_id, pip_args=[*PIP_ARGS, "--target", str(tmp_path / "c")], confirm=lambda q: True)
    assert (tmp_path / "c" / name).is_dir()


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [("a/b", ("a/b", None)), ("a/b@0.1.0", ("a/b", "0.1.0")), ("a/b@", ("a/b", None))],
)
def test_parse_spec(spec: str, parsed: tuple[str, str | None]) -> None:
    assert parse_spec(spec) == parsed


def test_offline_pip_guard_is_what_the_slow_tests_use() -> None:
    assert OFFLINE_PIP["PIP_NO_INDEX"] == "1"


@pytest.fixture(scope="session")
def editable_venv(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Venv:
    """A virtual environment where openenv-hub is this checkout, installed editable (as in a
    development setup), its dependencies from the wheelhouse."""
    venv = Venv(tmp_path_factory.mktemp("editable") / "venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv.root)], check=True)
    offline = {"PIP_FIND_LINKS": str(wheelhouse), "PYTHONPATH": ""}
    pip = [venv.python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    venv.run(*pip, "setuptools>=70.1", "wheel", **offline)
    venv.run(*pip, "--no-build-isolation", "-e", REPO, **offline)
    return venv


def _toolkit(venv: Venv) -> dict[str, object]:
    code = (
        "import json, openenv_hub; from importlib.metadata import distribution as d; "
        "print(json.dumps({'file': openenv_hub.__file__, "
        "'direct_url': json.loads(d('openenv-hub').read_text('direct_url.json'))}))"
    )
    result: dict[str, object] = json.loads(
        run_python(venv.python, code, env=venv.env(PYTHONPATH=""))
    )
    return result


@pytest.mark.slow
def test_install_keeps_an_editable_toolkit_and_says_so(
    hub_env: HubEnv, editable_venv: Venv, echo_copy: Path, wheelhouse: Path
) -> None:
    """The Space pins openenv-hub to the wheel it bundles; the checkout stays installed."""
    before = _toolkit(editable_venv)
    assert before["direct_url"]["dir_info"]["editable"]  # type: ignore[index]
    repo_id = unique_repo(hub_env, "keep")
    push(echo_copy, repo_id)  # a development install: the Space bundles its wheel
    out = editable_venv.run(
        editable_venv.bin / "openenv", "install", repo_id, "--yes",
        PIP_FIND_LINKS=str(wheelhouse), PYTHONPATH="", COLUMNS="300",
    )  # fmt: skip
    assert _toolkit(editable_venv) == before  # still the checkout, still editable
    assert f"Kept openenv-hub 0.1.0 (editable, from {REPO}); the Space asks for openenv-hub @ " in (
        out
    )
    assert "/.openenv/wheels/openenv_hub-" in out
    code = "import echo_env, openenv_hub; print(echo_env.__file__, openenv_hub.__file__)"
    files = run_python(editable_venv.python, code, env=editable_venv.env(PYTHONPATH="")).split()
    assert "site-packages" in files[0] and files[1].startswith(str(REPO))


def test_answering_no_at_the_terminal_is_no_error(
    hub_env: HubEnv,
    tiny_space: Callable[..., tuple[str, str]],
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo_id, _ = tiny_space()
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)  # as at a terminal
    result = cli("install", repo_id)
    assert result.code == 1
    assert "Continue? [y/N]" in result.err
    assert f"Not installed: you answered no. Nothing was changed for {repo_id}." in result.err
    assert "Error" not in result.err


@pytest.mark.slow
def test_install_refuses_to_replace_the_spaces_own_package_installed_editable(
    hub_env: HubEnv, editable_venv: Venv, echo_copy: Path, wheelhouse: Path
) -> None:
    repo_id = unique_repo(hub_env, "mine")
    push(echo_copy, repo_id, bundle_wheel=False)
    pip = [editable_venv.python, "-m", "pip", "-q", "--disable-pip-version-check"]
    offline = {"PIP_FIND_LINKS": str(wheelhouse), "PYTHONPATH": ""}
    editable_venv.run(
        *pip, "install", "--no-deps", "--no-build-isolation", "-e", echo_copy, **offline
    )
    try:
        done = subprocess.run(
            [str(editable_venv.bin / "openenv"), "install", repo_id, "--yes"],
            env=editable_venv.env(**offline, COLUMNS="300"),
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        where = run_python(
            editable_venv.python, "import echo_env; print(echo_env.__file__)",
            env=editable_venv.env(PYTHONPATH=""),
        )  # fmt: skip
    finally:
        editable_venv.run(*pip, "uninstall", "-y", "openenv-echo-env", **offline)
    assert done.returncode == 1
    assert (
        f"openenv-echo-env 0.1.0 (editable, from {echo_copy}) is installed here; installing "
        in (done.stderr)
    )
    assert "pip uninstall openenv-echo-env" in done.stderr
    assert where.startswith(str(echo_copy))  # untouched
