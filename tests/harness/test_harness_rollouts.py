"""The harnesses, installed from their packages and unmodified, run in their sandbox against vLLM
through the capture proxy: mini-swe-agent solves a task end to end with the tiny model
fine-tuned to do it; Claude Code and Codex CLI each run a rollout to its end (their first
request is tens of thousands of tokens: one rollout each), every call captured with no fatal
grade, the task's hidden test run after each turn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_support.fixtures import ENGINE_TIMEOUT_S
from harness_model import REPLY_TASK, SOLVE_TASK
from harness_support import CLAUDE, CODEX, MINI, MINI_CONFIG, WithTool, installed

from openenv_hub import create_app
from openenv_hub.capture import CaptureProxy
from openenv_hub.client import GenericEnvClient
from openenv_hub.harness import (
    ClaudeCodeAdapter,
    CodexAdapter,
    HarnessAction,
    HarnessConfig,
    HarnessEnvironment,
    HarnessEventType,
    HarnessObservation,
    MiniSweAgentAdapter,
    read_tasks,
)
from openenv_hub.rubrics import rubric

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]


def mini() -> MiniSweAgentAdapter:
    config = HarnessConfig(name="mini-swe-agent", model="openai/tiny", max_turns=6)
    return MiniSweAgentAdapter(config, executable=installed(MINI), config_file=MINI_CONFIG)


def event_types(observation: object) -> list[str]:
    return [e["type"] for e in observation.turn_events]  # type: ignore[attr-defined]


def test_mini_swe_agent_solves_a_task_end_to_end(
    harness_proxy: CaptureProxy, task_root: Path
) -> None:
    env = HarnessEnvironment(mini(), proxy=harness_proxy, tasks=read_tasks(task_root))
    try:
        first = env.reset(task_id="write-hello")
        assert first.instruction == SOLVE_TASK
        observation = env.step(HarnessAction(message=first.instruction))
        assert env.workspace is not None
        assert (env.workspace / "hello.txt").read_text() == "hello\n"
        assert (observation.reward, observation.passed, observation.done) == (1.0, True, True)
        assert observation.model_calls == 2 and observation.response.startswith("Submitted")
        # Both calls are one training sequence of the engine's own ids, graded sound.
        assert observation.capture["ok"] and observation.capture["sequences"] == 1
        assert env.capture is not None
        [sequence] = env.capture.sequences()
        sampled = sum(len(call.sampled_ids) for call in env.capture.calls)
        assert sum(sequence.loss_mask) == sampled == len([p for p in sequence.logprobs if p])
        assert event_types(observation).count("llm_request") == 2
        tool_calls = [e for e in observation.turn_events if e["type"] == "tool_call"]
        assert [c["data"]["arguments"]["command"] for c in tool_calls] == [
            "printf 'hello\\n' > hello.txt",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        ]
        assert event_types(observation)[-1] == "turn_complete"
    finally:
        env.close()


@rubric(range=(0.0, 1.0))
def half_for_a_pass(observation: HarnessObservation) -> float:
    """A rubric of the test's own: 0.5 for a turn whose hidden test passed."""
    return 0.5 if observation.passed else 0.0


async def test_mini_swe_agent_served_one_turn_a_step_scored_by_a_rubric(
    harness_proxy: CaptureProxy, task_root: Path, serve: Callable[..., Any]
) -> None:
    factory = HarnessEnvironment.factory(
        mini, proxy=harness_proxy, tasks=read_tasks(task_root), rubric=half_for_a_pass
    )
    served = serve(create_app(factory))
    async with GenericEnvClient(served.url) as env:
        first = await env.reset(task_id="write-hello")
        assert first.observation["instruction"] == SOLVE_TASK
        result = await env.step({"message": SOLVE_TASK})
        observation = result.observation
        assert observation["passed"] is True and observation["model_calls"] == 2
        assert result.reward == 0.5 and result.done  # the rubric's score, after the turn
        assert observation["capture"]["ok"] and observation["capture"]["sequences"] == 1
        kinds = [e["type"] for e in observation["turn_events"]]
        assert kinds.count("llm_request") == 2 and kinds[-1] == "turn_complete"


def test_claude_code_runs_two_turns_to_their_end(
    harness_proxy: CaptureProxy, task_root: Path
) -> None:
    config = HarnessConfig(
        name="claude-code", model="claude-sonnet-4-5", max_turns=2, max_output_tokens=48
    )
    adapter = ClaudeCodeAdapter(config, executable=installed(CLAUDE))
    env = WithTool(adapter, proxy=harness_proxy, tasks=read_tasks(task_root))
    try:
        env.reset(task_id="write-hello")
        turns = [env.step(HarnessAction(message=REPLY_TASK)) for _ in range(2)]
        for turn in turns:
            assert turn.exit_code == 0 and turn.model_calls == 1, turn.response
            assert turn.response == "done"
            assert turn.capture["ok"], turn.capture
            assert turn.passed is not None and turn.grade.startswith("test.sh exited")
            kinds = event_types(turn)
            assert {"llm_request", "llm_response", "text_output"} <= set(kinds)
            assert kinds[-1] == "turn_complete"
        assert env.capture is not None
        calls = env.capture.calls
        assert all(c.wire == "messages" and c.streamed and c.error is None for c in calls)
        assert all(c.finish_reason == "stop" for c in calls)  # the model ended its answers
        assert len(calls[0].prompt_ids) > 20_000  # its whole system prompt and tools
        # It reached the tool bridge over MCP and lists the environment's tool among its own.
        assert "mcp__openenv__lookup" in calls[0].messages[-1]["content"]
        # The second turn continues the first one's conversation (--continue).
        assert calls[turns[0].model_calls].continues is not None
    finally:
        env.close()


def test_codex_runs_a_rollout_to_its_end_and_its_lookups_are_refused(
    harness_proxy: CaptureProxy, task_root: Path
) -> None:
    adapter = CodexAdapter(executable=installed(CODEX))
    env = WithTool(adapter, proxy=harness_proxy, tasks=read_tasks(task_root))
    try:
        env.reset(task_id="write-hello")
        turn = env.step(HarnessAction(message=REPLY_TASK))
        assert turn.exit_code == 0 and turn.model_calls == 1 and turn.response == "done"
        assert turn.capture["ok"], turn.capture
        assert turn.passed is False and turn.reward == 0.0  # it was not asked to solve it
        assert turn.grade.startswith("test.sh exited")
        assert env.capture is not None
        [call] = env.capture.calls
        assert call.wire == "responses" and call.streamed and call.finish_reason == "stop"
        assert len(call.prompt_ids) > 10_000  # its instructions and tools
        assert "lookup" in call.tools  # the environment's tool, from the bridge over MCP
        # Codex looks for github.com at start: refused by the sandbox, and reported.
        assert "github.com" in turn.refused
        errors = [e for e in turn.turn_events if e["type"] == HarnessEventType.ERROR.value]
        assert any(e["data"].get("refused") == "github.com" for e in errors)
    finally:
        env.close()
