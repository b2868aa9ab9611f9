"""An LLM-as-judge rubric against a deterministic judge served on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openenv_hub import Action, Environment, GenericEnvClient, Observation, State, create_app
from openenv_hub.errors import EnvironmentExecutionError, JudgeError
from openenv_hub.rubrics import Gate, LLMJudge, OpenAIJudge, Step, Trajectory, rubric
from openenv_hub.testing.judge import judge_app

KEY = "judge-secret-123"
PROMPT = "Rate the politeness of this reply from 0 to 10: {action}\nAnswer with a number."


def politeness(prompt: str) -> str:
    """The judge's deterministic grade: 4 points per 'please', at most 10."""
    return f"Score: {min(prompt.count('please') * 4, 10)}/10"


class Reply(Action):
    text: str


class Replies(Environment[Reply, Observation, State]):
    """Every reply is graded by the judge, but only when it is not empty."""

    def __init__(self) -> None:
        self._state = State()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kw: Any
    ) -> Observation:
        return Observation()

    def step(self, action: Reply, timeout_s: float | None = None, **kw: Any) -> Observation:
        self._state.step_count += 1
        return Observation()

    @property
    def state(self) -> State:
        return self._state


@rubric
def not_empty(action: Reply) -> float:
    return float(bool(action.text.strip()))


@pytest.fixture
def judge(serve: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TEST_JUDGE_KEY", KEY)
    server = serve(judge_app(politeness, api_key=KEY))
    return server


def judged_env(judge_url: str, **options: Any) -> type[Replies]:
    judge = OpenAIJudge(f"{judge_url}/v1", model="judge", api_key_env="TEST_JUDGE_KEY")

    class Judged(Replies):
        rubric = Gate(not_empty, LLMJudge(PROMPT, judge, max_score=10, name="polite", **options))

    return Judged


async def test_the_judge_grades_each_reply(serve: Any, judge: Any) -> None:
    server = serve(create_app(judged_env(judge.url), Reply))
    async with GenericEnvClient(server.url) as env:
        await env.reset()
        texts = ["please, please help", "", "no", "please please please"]
        results = [await env.step({"text": t}) for t in texts]
    assert [r.reward for r in results] == pytest.approx([0.8, 0.0, 0.0, 1.0])
    assert results[0].metadata == {"reward_breakdown": {"not_empty": 1.0, "polite": 0.8}}
    assert results[1].metadata == {"reward_breakdown": {"not_empty": 0.0}}  # the gate stayed shut
    prompts = judge.app.state.prompts
    assert len(prompts) == 3  # the empty reply was never sent to the judge
    assert prompts[0] == PROMPT.format(action=json.dumps({"text": "please, please help"}))


async def test_judge_failures_reach_the_agent_as_a_generic_error(
    serve: Any, judge: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The judge's URL and what it answered stay in the server's log: the agent learns only
    that the step could not be scored."""
    unreachable = judge.url.replace(str(judge.port), "9")
    server = serve(create_app(judged_env(unreachable), Reply))
    async with GenericEnvClient(server.url) as env:
        await env.reset()
        with pytest.raises(EnvironmentExecutionError) as failed:
            await env.step({"text": "please"})
    generic = (
        "Rubric 'gate' could not score this step (JudgeError); the details are in the "
        "environment server's log."
    )
    assert str(failed.value) == generic
    assert f"The judge at {unreachable}/v1/chat/completions could not be reached" in caplog.text

    monkeypatch.setenv("TEST_JUDGE_KEY", "wrong-key-456")  # the judge answers 401 and why
    server = serve(create_app(judged_env(judge.url), Reply))
    async with GenericEnvClient(server.url) as env:
        await env.reset()
        with pytest.raises(EnvironmentExecutionError) as failed:
            await env.step({"text": "please"})
    assert str(failed.value) == generic
    assert "answered HTTP 401" in caplog.text and "Invalid API key" in caplog.text
    assert KEY not in caplog.text and "wrong-key-456" not in caplog.text


async def test_a_wrong_key_and_a_missing_key_are_judge_errors(
    judge: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    polite = LLMJudge(
        PROMPT, OpenAIJudge(f"{judge.url}/v1", model="j", api_key_env="TEST_JUDGE_KEY")
    )
    step = Trajectory([Step(action=Reply(text="please"), observation=Observation())])
    monkeypatch.setenv("TEST_JUDGE_KEY", "wrong")
    with pytest.raises(JudgeError, match="answered HTTP 401"):
        await polite.evaluate(step)
    monkeypatch.delenv("TEST_JUDGE_KEY")
    with pytest.raises(JudgeError, match=r"\$TEST_JUDGE_KEY is not set") as missing:
        await polite.evaluate(step)
    assert missing.value.hint == "Export TEST_JUDGE_KEY=<key> where the environment server runs."


async def test_an_answer_without_a_number(serve: Any) -> None:
    server = serve(judge_app(lambda prompt: "I cannot grade this."))
    judge = OpenAIJudge(f"{server.url}/v1", model="judge")
    step = Trajectory([Step(action=Reply(text="hi"), observation=Observation())])
    with pytest.raises(JudgeError, match=r"holds no number: 'I cannot grade this\.'"):
        await LLMJudge(PROMPT, judge).evaluate(step)
    assert (await LLMJudge(PROMPT, judge, default=0.25).evaluate(step)).reward == 0.25
