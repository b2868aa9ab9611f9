"""A scripted harness for each wire format: it keeps the conversation in its own format (chat
messages, Anthropic messages with tool_use / tool_result blocks, Responses items with
function_call / function_call_output), sends it through the proxy, reads the answer (a body or
a stream), runs the model's tool calls with scripted results, and otherwise says the next
scripted user line. What mini-swe-agent, Claude Code and Codex do with a conversation,
without their prompts."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from engine_support.trajectories import FOLLOW_UPS, TOOL_OUTPUTS, TOOLS
from wire_bodies import PATHS, sse_events


def anthropic_tools() -> list[dict[str, Any]]:
    return [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "input_schema": t["function"]["parameters"],
        }
        for t in TOOLS
    ]


def responses_tools() -> list[dict[str, Any]]:
    return [{"type": "function", "strict": False, **t["function"]} for t in TOOLS]


def tool_output(arguments: str | dict[str, Any]) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return "error: the arguments are not JSON"
    command = arguments.get("command") if isinstance(arguments, dict) else None
    return TOOL_OUTPUTS.get(str(command), "ok")


class ScriptedHarness:
    """One rollout: ``run(first_line, calls)`` makes ``calls`` model calls.

    Args:
        url: The proxy's URL (``http://127.0.0.1:PORT``).
        key: The session's key.
        wire: ``"chat"``, ``"responses"`` or ``"messages"``.
        stream: Whether to ask for streams.
        seed: The rollout's seed (call ``n`` samples with ``seed * 100 + n``).
        sampling: Sampling parameters sent with each call.
        client: The HTTP client to send with (a new connection per call without one).

    ``seconds`` holds how long each call took, from sending the request to the whole answer.
    """

    def __init__(
        self,
        url: str,
        key: str | None,
        wire: str,
        *,
        stream: bool,
        seed: int,
        sampling: dict[str, Any],
        client: httpx.Client | None = None,
    ) -> None:
        self.url, self.wire, self.stream, self.seed = url, wire, stream, seed
        self.sampling = sampling
        self.headers = (
            {"x-api-key": key} if wire == "messages" else {"Authorization": f"Bearer {key}"}
        )
        if key is None:
            self.headers = {}
        self.history: list[dict[str, Any]] = []
        self.client = client
        self.seconds: list[float] = []
        self.follow_ups = list(FOLLOW_UPS)

    def run(self, first_line: str, calls: int) -> None:
        self._say(first_line)
        for number in range(calls):
            self._call(number)

    def _body(self, number: int) -> dict[str, Any]:
        seed = {"seed": self.seed * 100 + number}
        if self.wire == "chat":
            return {
                "model": "tiny",
                "messages": self.history,
                "tools": TOOLS,
                **self.sampling,
                **seed,
            }
        if self.wire == "messages":
            tokens = self.sampling.get("max_tokens", 64)
            rest = {k: v for k, v in self.sampling.items() if k != "max_tokens"}
            return {
                "model": "tiny",
                "max_tokens": tokens,
                "messages": self.history,
                "tools": anthropic_tools(),
                **rest,
                **seed,
            }
        tokens = (
            {"max_output_tokens": self.sampling["max_tokens"]}
            if "max_tokens" in self.sampling
            else {}
        )
        rest = {k: v for k, v in self.sampling.items() if k != "max_tokens"}
        return {
            "model": "tiny",
            "input": self.history,
            "tools": responses_tools(),
            "store": False,
            **tokens,
            **rest,
            **seed,
        }

    def _call(self, number: int) -> None:
        body = {**self._body(number), "stream": self.stream}
        send = self.client.post if self.client is not None else httpx.post
        started = time.perf_counter()
        response = send(self.url + PATHS[self.wire], json=body, headers=self.headers, timeout=120)
        self.seconds.append(time.perf_counter() - started)
        response.raise_for_status()
        answer = self._assemble(response) if self.stream else response.json()
        getattr(self, f"_take_{self.wire}")(answer)

    def _assemble(self, response: httpx.Response) -> dict[str, Any]:
        """The whole answer from a stream, as a body of the same format would hold it."""
        events = sse_events(response.text)
        if self.wire == "responses":
            return next(e["response"] for e in events if e["type"] == "response.completed")
        if self.wire == "messages":
            blocks: dict[int, dict[str, Any]] = {}
            for event in events:
                if event["type"] == "content_block_start":
                    blocks[event["index"]] = {**event["content_block"], "json": ""}
                elif event["type"] == "content_block_delta":
                    delta, block = event["delta"], blocks[event["index"]]
                    if delta["type"] == "text_delta":
                        block["text"] += delta["text"]
                    else:
                        block["json"] += delta["partial_json"]
            for block in blocks.values():
                partial = block.pop("json")
                if block["type"] == "tool_use":
                    block["input"] = json.loads(partial or "{}")
            return {"content": [blocks[i] for i in sorted(blocks)]}
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        calls: dict[int, dict[str, Any]] = {}
        for event in events:
            for choice in event["choices"]:
                delta = choice["delta"]
                message["content"] += delta.get("content") or ""
                for part in delta.get("tool_calls") or []:
                    one = calls.setdefault(
                        part["index"],
                        {
                            "id": part.get("id"),
                            "type": "function",
                            "function": {"name": "", "arguments": ""},
                        },
                    )
                    one["function"]["name"] += part.get("function", {}).get("name") or ""
                    one["function"]["arguments"] += part.get("function", {}).get("arguments") or ""
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return {"choices": [{"message": message}]}

    def _say(self, line: str) -> None:
        if (
            self.wire == "messages"
            and self.history
            and isinstance(self.history[-1]["content"], list)
            and self.history[-1]["role"] == "user"
        ):
            self.history[-1]["content"].append({"type": "text", "text": line})
        else:
            self.history.append(
                {"role": "user", "content": line}
                if self.wire != "responses"
                else {"type": "message", "role": "user", "content": line}
            )

    def _next_line(self) -> str:
        line = self.follow_ups.pop(0)
        self.follow_ups.append(line)
        return line

    def _take_chat(self, answer: dict[str, Any]) -> None:
        message = answer["choices"][0]["message"]
        kept = {"role": "assistant", "content": message.get("content") or ""}
        if message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
        self.history.append(kept)
        for call in message.get("tool_calls") or []:
            self.history.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": tool_output(call["function"]["arguments"]),
                }
            )
        if not message.get("tool_calls"):
            self._say(self._next_line())

    def _take_messages(self, answer: dict[str, Any]) -> None:
        self.history.append({"role": "assistant", "content": answer["content"]})
        uses = [b for b in answer["content"] if b["type"] == "tool_use"]
        if uses:
            results = [
                {"type": "tool_result", "tool_use_id": b["id"], "content": tool_output(b["input"])}
                for b in uses
            ]
            self.history.append({"role": "user", "content": results})
        else:
            self.history.append(
                {"role": "user", "content": [{"type": "text", "text": self._next_line()}]}
            )

    def _take_responses(self, answer: dict[str, Any]) -> None:
        self.history.extend(answer["output"])
        calls = [i for i in answer["output"] if i["type"] == "function_call"]
        for item in calls:
            self.history.append(
                {
                    "type": "function_call_output",
                    "call_id": item["call_id"],
                    "output": tool_output(item["arguments"]),
                }
            )
        if not calls:
            self._say(self._next_line())
