"""The author's code named ``module:function`` is imported from the folder named, even when a
package of the same name was imported from another folder earlier in the same process."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openenv_hub.eval import load_function_policy, load_generator
from openenv_hub.model.manifest import parse_manifest
from openenv_hub.validation.quality import QualitySpec

ORACLE_MANIFEST = "name: twin_env\nquality:\n  oracle:\n    policy: twin_env.quality:oracle\n"


def twin_folder(root: Path, answer: str) -> Path:
    """A folder holding a package ``twin_env`` (an oracle and a generator that say ``answer``)."""
    package = root / "twin_env"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "answer.py").write_text(f"ANSWER = {answer!r}\n", encoding="utf-8")
    (package / "quality.py").write_text(
        "def oracle(messages, tools, seed):\n"
        "    from twin_env.answer import ANSWER  # imported when called, from its own package\n"
        "    return ANSWER\n"
        "\n"
        "def tasks(seed):\n"
        "    from twin_env.answer import ANSWER\n"
        "    return {'prompt': ANSWER}\n",
        encoding="utf-8",
    )
    (root / "openenv.yaml").write_text(ORACLE_MANIFEST, encoding="utf-8")
    return root


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """Two folders with a package of the same name; ``twin_env`` forgotten afterwards."""
    yield twin_folder(tmp_path / "first", "first"), twin_folder(tmp_path / "second", "second")
    for name in [n for n in sys.modules if n == "twin_env" or n.startswith("twin_env.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path))]


def oracle_of(folder: Path) -> Callable[..., object]:
    manifest = parse_manifest((folder / "openenv.yaml").read_text(encoding="utf-8"))
    policy = QualitySpec.of(manifest, folder).oracle_policy()
    return policy.function  # type: ignore[union-attr]


def test_each_folders_oracle_is_its_own(twins: tuple[Path, Path]) -> None:
    first, second = twins
    assert oracle_of(first)([], [], 0) == "first"
    assert oracle_of(second)([], [], 0) == "second"


def test_each_folders_task_generator_is_its_own(twins: tuple[Path, Path]) -> None:
    first, second = twins
    assert load_generator("twin_env.quality:tasks", root=first)(0) == {"prompt": "first"}
    assert load_generator("twin_env.quality:tasks", root=second)(0) == {"prompt": "second"}


def test_a_policy_is_imported_from_the_current_folder(
    twins: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = twins
    monkeypatch.chdir(first)
    assert load_function_policy("twin_env.quality:oracle").function([], [], 0) == "first"
    monkeypatch.chdir(second)
    assert load_function_policy("twin_env.quality:oracle").function([], [], 0) == "second"


def test_an_installed_package_the_folder_does_not_hold_is_kept(tmp_path: Path) -> None:
    """Only a package the folder itself holds replaces one imported from elsewhere."""
    import json

    policy = load_function_policy("json:dumps", root=tmp_path)
    assert policy.function is json.dumps
    assert sys.modules["json"] is json
