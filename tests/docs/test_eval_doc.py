"""docs/eval.md: its taskset, policy and commands run as printed (the servers' ports, and the
model folder, are the test's own)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from eval_support import SERVE_COMMAND, model_server, read_rows, sums_env, word_game
from restartable import child_server, fault_command

DOC = "docs/eval.md"
__all__ = ["child_server", "model_server", "sums_env", "word_game"]  # fixtures


def run_command(cli: Any, name: str, replacements: dict[str, str]) -> Any:
    """Run the ``openenv`` command of a block, with ``replacements`` made."""
    code = doc_block(DOC, name).code.strip()
    for old, new in replacements.items():
        assert old in code, old
        code = code.replace(old, new)
    words = shlex.split(code)
    assert words[0] == "openenv"
    result = cli(*words[1:])
    assert result.code == 0, result.text
    return result


@pytest.fixture
def documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the document's ``tasks/test.jsonl`` and ``guesser.py``; the cwd."""
    import sys

    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "test.jsonl").write_text(doc_block(DOC, "eval-tasks").code)
    (tmp_path / "guesser.py").write_text(doc_block(DOC, "eval-policy").code)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("guesser", None)


def test_the_game_is_served_as_printed() -> None:
    from word_game import main

    words = shlex.split(doc_block(DOC, "eval-serve").code)
    assert words[:2] == ["python", "examples/word_game.py"]
    assert (Path(__file__).parents[2] / words[1]).is_file()
    assert main.__module__ == "word_game" and words[2:] == ["--port", "8011"]


def test_tasks_play_resume_and_rescore_as_printed(
    cli: Any, word_game: Any, documented: Path
) -> None:
    port = {"8011": str(word_game.port)}
    listed = run_command(cli, "eval-list-tasks", port)
    assert "3 tasks" in listed.out and "crane" in listed.out

    played = run_command(cli, "eval-run", port)
    assert "Played 12 rollouts; 12 of 12 in results" in played.out
    rows = read_rows(documented / "results")
    (documented / "results" / "rollouts.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows[:7])
    )
    resumed = run_command(cli, "eval-resume", port)
    assert "Played 5 rollouts; 12 of 12" in resumed.out
    assert len({(r["task_key"], r["sample"]) for r in read_rows(documented / "results")}) == 12
    for name in ("summary.json", "run.json", "plot.png"):
        assert (documented / "results" / name).is_file()

    rescored = run_command(cli, "eval-rescore", {})
    assert "12 unchanged, 0 changed" in rescored.out


@pytest.mark.slow
def test_a_served_model_is_evaluated_as_printed(
    cli: Any, word_game: Any, documented: Path, model_server: tuple[str, str]
) -> None:
    base_url, folder = model_server
    model_port = base_url.rsplit(":", 1)[1].removesuffix("/v1")
    serve = doc_block(DOC, "eval-model-serve").code.strip()
    assert serve == SERVE_COMMAND.format(folder="my-model", port=8000)
    replacements = {"8011": str(word_game.port), "my-model": folder, "8000": model_port}
    result = run_command(cli, "eval-model", replacements)
    assert "12 of 12 in model-results" in result.out
    assert len(read_rows(documented / "model-results")) == 12


def test_generated_tasks_are_listed_validated_and_played_as_printed(
    cli: Any, sums_env: Any
) -> None:
    import sys

    folder = sums_env(
        doc_block(DOC, "eval-generator").code, doc_block(DOC, "eval-generator-manifest").code
    )
    listed = run_command(cli, "eval-generator-tasks", {})
    assert "The first 5 of 1000 tasks" in listed.out
    from sums_env.tasks import make_task

    for seed in range(5):
        assert make_task(seed)["prompt"] in listed.out and f"'task_id': {seed}" in listed.out

    validated = cli("validate", "sums_env")
    assert validated.code == 0, validated.text
    assert "20 tasks checked (the first 20 of 1000): each resets" in validated.out

    (folder.parent / "adder.py").write_text(doc_block(DOC, "eval-generator-policy").code)
    try:
        played = run_command(cli, "eval-generator-run", {})
    finally:
        sys.modules.pop("adder", None)
    assert "Played 20 rollouts; 20 of 20 in sums-results" in played.out
    rows = read_rows(folder.parent / "sums-results")
    assert sorted({r["task_key"] for r in rows}, key=int) == [str(n) for n in range(10)]
    assert all(json.loads(r["reset"]) == {"task_id": int(r["task_key"])} for r in rows)
    assert all(r["passed"] for r in rows)  # each rollout's answer was its seed's sum


def test_a_manifest_dataset_taskset_as_printed(cli: Any, sums_env: Any, hub_env: Any) -> None:
    repo = hub_env.repo_id("word-tasks")
    api = hub_env.api()
    api.create_repo(repo, repo_type="dataset")
    for split, words in (("test", ["brick", "pious"]), ("train", ["mango"])):
        rows = [{"word": w, "reset": {"task_id": n}, "id": 99} for n, w in enumerate(words)]
        lines = "".join(json.dumps(row) + "\n" for row in rows).encode()
        api.upload_file(
            path_or_fileobj=lines, path_in_repo=f"data/{split}.jsonl", repo_id=repo,
            repo_type="dataset",
        )  # fmt: skip
    taskset = doc_block(DOC, "eval-manifest-dataset").code
    assert "my-org/word-tasks" in taskset
    sums_env(doc_block(DOC, "eval-generator").code, taskset.replace("my-org/word-tasks", repo))
    listed = cli("tasks", "sums_env")
    assert listed.code == 0, listed.text
    assert "brick" in listed.out and "pious" in listed.out and "2 tasks" in listed.out
    assert "mango" not in listed.out  # split train is not listed in splits
    validated = cli("validate", "sums_env")
    assert validated.code == 0, validated.text
    assert "2 tasks checked: each resets" in validated.out


def test_a_sampled_run_compared_and_pushed_as_printed(
    cli: Any, word_game: Any, documented: Path, child_server: Any, hub_env: Any
) -> None:
    model = child_server(fault_command(), "/requests")  # a scripted model at an OpenAI endpoint
    model_port = str(model.port)
    ports = {"8011": str(word_game.port), "8000": model_port, "my-model": "scripted"}
    sampled = run_command(cli, "eval-sampled", ports)
    assert "12 of 12 in sampled" in sampled.out
    settings = json.loads((documented / "sampled" / "run.json").read_text())
    assert settings["sampling"]["generation_config"] == '{"do_sample": true}'
    assert settings["max_retries"] == 6 and settings["request_timeout_s"] == 120

    run_command(cli, "eval-run", {"8011": str(word_game.port)})
    compared = run_command(cli, "eval-compare", {})
    assert "A = results, B = sampled: 3 tasks in common." in compared.out
    assert "paired sign-flip test p = " in compared.out

    repo = hub_env.repo_id("word-eval")
    pushed = run_command(cli, "eval-push", {"my-org/word-eval": repo})
    assert f"Pushed to {hub_env.endpoint}/datasets/{repo}" in pushed.out
