"""An agent that tries to raise its own reward: malformed, out-of-range and oversized actions,
steps before ``reset`` and after ``done``, and code that solves nothing (helpers of the prompt
redefined as the identity or as zero, an entry point that returns ``None``). The coding
environment's reward is in [0, 1] (a step without a task has none); no action may yield one
outside it. A custom ``reward_fn`` whose result leaves that range is rejected: the step fails,
naming the function and the value."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from coding_env import CodeAction, CodingEnv
from coding_env.models import MAX_CODE_CHARS
from coding_env.server.app import build_app
from coding_env.server.degenerate import KNOWN_EXPLOITS, degenerate_solutions
from coding_env.server.environment import CodingEnvironment
from coding_env.server.rewards import GradeResult
from coding_env.server.settings import SandboxSettings
from coding_env.server.tasks import TaskSet
from coding_support import LIMITS, Target, serve
from websockets.sync.client import connect

from openenv_hub.errors import EnvironmentExecutionError, ToolCallError

SOLUTION = TaskSet.humaneval().get("HumanEval/0")
SOLVED = SOLUTION.prompt + SOLUTION.canonical_solution


def _in_range(reward: float | None) -> bool:
    return reward is None or (math.isfinite(reward) and 0.0 <= reward <= 1.0)


def _frames(base_url: str, *messages: dict[str, Any] | str) -> list[dict[str, Any]]:
    """Raw frames over /ws, as a client that skips the typed models would send them."""
    url = base_url.replace("http://", "ws://") + "/ws"
    replies = []
    with connect(url, open_timeout=30, max_size=None) as socket:
        for message in messages:
            socket.send(message if isinstance(message, str) else json.dumps(message))
            replies.append(json.loads(socket.recv(timeout=60)))
    return replies


def test_a_step_before_reset_is_refused_and_earns_nothing(local_target: Target) -> None:
    (reply,) = _frames(local_target.base_url, {"type": "step", "data": {"code": SOLVED}})
    assert reply["type"] == "error", reply
    assert reply["data"]["reason"] == "reset_required"


def test_steps_after_done_stay_in_range_and_do_not_add_up(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        solved = env.step(CodeAction(code=SOLVED))
        assert (solved.reward, solved.done) == (1.0, True)
        rewards = [env.step(CodeAction(code=SOLVED)).reward for _ in range(3)]
        assert rewards == [1.0, 1.0, 1.0]
        broken = env.step(CodeAction(code="def has_close_elements(n, t):\n    raise ValueError"))
        assert (broken.reward, broken.done) == (0.0, False)


@pytest.mark.parametrize(
    "data",
    [
        {"code": 1e308},
        {"code": None},
        {"code": ["print(1)"]},
        {"code": "1", "reward": 1e9},
        {"code": "1", "metadata": {"reward": 1e9}, "done": True},
        {},
    ],
    ids=["number", "null", "list", "claimed-reward", "claimed-metadata", "missing"],
)
def test_malformed_actions_are_refused_or_gain_nothing(
    local_target: Target, data: dict[str, Any]
) -> None:
    reset, stepped = _frames(
        local_target.base_url,
        {"type": "reset", "data": {"task_id": "HumanEval/0"}},
        {"type": "step", "data": data},
    )
    assert reset["type"] == "observation"
    if stepped["type"] == "error":
        return
    assert stepped["data"]["reward"] == 0.0 and not stepped["data"]["done"], stepped


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_get_an_error(local_target: Target, number: str) -> None:
    frame = '{"type": "step", "data": {"code": ' + number + "}}"
    (stepped,) = _frames(local_target.base_url, frame)
    assert stepped["type"] == "error", stepped
    local_target.assert_serves()


@pytest.mark.parametrize(
    "task_id", [123, ["HumanEval/0"], "HumanEval/0" * 10_000, "../../etc/passwd"]
)
def test_bad_task_ids_get_an_error(local_target: Target, task_id: object) -> None:
    (reset,) = _frames(local_target.base_url, {"type": "reset", "data": {"task_id": task_id}})
    assert reset["type"] == "error", reset
    local_target.assert_serves()


def test_oversized_code_is_refused_and_the_server_serves(local_target: Target) -> None:
    _, stepped = _frames(
        local_target.base_url,
        {"type": "reset", "data": {"task_id": "HumanEval/0"}},
        {"type": "step", "data": {"code": "#" * (MAX_CODE_CHARS + 1)}},
    )
    assert stepped["type"] == "error" and "code" in json.dumps(stepped), stepped
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        huge_output = env.step(CodeAction(code="print('x' * 10**7)\n" + SOLVED))
        assert huge_output.reward == 1.0 and huge_output.observation.output_truncated
    local_target.assert_serves()


def test_the_tool_path_cannot_claim_a_reward(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset(task_id="HumanEval/0")
        with pytest.raises(ToolCallError, match="invalid_args"):
            env.call_tool("run_python", code="x = 1", reward=1.0)
        graded = env.call_tool("run_python", code=SOLVED)
        assert graded["reward"] == 1.0 and _in_range(graded["reward"])


@pytest.mark.parametrize("returned", [5.0, -1.0, math.nan, math.inf, "1.0", True])
def test_a_reward_fn_outside_the_range_is_rejected(returned: object) -> None:
    def generous(result: GradeResult) -> float:
        return returned  # type: ignore[return-value]

    app = build_app(SandboxSettings(**LIMITS), reward_fn=generous, web=False)  # type: ignore[arg-type]
    with serve(app) as base_url, CodingEnv(base_url=base_url).sync() as env:
        env.reset(task_id="HumanEval/0")
        with pytest.raises(EnvironmentExecutionError) as info:
            env.step(CodeAction(code=SOLVED))
        assert "reward_fn generous returned" in str(info.value)
        assert "[0, 1]" in str(info.value) or "not a number" in str(info.value)


@pytest.mark.parametrize(("task_id", "name"), sorted(KNOWN_EXPLOITS))
def test_a_non_solution_that_was_rewarded_passes_no_test(
    fraction_target: Target, task_id: str, name: str
) -> None:
    """Identity helpers earned 1.0 on HumanEval/38 and /50 and zero helpers on /32 (the tests
    called the candidate's encode_cyclic, encode_shift, poly); ``return None`` earned 2/7 on /83
    (``assert True, ...`` counted as a test). With the prompt's own helpers and only the asserts
    that name the candidate, none passes a single test, even where the reward is a fraction."""
    (solution,) = [
        s for s in degenerate_solutions(TaskSet.humaneval().get(task_id)) if s.name == name
    ]
    with fraction_target.client().sync() as env:
        env.reset(task_id=task_id)
        graded = env.step(CodeAction(code=solution.code))
    assert (graded.reward, graded.observation.passed) == (0.0, False), (KNOWN_EXPLOITS, graded)


_CHUNKS = 4


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_no_task_rewards_a_non_solution(chunk: int) -> None:
    """Every non-solution of every shipped task (coding_env.server.degenerate) earns 0 with the
    default reward; test_tasks.py shows every canonical solution earns 1 with the same grader."""
    tasks = TaskSet.humaneval()
    environment = CodingEnvironment.configured(SandboxSettings(**LIMITS), tasks=tasks)()  # type: ignore[arg-type]
    rewarded = []
    try:
        environment.reset()
        for task in list(tasks)[chunk::_CHUNKS]:
            environment._task = task
            for solution in degenerate_solutions(task):
                observation = environment.execute(solution.code)
                if observation.reward != 0.0 or observation.passed:
                    rewarded.append((task.task_id, solution.name, observation.reward))
    finally:
        environment.close()
    assert rewarded == []
