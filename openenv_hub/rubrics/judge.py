"""LLM-as-judge: a rubric that asks a language model to grade a step.

The model is reached through a :class:`Judge`, anything with ``async def complete(prompt) ->
str``. :class:`OpenAIJudge` speaks to any OpenAI-compatible ``/chat/completions`` endpoint
(OpenAI, vLLM, TGI, llama.cpp, Ollama ...); tests pass a deterministic server on 127.0.0.1.

Example::

    judge = OpenAIJudge("http://127.0.0.1:8001/v1", model="qwen", api_key_env="JUDGE_API_KEY")
    polite = LLMJudge(
        "Rate the politeness of this reply from 0 to 10: {action}\\nAnswer with a number.",
        judge,
        max_score=10,
        name="politeness",
    )

Layer: model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import httpx

from openenv_hub.errors import JudgeError
from openenv_hub.rubrics.base import Rubric, Step
from openenv_hub.support.settings import named_variable

__all__ = ["Judge", "JudgeError", "LLMJudge", "OpenAIJudge"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@runtime_checkable
class Judge(Protocol):
    """A language model that answers a prompt with text."""

    async def complete(self, prompt: str) -> str: ...


class OpenAIJudge:
    """A judge behind an OpenAI-compatible chat completions endpoint.

    Args:
        base_url: The API root, e.g. ``http://127.0.0.1:8001/v1`` (``/chat/completions`` is
            appended).
        model: The model name the endpoint serves.
        api_key_env: The environment variable holding the API key, read at each call (the key
            is never stored on the object, logged or shown). None for endpoints without keys.
        system_prompt: An optional system message sent before each prompt.
        temperature: Sampling temperature; 0 for repeatable grades.
        max_tokens: Longest answer requested.
        timeout_s: Time allowed for each request.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key_env: str | None = None,
        system_prompt: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 64,
        timeout_s: float = 30.0,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s

    def _headers(self) -> dict[str, str]:
        if self.api_key_env is None:
            return {}
        key = named_variable(self.api_key_env)
        if not key:
            raise JudgeError(
                f"The judge's API key variable ${self.api_key_env} is not set",
                url=self.url,
                hint=f"Export {self.api_key_env}=<key> where the environment server runs.",
            )
        return {"Authorization": f"Bearer {key}"}

    async def complete(self, prompt: str) -> str:
        """Send ``prompt`` as a user message; return the first choice's text."""
        messages = [{"role": "user", "content": prompt}]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, trust_env=False) as client:
                response = await client.post(self.url, json=body, headers=self._headers())
        except httpx.HTTPError as exc:
            raise JudgeError(
                f"The judge at {self.url} could not be reached: {type(exc).__name__}: {exc}",
                url=self.url,
                hint="Check that the judge server runs and that base_url ends with its API root "
                "(often '/v1').",
            ) from exc
        if response.status_code != 200:
            raise JudgeError(
                f"The judge at {self.url} answered HTTP {response.status_code}: "
                f"{response.text[:300]}",
                url=self.url,
            )
        return _first_choice(response, self.url)

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.url!r}, model={self.model!r})"


def _first_choice(response: httpx.Response, url: str) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise JudgeError(
            f"The judge at {url} did not answer like a chat completions endpoint: "
            f"{response.text[:300]}",
            url=url,
        ) from None
    return str(content or "")


def _as_json(value: Any) -> str:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude={"metadata"})
    return json.dumps(value, default=str, ensure_ascii=False)


class LLMJudge(Rubric):
    """Grades each step by asking a :class:`Judge`; the first number in its answer is the grade.

    Args:
        prompt: A template with ``{action}``, ``{observation}`` and ``{state}`` (each filled in
            as JSON), or a function ``(Step) -> str`` building the prompt.
        judge: The model to ask.
        max_score: The top of the judge's scale; grades are divided by it (and clamped to
            [0, 1]), so "7" out of 10 scores 0.7.
        default: The score when the answer holds no number. None (the default) raises
            :class:`~openenv_hub.errors.JudgeError` instead, so a broken judge is noticed.
        name: The key of this rubric in reward breakdowns.
    """

    def __init__(
        self,
        prompt: str | Callable[[Step], str],
        judge: Judge,
        *,
        max_score: float = 1.0,
        default: float | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if max_score <= 0:
            raise ValueError(f"max_score must be positive, got {max_score}")
        self.prompt = prompt
        self.judge = judge
        self.max_score = max_score
        self.default = default

    def render(self, step: Step) -> str:
        """The prompt for ``step``."""
        if callable(self.prompt):
            return self.prompt(step)
        return self.prompt.format(
            action=_as_json(step.action),
            observation=_as_json(step.observation),
            state=_as_json(step.state),
        )

    async def score(self, step: Step) -> float:
        answer = await self.judge.complete(self.render(step))
        match = _NUMBER.search(answer)
        if match is None:
            if self.default is not None:
                return self.default
            raise JudgeError(f"The judge's answer holds no number: {answer[:200]!r}")
        return min(max(float(match.group()) / self.max_score, 0.0), 1.0)
