"""``CodingEnv``: the typed client of the coding environment."""

from __future__ import annotations

from typing import Any

from coding_env.models import CodeObservation, CodingState
from openenv_hub import MCPToolClient
from openenv_hub.client import observation_fields, step_result
from openenv_hub.types import Observation, StepResult


class CodingEnv(MCPToolClient):
    """Client of the coding environment: ``CodeAction`` steps and MCP tool calls.

    Example::

        async with CodingEnv(base_url="http://127.0.0.1:8000") as env:
            await env.reset(task_id="HumanEval/0")
            result = await env.step(CodeAction(code="x = 6 * 7\\nx"))
            result.observation.result  # "42"
            await env.call_tool("list_files")  # {"files": [...], "truncated": False}
    """

    state_type = CodingState

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        fields = observation_fields(payload)
        if "tools" in fields or "tool_name" in fields:
            return super()._parse_result(payload)
        return step_result(payload, CodeObservation.model_validate(fields))


__all__ = ["CodingEnv"]
