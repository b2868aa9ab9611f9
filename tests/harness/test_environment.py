"""HarnessEnvironment with a scripted harness and the fake engine: a fresh sandbox, work folder
and capture session per reset; a turn's events from the proxy's records; the grader after
each turn; a rollout that never called the model is a failure; the environment's tools reach
the harness through the bridge."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support.fake_engine import create_fake_engine
from scripted import ScriptedAdapter

from openenv_hub.capture import CaptureProxy
from openenv_hub.errors import ModelEngineError
from openenv_hub.harness import (
    NEVER_CALLED,
    HarnessAction,
    HarnessEnvironment,
    HarnessObservation,
    TestScriptGrader,
    read_tasks,
)
from openenv_hub.model.tools import tool

pytestmark = pytest.mark.timeout(120)


class Dictionary(HarnessEnvironment):
    @tool
    def lookup(self, word: str) -> str:
        """Look a word up (named like a built-in of the scripted harness)."""
        self.looked_up = [*getattr(self, "looked_up", []), word]
        return word.upper()


@pytest.fixture
def fake_engine(serve: Callable[..., Any]) -> Any:
    return serve(create_fake_engine())


@pytest.fixture
def fake_proxy(fake_engine: Any) -> Iterator[CaptureProxy]:
    engine = fake_engine
    proxy = CaptureProxy(engine_url=f"{engine.url}/v1", model="fake").start()
    yield proxy
    proxy.stop()


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    for name, solved in (("write-hello", False), ("already-solved", True)):
        task = tmp_path / "tasks" / name
        (task / "tests").mkdir(parents=True)
        (task / "instruction.md").write_text("Write hello.txt with the line hello in it.\n")
        (task / "tests" / "test.sh").write_text("grep -qx hello /workspace/hello.txt\n")
        if solved:
            (task / "workspace").mkdir()
            (task / "workspace" / "hello.txt").write_text("hello\n")
    return tmp_path / "tasks"


@pytest.fixture
def make_env(
    fake_proxy: CaptureProxy, tasks: Path, tmp_path: Path
) -> Iterator[Callable[..., HarnessEnvironment]]:
    made: list[HarnessEnvironment] = []

    def make(cls: type[HarnessEnvironment] = HarnessEnvironment, **script: Any) -> Any:
        adapter = ScriptedAdapter(tmp_path / f"script{len(made)}", **script)
        env = cls(adapter, proxy=fake_proxy, tasks=read_tasks(tasks))
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def turn(env: HarnessEnvironment, message: str = "go") -> HarnessObservation:
    observation = env.step(HarnessAction(message=message))
    assert isinstance(observation, HarnessObservation)
    return observation


def test_a_turn_is_graded_and_told_from_the_proxy_records(make_env: Callable[..., Any]) -> None:
    env = make_env(calls=2)
    assert env.reset(task_id="write-hello").instruction.startswith("Write hello.txt")
    observation = turn(env)
    assert (observation.reward, observation.passed) == (1.0, True)
    assert observation.grade == "test.sh exited 0; reward 1"
    assert (observation.model_calls, observation.total_model_calls) == (2, 2)
    kinds = [e["type"] for e in observation.turn_events]
    assert kinds.count("llm_request") == 2 and kinds.count("llm_response") == 2
    assert kinds[-1] == "turn_complete" and "text_output" in kinds
    assert observation.response == "done after 2 calls" and observation.exit_code == 0
    assert observation.capture["calls"] == 2 and observation.capture["ok"]
    assert env.state.step_count == 1 and len(env.trajectory) == len(kinds)


def test_a_rollout_that_never_called_the_model_is_a_failure(make_env: Callable[..., Any]) -> None:
    env = make_env(calls=0, write=False)
    env.reset(task_id="already-solved")
    observation = turn(env)
    # The work folder passes the hidden test, but the harness never asked the model anything.
    assert observation.grade == "test.sh exited 0; reward 1"
    assert (observation.reward, observation.passed) == (0.0, False)
    assert observation.message == NEVER_CALLED and observation.total_model_calls == 0


@pytest.mark.parametrize("status", [500, 503])
def test_an_engine_outage_is_an_infrastructure_error_not_a_result(
    make_env: Callable[..., Any], fake_engine: Any, status: int
) -> None:
    """The engine failing the harness's call must not let the untouched work folder (here one
    that passes the hidden test) be scored as the model's work."""
    env = make_env(calls=1, write=False)
    env.reset(task_id="already-solved")
    fake_engine.app.state.status = status
    with pytest.raises(ModelEngineError, match="the model engine failed 1 of the rollout's 1"):
        turn(env)
    assert env.capture is not None and env.capture.calls[0].engine_failed


def test_calls_the_engine_refused_do_not_count_as_calling_the_model(
    make_env: Callable[..., Any], fake_engine: Any
) -> None:
    env = make_env(calls=1, write=False)
    env.reset(task_id="already-solved")
    fake_engine.app.state.status = 400  # the harness's request refused: its doing, not an outage
    observation = turn(env)
    assert (observation.reward, observation.passed) == (0.0, False)
    assert observation.message == NEVER_CALLED and observation.total_model_calls == 0


def _reward_test(folder: Path, written: str, exit_code: int = 0) -> Path:
    folder.mkdir(parents=True)
    script = f"printf '%s\\n' '{written}' > /logs/verifier/reward.txt\nexit {exit_code}\n"
    (folder / "test.sh").write_text(script)
    return folder


@pytest.mark.parametrize("written", ["nan", "inf", "-inf", "5.0", "-0.5", "lots", ""])
def test_a_reward_file_that_is_no_number_in_range_is_a_grading_error(
    tmp_path: Path, written: str
) -> None:
    """A test that exits 0 but writes nan (or 5, or a word) must not pass the task, whether
    by the exit code's reward or by clamping."""
    (tmp_path / "workspace").mkdir()
    grade = TestScriptGrader(_reward_test(tmp_path / "tests", written)).grade(
        tmp_path / "workspace"
    )
    assert (grade.reward, grade.passed) == (0.0, False)
    assert grade.error == f"reward.txt holds {written!r}, not a number in [0, 1]"


def test_a_reward_in_range_is_the_reward_and_no_file_falls_back_to_the_exit_code(
    tmp_path: Path,
) -> None:
    (tmp_path / "workspace").mkdir()
    half = TestScriptGrader(_reward_test(tmp_path / "half", "0.5")).grade(tmp_path / "workspace")
    assert (half.reward, half.passed, half.error) == (0.5, False, None)
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "test.sh").write_text("exit 0\n")
    none = TestScriptGrader(tmp_path / "none").grade(tmp_path / "workspace")
    assert (none.reward, none.passed, none.error) == (1.0, True, None)


def test_a_grading_error_is_named_in_the_observation(
    fake_proxy: CaptureProxy, tasks: Path, tmp_path: Path
) -> None:
    grader = TestScriptGrader(_reward_test(tmp_path / "nan-test", "nan"))
    adapter = ScriptedAdapter(tmp_path / "script", calls=1)
    env = HarnessEnvironment(adapter, proxy=fake_proxy, tasks=read_tasks(tasks), grader=grader)
    try:
        env.reset(task_id="write-hello")
        observation = turn(env)
    finally:
        env.close()
    assert (observation.reward, observation.passed) == (0.0, False)
    assert observation.metadata["reward_error"] == "reward.txt holds 'nan', not a number in [0, 1]"


def test_each_reset_is_a_fresh_sandbox_folder_and_capture_session(
    make_env: Callable[..., Any], fake_proxy: CaptureProxy
) -> None:
    env = make_env(calls=1)
    env.reset(task_id="write-hello")
    turn(env)
    first_session, first_folder = env.capture, env.folder
    assert first_session is not None and first_folder is not None
    env.reset(task_id="write-hello")
    assert env.capture is not first_session and not first_folder.exists()
    assert not (env.workspace / "hello.txt").exists()
    # The last episode's key is revoked: the proxy refuses it.
    reply = httpx.post(
        f"{fake_proxy.base_url}/chat/completions",
        json={"model": "fake", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {first_session.key}"},
        timeout=10,
    )
    assert reply.status_code == 401
    assert len(first_session.calls) == 1  # its records stay readable


def test_the_environment_tools_reach_the_harness_through_the_bridge(
    make_env: Callable[..., Any],
) -> None:
    env = make_env(Dictionary, calls=1, tool="env_lookup")
    env.reset(task_id="write-hello")
    assert [t.name for t in env.bridge.tools] == ["env_lookup"]  # clashes with a built-in
    observation = turn(env)
    assert "TEA" in "".join(e["data"].get("text", "") for e in observation.turn_events)
    assert env.looked_up == ["tea"] and env.bridge.calls == ["env_lookup"]


def test_bad_requests_get_clear_errors(make_env: Callable[..., Any]) -> None:
    env = make_env()
    with pytest.raises(ValueError, match="unknown task_id 'nope'; the tasks are: already-solved"):
        env.reset(task_id="nope")
    with pytest.raises(RuntimeError, match="reset the environment before sending a turn"):
        turn(env)
    with pytest.raises(ValueError):
        HarnessAction(message="")
