"""docs/quality.md: its commands, its manifest section and its oracle run as printed; its chess
blocks are the chess environment's own files."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from doc_blocks import REPO, doc_block
from serving import ServerThread

from openenv_hub.model.manifest import load_manifest, parse_manifest
from openenv_hub.validation.quality import QualitySpec, scorecard

DOC = "docs/quality.md"
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", "quality.json")


def run_block(
    cli: Callable[..., Any], name: str, replacements: dict[str, str] | None = None
) -> Any:
    code = doc_block(DOC, name).code.strip()
    for old, new in (replacements or {}).items():
        assert old in code, old
        code = code.replace(old, new)
    words = shlex.split(code)
    assert words[0] == "openenv"
    return cli(*words[1:])


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folders the document names, copied (``--save`` writes into the folder); the cwd."""
    shutil.copytree(REPO / "envs" / "echo_env", tmp_path / "envs" / "echo_env", ignore=CACHES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
def test_the_commands_run_as_printed(
    cli: Callable[..., Any], checkout: Path, serve: Callable[..., ServerThread]
) -> None:
    checked = run_block(cli, "quality-validate")
    assert checked.code == 0, checked.text
    assert "Quality scorecard" in checked.out and "floor (pass):" in checked.out
    saved = run_block(cli, "quality-save")
    assert saved.code == 0, saved.text
    assert (checkout / "envs" / "echo_env" / "quality.json").is_file()

    from echo_env.server.app import app

    url = serve(app).url
    remote = run_block(cli, "quality-url", {"http://127.0.0.1:8000": url})
    assert remote.code == 0, remote.text
    assert "Quality scorecard" in remote.out and "7/7 passed" in remote.out


@pytest.fixture
def my_env(tmp_path: Path) -> Iterator[Path]:
    """``my_env``: the document's manifest section and oracle, with the quiz's answers."""
    sys.path.insert(0, str(REPO / "tests" / "quality"))
    from quality_corpus import VAULTS

    package = tmp_path / "my_env"
    (package / "server").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "server" / "__init__.py").write_text("", encoding="utf-8")
    answers = {f"What is the code of the {vault} vault?": code for vault, code in VAULTS.items()}
    (package / "server" / "answers.py").write_text(f"ANSWERS = {answers!r}\n", encoding="utf-8")
    (package / "quality.py").write_text(doc_block(DOC, "quality-oracle").code, encoding="utf-8")
    manifest = "name: my_env\n" + doc_block(DOC, "quality-manifest").code
    (tmp_path / "openenv.yaml").write_text(manifest, encoding="utf-8")
    yield tmp_path
    sys.path.remove(str(REPO / "tests" / "quality"))
    for name in [n for n in sys.modules if n == "my_env" or n.startswith("my_env.")]:
        del sys.modules[name]


@pytest.mark.slow
def test_the_documented_oracle_solves_every_task(
    my_env: Path, serve: Callable[..., ServerThread]
) -> None:
    from quality_corpus import QuizEnvironment, app

    url = serve(app(QuizEnvironment)).url
    card = scorecard(url, QualitySpec.of(load_manifest(my_env), my_env))
    solvable, floor = card.check("solvable"), card.check("floor")
    assert solvable is not None and solvable.status == "pass", solvable
    assert solvable.summary == "the oracle reached 1 on all 3 tasks"
    assert floor is not None and floor.status == "pass", floor
    assert not card.failed and not card.incomplete


def test_the_chess_blocks_are_the_chess_environments_files() -> None:
    chess = REPO / "envs" / "chess_env"
    documented = parse_manifest("name: chess_env\n" + doc_block(DOC, "quality-chess-manifest").code)
    manifest = load_manifest(chess)
    assert (documented.taskset, documented.quality) == (manifest.taskset, manifest.quality)
    solutions = (chess / "quality" / "solutions.jsonl").read_text(encoding="utf-8")
    assert doc_block(DOC, "quality-chess-solutions").code == solutions
    assert yaml.safe_load(doc_block(DOC, "quality-manifest").code)["quality"]["oracle"]
