"""Tasksets: a folder of JSON Lines, a LocalHub dataset (``hf://datasets/NS/NAME``), and the
environment's own task routes, listed by ``openenv tasks`` and played by ``openenv eval``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_support import WORD_TASKS, read_rows

from openenv_hub.errors import ConfigurationError, DatasetNotFoundError, SpaceNotFoundError
from openenv_hub.eval import Task, load_tasks
from openenv_hub.trajectories import read_hub_records


def test_a_jsonl_folder_is_a_taskset_split_by_file_name(tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text('{"task_id": "a", "prompt": "P"}\n\n')
    (tmp_path / "test-00000.jsonl").write_text('{"id": 7, "reset": {"seed": 3}}\n')
    assert load_tasks(str(tmp_path)) == [
        Task(key="7", split="test", reset={"seed": 3}),
        Task(key="a", split="train", prompt="P", reset={"task_id": "a"}),
    ]
    assert [t.key for t in load_tasks(str(tmp_path), split="train")] == ["a"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"prompt": "no key"}\n', "has no key"),
        ('{"key": "a"}\n{"key": "a"}\n', "two tasks keyed 'a'"),
        ("not json\n", "test.jsonl:1 is not JSON"),
    ],
)
def test_a_bad_taskset_is_refused_with_what_is_wrong(
    tmp_path: Path, lines: str, message: str
) -> None:
    (tmp_path / "test.jsonl").write_text(lines)
    with pytest.raises(ConfigurationError, match=message):
        load_tasks(str(tmp_path))


def test_a_taskset_read_from_a_localhub_dataset(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    repo = hub_env.repo_id("word-tasks")
    api = hub_env.api()
    api.create_repo(repo, repo_type="dataset")
    lines = "".join(json.dumps(task) + "\n" for task in WORD_TASKS)
    api.upload_file(
        path_or_fileobj=lines.encode(), path_in_repo="data/test.jsonl", repo_id=repo,
        repo_type="dataset",
    )  # fmt: skip

    listed = cli("tasks", word_game.url, "--tasks", f"hf://datasets/{repo}")
    assert listed.code == 0, listed.text
    assert "3 tasks" in listed.out and "pious" in listed.out

    result = cli(
        "eval", word_game.url, "--policy", "guesser:guess", "--tasks", f"hf://datasets/{repo}",
        "-k", 4, "-c", 4, "-o", "results",
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = read_rows(workdir / "results")
    assert sorted({r["task_key"] for r in rows}) == ["brick", "crane", "pious"]
    assert len(rows) == 12 and {r["split"] for r in rows} == {"test"}


def test_a_missing_dataset_is_named_as_a_dataset_not_a_space(
    cli: Any, word_game: Any, hub_env: Any
) -> None:
    missing = hub_env.repo_id("no-such-tasks")
    with pytest.raises(DatasetNotFoundError, match=f"Dataset {missing} was not found") as raised:
        load_tasks(f"hf://datasets/{missing}")
    assert not isinstance(raised.value, SpaceNotFoundError)
    assert "If the dataset is private" in raised.value.hint
    with pytest.raises(DatasetNotFoundError, match=f"Dataset {missing} .*read trajectories"):
        read_hub_records(missing)

    listed = cli("tasks", word_game.url, "--tasks", f"hf://datasets/{missing}")
    assert listed.code == 1
    assert f"Dataset {missing} was not found" in listed.err, listed.err
    assert "Unexpected error" not in listed.err and "Traceback" not in listed.err


def test_tasks_listed_by_the_environment_start_with_reset_task_id(
    cli: Any, task_game: Any, workdir: Path
) -> None:
    listed = cli("tasks", task_game.url)
    assert listed.code == 0, listed.text
    assert "crane" in listed.out and "mango" in listed.out and "2 tasks" in listed.out

    result = cli("eval", task_game.url, "--policy", "guesser:guess", "-k", 2, "-o", "out")
    assert result.code == 0, result.text
    rows = read_rows(workdir / "out")
    assert {json.loads(r["reset"])["task_id"] for r in rows} == {"crane", "mango"}
    for row in rows:  # the secret word is the task's: a win means the task's word was guessed
        steps = json.loads(row["steps"])
        if row["passed"]:
            assert steps[-1]["action"]["word"] == row["task_key"]


def test_an_environment_without_tasks_needs_a_taskset(cli: Any, word_game: Any) -> None:
    result = cli("eval", word_game.url, "--policy", "guesser:guess")
    assert result.code != 0
    assert "does not list tasks" in result.text and "--tasks" in result.text


def test_a_row_may_give_its_reset_arguments_under_the_rfcs_name() -> None:
    """OpenEnv's RFC 006 calls a row's reset arguments ``openenv_reset``; ``reset`` wins."""
    from openenv_hub.eval import task_from_row

    assert task_from_row({"key": "a", "openenv_reset": {"seed": 3}}, "test").reset == {"seed": 3}
    both = {"key": "a", "reset": {"seed": 1}, "openenv_reset": {"seed": 3}}
    assert task_from_row(both, "test").reset == {"seed": 1}
    assert task_from_row({"key": "a"}, "test").reset == {"task_id": "a"}
