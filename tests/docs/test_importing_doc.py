"""docs/importing.md: its commands and its Python run as printed, against LocalHub (the dataset's
name is the test's own, and the Harbor and verifiers sources are the importer tests' own)."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from eval_support import read_rows, sums_env

from openenv_hub.importers import read_task_set

DOC = "docs/importing.md"
EVAL_DOC = "docs/eval.md"
IMPORTERS = Path(__file__).parents[1] / "importers"
__all__ = ["sums_env"]  # a fixture


def command(name: str, replacements: dict[str, str] | None = None) -> list[str]:
    """The ``openenv`` command of the block ``name``, with ``replacements`` made."""
    code = doc_block(DOC, name).code.strip()
    for old, new in (replacements or {}).items():
        assert old in code, old
        code = code.replace(old, new)
    words = shlex.split(code)
    assert words[0] == "openenv"
    return words[1:]


def run(cli: Callable[..., Any], name: str, replacements: dict[str, str] | None = None) -> Any:
    done = cli(*command(name, replacements))
    assert done.code == 0, done.text
    return done


def test_a_harbor_task_set_imports_lists_and_exports_as_printed(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(IMPORTERS / "harbor_tasks", tmp_path / "my-tasks")
    monkeypatch.chdir(tmp_path)
    imported = run(cli, "importing-harbor")
    assert "Imported 3 Harbor tasks" in imported.out
    listed = run(cli, "importing-harbor-tasks")
    assert "3 tasks" in listed.out
    assert all(name in listed.out for name in ("count-words", "sum-numbers", "write-greeting"))
    exported = run(cli, "importing-export")
    assert "unchanged" in exported.out
    names = [task.name for task in read_task_set(tmp_path / "exported")]
    assert names == [task.name for task in read_task_set(tmp_path / "my-tasks")]


def test_a_verifiers_environment_imports_as_printed(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(IMPORTERS / "verifiers_envs" / "vf_arith" / "vf_arith.py", tmp_path)
    monkeypatch.chdir(tmp_path)
    done = run(cli, "importing-verifiers")
    assert "vf_arith.load_environment() (SingleTurnEnv)" in done.out
    vendored = tmp_path / "arith_env" / "vendor"
    assert [p.name for p in vendored.rglob("*")] == ["vf_arith", "vf_arith.py"]  # that file only
    manifest = (tmp_path / "arith_env" / "openenv.yaml").read_text()
    assert "- verifiers" in manifest and "- rl-environment" in manifest


@pytest.mark.slow
def test_a_dataset_environment_is_published_and_evaluated_as_printed(
    cli: Callable[..., Any],
    hub_env: Any,
    sums_env: Callable[[str, str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = sums_env(doc_block(EVAL_DOC, "eval-generator").code,
                      doc_block(DOC, "importing-dataset-manifest").code)  # fmt: skip
    (folder / "tasks").mkdir()
    (folder / "tasks" / "test.jsonl").write_text(doc_block(DOC, "importing-dataset-tasks").code)
    repo = hub_env.repo_id("sums-tasks")
    named = {"alice/sums-tasks": repo}
    pushed = run(cli, "importing-push-dataset", named)
    assert f"Pushed sums_env to dataset {repo}" in pushed.out

    from huggingface_hub import hf_hub_download

    written = hf_hub_download(repo, "environment.yaml", repo_type="dataset")
    assert Path(written).read_text() == doc_block(DOC, "importing-environment-yaml").code

    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "adder.py").write_text(doc_block(EVAL_DOC, "eval-generator-policy").code)
    shutil.rmtree(folder)
    for module in [n for n in sys.modules if n == "sums_env" or n.startswith("sums_env.")]:
        del sys.modules[module]
    monkeypatch.chdir(elsewhere)
    try:
        evaluated = run(cli, "importing-eval-dataset", named)
    finally:
        sys.modules.pop("adder", None)
    assert "Played 3 rollouts" in evaluated.out
    rows = read_rows(elsewhere / "results")
    assert sorted((r["task_key"], r["return"]) for r in rows) == [
        ("sum-0", 1.0), ("sum-1", 1.0), ("sum-2", 1.0),
    ]  # fmt: skip
    recorded = json.loads((elsewhere / "results" / "run.json").read_text())["env"]
    assert recorded.startswith(f"hf://datasets/{repo}/sums_env@")

    code = doc_block(DOC, "importing-from-hub").code.replace("alice/sums-tasks", repo)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, DOC, "exec"), {})  # the document's example, as printed
    key, commit, shown = printed.getvalue().split(" ", 2)
    assert key == "sum-0" and recorded.endswith(commit) and shown.startswith("What is")
