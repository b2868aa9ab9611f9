"""A chat model behind an OpenAI-compatible ``/chat/completions`` (vLLM, ``transformers
serve``, a hosted API), as a :data:`~openenv_hub.eval.policies.Policy`.

Requests go through the ``openai`` package's async client: its connection pool, its timeouts
and its typed errors. Its own retries are off (``max_retries=0``): this module retries every
infrastructure error itself, including the ones the client does not see as errors (a body that
is not JSON, a reply with no choices), with :class:`~openenv_hub.eval.failures.Backoff`, so that
each retry is counted in the rollout's row and ``--max-retries`` means one thing everywhere.

Layer: client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.errors import DependencyNotInstalledError
from openenv_hub.eval.failures import (
    RETRIED_STATUSES,
    Backoff,
    InfrastructureError,
    body_excerpt,
    retry_after_s,
)
from openenv_hub.eval.policies import Completion, assistant_message
from openenv_hub.shown_urls import hide_credentials, shown
from openenv_hub.support.settings import named_variable

__all__ = ["ChatPolicy"]


@dataclass
class ChatPolicy:
    """A model behind an OpenAI-compatible endpoint.

    Attributes:
        base_url: The API's base, e.g. ``http://127.0.0.1:8000/v1``.
        model: The model name sent with each request.
        api_key_env: The environment variable holding the API key (never a command-line value).
        sampling: Sampling settings sent with each request (``temperature``, ``top_p``,
            ``max_tokens``, and any other the endpoint takes); the rollout's seed is sent as
            ``seed``.
        timeout_s: Bound of one request.
        backoff: How failed requests are retried.
        on_retry: Called with each error that is retried (for progress lines).
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    sampling: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 120.0
    backoff: Backoff = field(default_factory=Backoff)
    on_retry: Callable[[InfrastructureError], None] | None = None
    _client: Any = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        """The endpoint as messages and results name it (without a ``user:password@``)."""
        return shown(self.base_url.rstrip("/") + "/chat/completions")

    async def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int
    ) -> Completion:
        body: dict[str, Any] = {**self.sampling, "seed": seed}
        for retry in range(self.backoff.max_retries + 1):
            try:
                reply = await self._request(messages, tools, body)
            except InfrastructureError as error:
                if not error.retryable or retry == self.backoff.max_retries:
                    if retry:
                        error.message += f" (after {retry} retries)"
                    raise
                if self.on_retry is not None:
                    self.on_retry(error)
                await asyncio.sleep(self.backoff.delay_s(retry, error.retry_after_s))
                continue
            return _completion(reply, retries=retry)
        raise AssertionError("unreachable")  # pragma: no cover

    async def check(self) -> Completion:
        """One short request, retried as any other: raises what the endpoint answered."""
        hello = [{"role": "user", "content": "Say OK."}]
        saved, self.sampling = self.sampling, {**self.sampling, "max_tokens": 4}
        try:
            return await self(hello, [], 0)
        finally:
            self.sampling = saved

    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], body: dict[str, Any]
    ) -> dict[str, Any]:
        openai = _openai()
        extra = {"tools": tools} if tools else {}
        try:
            # The client's own timeout bounds each read; this bounds the whole request, so an
            # endpoint that trickles its answer byte by byte cannot hold the run.
            raw = await asyncio.wait_for(
                self._open().chat.completions.with_raw_response.create(
                    model=self.model, messages=messages, extra_body={**body, **extra}
                ),
                self.timeout_s,
            )
        except (openai.APITimeoutError, asyncio.TimeoutError):
            raise InfrastructureError(
                "timeout", f"{self.url} did not answer within {self.timeout_s:g} s"
            ) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            reason = hide_credentials(str(cause).strip(), self.base_url) or type(cause).__name__
            raise InfrastructureError(
                "connection", f"{self.url} could not be reached: {reason}"
            ) from None
        except openai.APIStatusError as exc:
            raise _status_error(self.url, exc.response) from None
        return _parsed(self.url, raw.http_response)

    def _open(self) -> Any:
        if self._client is None:
            key = named_variable(self.api_key_env) or "EMPTY"
            self._client = _openai().AsyncOpenAI(
                base_url=self.base_url, api_key=key, timeout=self.timeout_s, max_retries=0
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise DependencyNotInstalledError(
            "openai", "eval", feature="openenv eval --model"
        ) from None
    return openai


def _status_error(url: str, response: Any) -> InfrastructureError:
    status = int(response.status_code)
    said = f"{url} answered {status}: {body_excerpt(response.text)}"
    if status == 429:
        asked = retry_after_s(response.headers.get("retry-after"))
        return InfrastructureError("rate_limit", said, retry_after_s=asked)
    if status >= 500:
        return InfrastructureError("server_error", said, retryable=status in RETRIED_STATUSES)
    hint = " (is --base-url the API's base, ending in /v1?)" if status == 404 else ""
    return InfrastructureError("http_error", said + hint, retryable=status in RETRIED_STATUSES)


def _parsed(url: str, response: Any) -> dict[str, Any]:
    text = response.text
    try:
        data = json.loads(text)
    except ValueError:
        raise InfrastructureError(
            "bad_reply",
            f"{url} answered {response.status_code} with a body that is not JSON: "
            f"{body_excerpt(text)}",
        ) from None
    if not isinstance(data, dict):
        data = {}
    choices = data.get("choices")
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise InfrastructureError(
            "bad_reply",
            f"{url} answered {response.status_code} with a reply that is not a completion "
            f"(no choices[0].message): {body_excerpt(text)}",
        )
    return dict(data)


def _completion(data: dict[str, Any], *, retries: int) -> Completion:
    choice = data["choices"][0]
    reported = data.get("usage")
    usage: dict[str, Any] = reported if isinstance(reported, dict) else {}
    return Completion(
        assistant_message(choice["message"]),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason"),
        retries=retries,
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
