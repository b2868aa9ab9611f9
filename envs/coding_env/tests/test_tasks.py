"""Graded tasks: hidden tests run inside the sandbox, reward through the WebSocket client, task
sets from HumanEval, a JSONL file and a Hub dataset (LocalHub), and the reward hook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from coding_env import CodeAction, CodingEnv
from coding_env.server.app import build_app
from coding_env.server.environment import CodingEnvironment
from coding_env.server.rewards import GradeResult
from coding_env.server.settings import SandboxSettings
from coding_env.server.tasks import TaskFormatError, TaskSet, load_tasks
from coding_support import LIMITS, Target, serve

from openenv_hub.errors import EnvironmentExecutionError

CORRECT = """
def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
"""
WRONG = "def has_close_elements(numbers, threshold):\n    return False"
LOOPS = "def has_close_elements(numbers, threshold):\n    while True:\n        pass"
TASK = {
    "task_id": "Local/add",
    "prompt": "def add(a: int, b: int) -> int:\n    '''Add two numbers.'''\n",
    "entry_point": "add",
    "canonical_solution": "    return a + b\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
}


def test_rewards_through_the_websocket_client(local_target: Target) -> None:
    with local_target.client().sync() as env:
        first = env.reset(task_id="HumanEval/0").observation
        assert first.prompt.startswith("from typing import List") and first.tests_total == 7
        assert "has_close_elements" in first.message
        missing = env.step(CodeAction(code="x = 1"))
        assert (missing.reward, missing.observation.passed) == (0.0, False)
        wrong = env.step(CodeAction(code=WRONG))  # passes 3 of 7: all or nothing, by default
        assert (wrong.reward, wrong.done, wrong.observation.passed) == (0.0, False, False)
        right = env.step(CodeAction(code=CORRECT))
        assert (right.reward, right.done, right.observation.passed) == (1.0, True, True)
        looping = env.step(CodeAction(code=LOOPS))
        assert looping.reward == 0.0 and looping.observation.timed_out
        assert "ran out of" in looping.observation.message
        assert not looping.observation.context_lost  # the tests ran in a copy of the session
        assert env.state().task_id == "HumanEval/0"


def test_the_tool_grades_too(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        graded = env.call_tool("run_python", code=CORRECT)
        assert (graded["reward"], graded["passed"], graded["done"]) == (1.0, True, True)
        assert "tests_passed" not in graded
        listed = env.call_tool("list_tasks", offset=163, limit=5)
        assert listed["total"] == 164 and listed["source"] == "humaneval"
        assert listed["tasks"] == [{"task_id": "HumanEval/163", "entry_point": "generate_integers"}]


def test_an_unknown_task_says_what_exists(local_target: Target) -> None:
    with local_target.client().sync() as env, pytest.raises(EnvironmentExecutionError) as info:
        env.reset(task_id="HumanEval/1000")
    assert "Did you mean" in str(info.value) and "list_tasks" in str(info.value)


def test_the_task_api_shows_prompts_never_tests(local_target: Target) -> None:
    reply = httpx.post(
        f"{local_target.base_url}/coding_env/task", json={"split": "test", "index": 0}
    )
    task = reply.json()["task"]
    assert set(task) == {"task_id", "prompt", "entry_point"} and task["task_id"] == "HumanEval/0"


def test_every_humaneval_solution_scores_one() -> None:
    """Each task's canonical solution passes its tests, graded with the prompt's own helpers and
    only the asserts that name the candidate (see test_adversarial.py for the non-solutions)."""
    tasks = TaskSet.humaneval()
    assert len(tasks) == 164
    environment = CodingEnvironment.configured(SandboxSettings(**LIMITS), tasks=tasks)()  # type: ignore[arg-type]
    try:
        environment.reset()
        failed = []
        for task in tasks:
            environment._task = task
            observation = environment.execute(task.prompt + task.canonical_solution)
            if (observation.reward, observation.passed) != (1.0, True):
                failed.append((task.task_id, observation.message))
        assert failed == []
    finally:
        environment.close()


def _write_jsonl(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_jsonl_task_set_served(tmp_path: Path) -> None:
    tasks = TaskSet.from_jsonl(_write_jsonl(tmp_path / "tasks.jsonl", TASK))
    app = build_app(SandboxSettings(**LIMITS), tasks=tasks, web=False)  # type: ignore[arg-type]
    with serve(app) as base_url, CodingEnv(base_url=base_url).sync() as env:
        assert env.reset(task_id="Local/add").observation.tests_total == 2
        solved = env.step(CodeAction(code=TASK["prompt"] + TASK["canonical_solution"]))
        assert solved.reward == 1.0
        half = env.step(CodeAction(code="def add(a, b):\n    return 3"))
        assert (half.reward, half.observation.passed) == (0.0, False)


def test_bad_task_files_name_the_line(tmp_path: Path) -> None:
    broken = {**TASK, "test": "assert True"}
    with pytest.raises(TaskFormatError, match=r"tasks.jsonl:2: 'test' does not define check"):
        TaskSet.from_jsonl(_write_jsonl(tmp_path / "tasks.jsonl", TASK, broken))
    with pytest.raises(TaskFormatError, match="missing or empty entry_point"):
        TaskSet.from_jsonl(_write_jsonl(tmp_path / "t.jsonl", {**TASK, "entry_point": ""}))
    vacuous = {**TASK, "test": "def check(candidate):\n    assert True, 'for debugging'\n"}
    with pytest.raises(TaskFormatError, match=r"v.jsonl:1: no statement of check\(\) asserts"):
        TaskSet.from_jsonl(_write_jsonl(tmp_path / "v.jsonl", vacuous))


def test_a_task_set_from_a_hub_dataset(hub_env: Any, tmp_path: Path) -> None:
    api = hub_env.api("alice")
    repo_id = hub_env.repo_id("coding-tasks")
    api.create_repo(repo_id, repo_type="dataset")
    source = _write_jsonl(tmp_path / "tasks.jsonl", TASK, {**TASK, "task_id": "Local/add2"})
    api.upload_file(
        path_or_fileobj=str(source),
        path_in_repo="data/tasks.jsonl",
        repo_id=repo_id,
        repo_type="dataset",
    )
    found = load_tasks(f"hf:{repo_id}")
    assert [t.task_id for t in found] == ["Local/add", "Local/add2"]
    assert found.source == f"hf:{repo_id}/data/tasks.jsonl"
    named = load_tasks(f"hf:{repo_id}/data/tasks.jsonl")
    assert len(named) == 2


def test_a_custom_reward_function() -> None:
    def most_passed(result: GradeResult) -> float:
        return 1.0 if result.passed * 2 > result.total else 0.0

    tasks = TaskSet.humaneval()
    environment = CodingEnvironment.configured(
        SandboxSettings(**LIMITS),  # type: ignore[arg-type]
        tasks=tasks,
        reward_fn=most_passed,
    )()
    try:
        environment.reset(task_id="HumanEval/0")
        assert environment.step(CodeAction(code=WRONG)).reward == 0.0  # 3 of 7
        half = "def has_close_elements(numbers, threshold):\n    return True\n"  # 4 of 7
        assert environment.step(CodeAction(code=half)).reward == 1.0
    finally:
        environment.close()
