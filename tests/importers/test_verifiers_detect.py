"""Finding a verifiers environment by reading its source: nothing of it runs, not even a module
that does something when imported."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openenv_hub.errors import ConfigurationError
from openenv_hub.importers import detect_verifiers, locate_source

ENVS = Path(__file__).parent / "verifiers_envs"


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file vf_side_effect writes when its module runs."""
    path = tmp_path / "ran"
    monkeypatch.setenv("OPENENV_TEST_IMPORT_MARKER", str(path))
    return path


@pytest.mark.parametrize(
    ("folder", "classes", "parameters"),
    [
        ("vf_arith", ["SingleTurnEnv"], ["system_prompt"]),
        ("vf_lookup", ["ToolEnv"], ["max_turns"]),
    ],
)
def test_an_environment_is_found_with_its_kind_and_parameters(
    folder: str, classes: list[str], parameters: list[str]
) -> None:
    found = detect_verifiers(ENVS / folder)
    assert (found.module, found.classes, found.parameters) == (folder, classes, parameters)
    assert found.root == (ENVS / folder).resolve()
    assert found.file == (ENVS / folder / f"{folder}.py").resolve()


def test_several_environments_ask_for_a_module_and_none_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="3 verifiers environments") as raised:
        detect_verifiers(ENVS)
    assert "--module" in raised.value.hint
    assert detect_verifiers(ENVS, module="vf_lookup.vf_lookup").module == "vf_lookup.vf_lookup"
    (tmp_path / "plain.py").write_text("def load_environment():\n    return None\n")
    with pytest.raises(ConfigurationError, match="no module imports verifiers"):
        detect_verifiers(tmp_path)


def test_detecting_and_importing_run_none_of_the_modules_code(
    marker: Path, tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module writes a file when imported: detection, locating it by its module name and
    `openenv import verifiers` leave no such file."""
    assert detect_verifiers(ENVS / "vf_side_effect").module == "vf_side_effect"
    monkeypatch.syspath_prepend(str(ENVS / "vf_side_effect"))
    assert locate_source("vf_side_effect") == ENVS / "vf_side_effect" / "vf_side_effect.py"
    done = cli("import", "verifiers", "vf_side_effect", "-o", tmp_path / "side_env")
    assert done.code == 0, done.text
    assert "vf_side_effect.load_environment() (SingleTurnEnv)" in done.text
    assert not marker.exists()
    assert "vf_side_effect" not in sys.modules
    made = tmp_path / "side_env"
    assert (made / "vendor" / "vf_side_effect" / "vf_side_effect.py").is_file()
    server = (made / "side_env" / "server" / "app.py").read_text()
    assert 'module="vf_side_effect"' in server
    manifest = (made / "openenv.yaml").read_text()
    assert "- rl-environment" in manifest and "- verifiers" in manifest


def test_a_bad_source_is_told(cli: Callable[..., Any], tmp_path: Path) -> None:
    done = cli("import", "verifiers", "surely_no_such_module_here", "-o", tmp_path / "x")
    assert done.code != 0 and "neither a file, a folder nor an installed module" in done.text
    done = cli("import", "verifiers", ENVS / "vf_arith", "-o", tmp_path / "y", "--args", "[1]")
    assert done.code != 0 and "JSON object" in done.text


def test_a_file_brings_only_itself_and_a_folder_is_never_copied_into_itself(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module of one file, imported from the folder it sits in (with other files, and the
    output folder, beside it), is vendored alone; a folder cannot be imported into itself."""
    shutil.copy(ENVS / "vf_arith" / "vf_arith.py", tmp_path)
    (tmp_path / "notes-of-mine.txt").write_text("private\n")
    monkeypatch.chdir(tmp_path)
    done = cli("import", "verifiers", "vf_arith.py", "-o", "arith_env")
    assert done.code == 0, done.text
    vendored = sorted(p.relative_to(tmp_path) for p in (tmp_path / "arith_env/vendor").rglob("*"))
    assert vendored == [
        Path("arith_env/vendor/vf_arith"),
        Path("arith_env/vendor/vf_arith/vf_arith.py"),
    ]
    package = tmp_path / "project" / "arith_pkg"
    package.mkdir(parents=True)
    shutil.copy(ENVS / "vf_arith" / "vf_arith.py", package / "__init__.py")
    monkeypatch.chdir(tmp_path / "project")
    done = cli("import", "verifiers", ".", "-o", "inside_env")
    assert done.code != 0 and "outside the imported source" in done.text
    assert not (tmp_path / "project" / "inside_env").exists()
