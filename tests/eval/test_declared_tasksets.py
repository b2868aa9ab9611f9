"""The taskset an environment's manifest declares: a generator keyed by seed, reproducible and
started by ``reset(task_id=seed)``; ``openenv validate`` resets the declared tasks and names
those that do not; what it refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from eval_support import sums_env

from openenv_hub.errors import ConfigurationError

__all__ = ["sums_env"]  # fixtures

GENERATOR = doc_block("docs/eval.md", "eval-generator").code

UNREPRODUCIBLE = """
import itertools

CALLS = itertools.count(10)


def make_task(seed):
    a = next(CALLS)  # global state: another task each time, whatever the seed
    return {"prompt": f"What is {a} + 1?", "answer": a + 1}
"""


def test_a_seed_makes_the_same_task_and_reset_task_id_starts_it(
    cli: Any, sums_env: Any, serve: Any
) -> None:
    from openenv_hub.eval import declared_tasks

    folder = sums_env(GENERATOR, "taskset:\n  generator: sums_env.tasks:make_task\n  size: 50\n")
    first = declared_tasks(folder, limit=4)
    assert first is not None and first.total == 50
    assert [t.key for t in first.tasks] == ["0", "1", "2", "3"]
    assert [t.reset for t in first.tasks] == [{"task_id": n} for n in range(4)]
    again = declared_tasks(folder, limit=4)
    assert again is not None and again.tasks == first.tasks
    assert len({t.prompt for t in first.tasks}) == 4

    from sums_env.server.app import app

    from openenv_hub.client import GenericEnvClient

    server = serve(app)
    with GenericEnvClient(base_url=server.url).sync() as client:
        shown = [client.reset(task_id=3).observation["echoed_message"] for _ in range(2)]
    assert shown == [first.tasks[3].prompt] * 2


def test_validate_names_each_declared_task_that_does_not_reset(cli: Any, sums_env: Any) -> None:
    folder = sums_env(GENERATOR, "taskset:\n  source: tasks\n")
    (folder / "tasks").mkdir()
    rows = [{"key": "a", "reset": {"task_id": 1}}, {"key": "bad", "reset": {"task_id": "oops"}}]
    (folder / "tasks" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = cli("validate", "sums_env", "--json")
    assert result.code == 1
    checks = {c["name"]: c for c in json.loads(result.out)["checks"]}
    assert checks["taskset"]["ok"] and checks["taskset"]["message"] == "2 tasks from tasks"
    failed = checks["tasks_reset"]
    assert not failed["ok"] and failed["message"].startswith("1 of 2 tasks checked do not reset")
    assert 'test/bad with {"task_id": "oops"}: HTTP' in failed["message"]
    assert "test/a" not in failed["message"]


def test_validate_refuses_a_generator_that_is_not_reproducible(cli: Any, sums_env: Any) -> None:
    sums_env(UNREPRODUCIBLE, "taskset:\n  generator: sums_env.tasks:make_task\n")
    result = cli("validate", "sums_env", "--json")
    assert result.code == 1
    (check,) = [c for c in json.loads(result.out)["checks"] if c["name"] == "taskset"]
    assert "made two different tasks from seed 0" in check["message"]
    assert "random.Random(seed)" in check["hint"]


def test_a_taskset_folder_outside_the_environment_is_refused(cli: Any, sums_env: Any) -> None:
    from openenv_hub.eval import declared_tasks

    folder = sums_env(GENERATOR, "taskset:\n  source: ../elsewhere\n")
    (folder.parent / "elsewhere").mkdir()
    (folder.parent / "elsewhere" / "test.jsonl").write_text('{"key": "a"}\n')
    with pytest.raises(ConfigurationError, match="is outside the environment folder"):
        declared_tasks(folder)
    listed = cli("tasks", "sums_env")
    assert listed.code != 0 and "outside the environment folder" in listed.text


def test_a_generator_split_other_than_asked_and_a_missing_generator(
    cli: Any, sums_env: Any, tmp_path: Path
) -> None:
    sums_env(GENERATOR, "taskset:\n  generator: sums_env.tasks:no_such\n")
    result = cli("tasks", "sums_env")
    assert result.code != 0 and "has no function 'no_such'" in result.text
    (tmp_path / "sums_env" / "openenv.yaml").write_text(
        (tmp_path / "sums_env" / "openenv.yaml").read_text().replace("no_such", "make_task")
    )
    result = cli("tasks", "sums_env", "--split", "train")
    assert result.code != 0 and "makes split 'test', not 'train'" in result.text
