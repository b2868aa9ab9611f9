"""The model engine behind the proxy, spoken to in chat completions with token ids asked for.

Every call asks for ``return_token_ids`` and ``logprobs`` (the engine's own prompt ids,
sampled ids and the logprob of each sampled token) and never streams: the proxy replays the
whole answer to a harness that streams. A call that continues an earlier one carries its
prompt as ids in ``kv_transfer_params.prompt_token_ids`` (vLLM runs those ids instead of
rendering the messages; its tool-call parser still reads the answer).

The engine's URL and credentials stay here: errors name neither, so nothing of them can reach
a harness.

vLLM needs ``--return-tokens-as-token-ids`` (logprob entries then name each token
``token_id:N``) and, for logprobs of the distribution sampled from, ``--logprobs-mode
processed_logprobs``.

Layer: services.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
import uuid
from typing import Any

from openenv_hub.capture.chat_form import ChatCall, EngineReply, ToolCall
from openenv_hub.errors import DependencyNotInstalledError
from openenv_hub.shown_urls import hide_url_credentials

__all__ = ["EngineClient", "EngineError", "load_aiohttp", "parse_reply"]

#: Bodies larger than this are sent to the engine as a stream of parts.
LARGE_BODY_BYTES = 1 << 20


class EngineError(Exception):
    """The engine gave no usable answer. ``status`` is what the harness gets (502, 504, or the
    engine's own 4xx for a request it refused); the message names neither the engine's URL nor
    its credentials."""

    def __init__(self, message: str, *, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


def _token_ids(entries: list[dict[str, Any]]) -> list[int]:
    ids = []
    for entry in entries:
        token = str(entry.get("token", ""))
        if not token.startswith("token_id:"):
            return []
        ids.append(int(token.removeprefix("token_id:")))
    return ids


def _tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    calls = []
    for number, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{uuid.uuid4().hex[:24]}_{number}"),
                name=str(function.get("name", "")),
                arguments=str(function.get("arguments") or "{}"),
            )
        )
    return calls


def parse_reply(body: dict[str, Any]) -> EngineReply:
    """An engine's chat completion as an :class:`EngineReply` (empty ids where it sent none)."""
    choices = body.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    entries = list((choice.get("logprobs") or {}).get("content") or [])
    sampled = list(choice.get("token_ids") or _token_ids(entries))
    return EngineReply(
        id=uuid.uuid4().hex[:24],
        created=int(body.get("created") or time.time()),
        content=message.get("content"),
        reasoning=message.get("reasoning_content") or message.get("reasoning"),
        tool_calls=_tool_calls(message),
        finish_reason=str(choice.get("finish_reason") or "stop"),
        stop_reason=choice.get("stop_reason"),
        prompt_ids=list(body.get("prompt_token_ids") or []),
        sampled_ids=sampled,
        logprobs=[float(e["logprob"]) for e in entries if "logprob" in e],
        token_logprobs=entries,
    )


class EngineClient:
    """Calls to one engine's ``/chat/completions``, over aiohttp (a hop through the proxy
    costs a fraction of what it costs with httpx; see benchmarks/harness.py).

    Args:
        url: The engine's OpenAI-compatible base URL (``http://127.0.0.1:8000/v1``).
        model: The model name the engine serves (sent on every call, whatever the harness
            named).
        api_key: The engine's own key, when it needs one (never the harness's).
        timeout_s: How long one call may take, prefill and sampling included.
    """

    def __init__(
        self, url: str, model: str, *, api_key: str | None = None, timeout_s: float = 600.0
    ) -> None:
        self.model = model
        self._url = url.rstrip("/") + "/chat/completions"
        self._key = api_key or ""
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s
        self._session: Any = None  # made in the event loop of the first call

    def request_body(
        self, call: ChatCall, sampling: dict[str, Any], prompt_ids: list[int] | None
    ) -> dict[str, Any]:
        """What one call sends: the conversation, the sampling parameters, and the capture's
        asks (ids, logprobs, and the prompt as ids when the proxy built it)."""
        body: dict[str, Any] = {"model": self.model, "messages": call.messages, **sampling}
        if call.tools:
            body["tools"] = call.tools
            if call.tool_choice is not None:
                body["tool_choice"] = call.tool_choice
        body.update(call.extra)
        body.update(return_token_ids=True, logprobs=True, top_logprobs=call.top_logprobs or 0)
        body["stream"] = False
        if prompt_ids is not None:
            body["kv_transfer_params"] = {"prompt_token_ids": prompt_ids}
        return body

    def _client(self) -> Any:
        if self._session is None:
            aiohttp = load_aiohttp()
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=self._timeout_s, sock_connect=10),
                connector=aiohttp.TCPConnector(limit=256),
                trust_env=False,  # a proxy variable of the host never reroutes the engine's calls
            )
        return self._session

    def encode(
        self, call: ChatCall, sampling: dict[str, Any], prompt_ids: list[int] | None
    ) -> bytes:
        """The body of one call, as the engine is sent it (see :meth:`request_body`)."""
        return json.dumps(self.request_body(call, sampling, prompt_ids)).encode()

    async def complete(
        self, call: ChatCall, sampling: dict[str, Any], prompt_ids: list[int] | None = None
    ) -> EngineReply:
        """Run one call; :class:`EngineError` when the engine cannot answer."""
        return await self.send(self.encode(call, sampling, prompt_ids))

    async def send(self, payload: bytes, *, off_loop: bool = False) -> EngineReply:
        """Send one call's body (:meth:`encode`); :class:`EngineError` when the engine cannot
        answer. ``off_loop``: read the answer (the prompt's ids: large for a large call) in a
        worker thread."""
        aiohttp = load_aiohttp()
        headers = {"Content-Type": "application/json"}
        # A large body goes as a stream aiohttp writes in parts, not as one write on the loop.
        data = payload if len(payload) <= LARGE_BODY_BYTES else io.BytesIO(payload)
        try:
            async with self._client().post(self._url, data=data, headers=headers) as response:
                status, reason, data = response.status, response.reason, await response.read()
        except asyncio.TimeoutError:
            raise EngineError(
                f"the model engine did not answer within {self._timeout_s:g} s", status=504
            ) from None
        except aiohttp.ClientError:
            raise EngineError("the model engine could not be reached", status=502) from None
        if status >= 400:
            raise EngineError(self._hidden(_refusal(status, reason, data)), status=_status(status))
        if off_loop:
            return await asyncio.to_thread(_read_reply, data)
        return _read_reply(data)

    def _hidden(self, text: str) -> str:
        """``text`` (the engine's own words) without the engine's URL, its address or its
        key, and without the credentials of any URL in it: it goes to the harness."""
        text = hide_url_credentials(text)
        base = self._url.removesuffix("/chat/completions")
        address = base.partition("://")[2].split("/", 1)[0].rpartition("@")[2]
        for secret in (self._key, base, address):
            if secret:
                text = text.replace(secret, "***")
        return text

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def load_aiohttp() -> Any:
    """The aiohttp module, or :class:`DependencyNotInstalledError` naming the extra."""
    try:
        import aiohttp
    except ImportError:
        raise DependencyNotInstalledError(
            "aiohttp", "capture", feature="The capture proxy"
        ) from None
    return aiohttp


def _read_reply(data: bytes) -> EngineReply:
    try:
        return parse_reply(json.loads(data))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise EngineError("the model engine sent an answer that is not a chat completion") from None


def _status(engine_status: int) -> int:
    """A refusal of the request (4xx) is the harness's to see; the engine's own failure is a
    502."""
    return engine_status if 400 <= engine_status < 500 and engine_status != 401 else 502


def _refusal(status: int, reason: str | None, data: bytes) -> str:
    if not 400 <= status < 500 or status == 401:
        return f"the model engine failed (status {status})"
    try:
        error = json.loads(data).get("error") or {}
        said = error.get("message") if isinstance(error, dict) else str(error)
    except (ValueError, AttributeError):
        said = None
    return f"the model engine refused the request: {said or reason}"
