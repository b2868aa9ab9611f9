"""The documentation site (mkdocs.yml): it builds strictly, with a reference page for each public
package and module of the library and doctest lines shown as code."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from doc_blocks import REPO


def _script(name: str) -> ModuleType:
    path = REPO / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _public_units() -> set[str]:
    library = REPO / "openenv_hub"
    packages = {p.parent.name for p in library.glob("*/__init__.py")}
    modules = {p.stem for p in library.glob("*.py")} - {"__init__"}
    return {name for name in packages | modules if not name.startswith("_")}


@pytest.mark.slow
def test_the_site_builds_strictly_with_a_reference_page_for_each_public_unit(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    reference = {p.parent.name for p in (site / "reference").glob("*/index.html")}
    assert reference == _public_units()
    hub = (site / "reference" / "hub" / "index.html").read_text(encoding="utf-8")
    assert 'id="openenv_hub.hub.push"' in hub and "openenv_hub.hub._client" not in hub
    assert (site / "architecture" / "index.html").is_file()
    model = (site / "reference" / "model" / "index.html").read_text(encoding="utf-8")
    assert 'id="openenv_hub.model.image_fields"' in model  # a package's page shows its modules
    assert 'class="language-pycon"' in model


def test_the_reference_lists_the_public_units_of_the_tree(tmp_path: Path) -> None:
    hook = _script("docs_reference")
    assert set(hook.public_units()) == _public_units()
    (tmp_path / "moved").mkdir()
    (tmp_path / "moved" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "_private").mkdir()
    (tmp_path / "_private" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "single.py").write_text("", encoding="utf-8")
    (tmp_path / "_hidden.py").write_text("", encoding="utf-8")
    (tmp_path / "data").mkdir()
    assert hook.public_units(tmp_path) == ["moved", "single"]


def test_doctest_lines_are_fenced_once() -> None:
    fence = _script("docs_doctests").fence_doctests
    text = "Says hi.\n\n    >>> greet()\n    ['hi']\n\nMore.\n\n```pycon\n>>> x\n```"
    assert fence(text) == (
        "Says hi.\n\n    ```pycon\n    >>> greet()\n    ['hi']\n    ```\n\nMore.\n\n"
        "```pycon\n>>> x\n```"
    )
