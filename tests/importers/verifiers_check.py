"""Run inside a venv with ``verifiers`` (tests/importers/verifiers_requirements.txt): score the
same completions with verifiers' own ``run_rollout`` and through an imported environment served
on 127.0.0.1, in this one process, and print both as JSON.

    python verifiers_check.py ENV_FOLDER MODULE   # prints {"pairs": [...], "tools": [...]}

A completion is a list of model turns: ``{"content": str}`` (text) or ``{"call": [name,
arguments]}`` (one tool call).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from openenv_hub import CallToolAction, CallToolObservation, GenericEnvClient, create_app
from openenv_hub.importers import VerifiersEnvironment, VerifiersObservation

ARITH = [
    "15",
    "The answer is 15.",
    "14",
    "I believe it is 36 after some careful thinking about the question",
    "36",
    "no idea",
    "",
]
LOOKUP = [
    [
        {"call": ["lookup", {"city": "A"}]},
        {"call": ["lookup", {"city": "B"}]},
        {"call": ["add", {"a": "A", "b": "B"}]},
        {"content": "TOTAL"},
    ],
    [{"content": "TOTAL"}],
    [{"call": ["lookup", {"city": "A"}]}, {"content": "It is 7"}],
    [
        {"call": ["lookup", {"city": "Atlantis"}]},
        {"call": ["lookup", {"city": "B"}]},
        {"content": "TOTAL thousand"},
    ],
    [{"call": ["add", {"a": 1, "b": 2}]}, {"call": ["lookup", {"city": "B"}]}, {"content": "3"}],
]


def completions(module: str, row: dict[str, Any], index: int) -> list[list[dict[str, Any]]]:
    """The completions played on ``row``: varied, some right, some wrong."""
    if module == "vf_arith":
        right = row["answer"]
        texts = [t.replace("15", right).replace("36", right) for t in ARITH[:3]] + ARITH[3:]
        return [[{"content": texts[index % len(texts)]}]]
    a, b = (
        row["question"].split(" of ")[1].split(" plus")[0],
        row["question"].split("that of ")[1].split(",")[0],
    )
    scripts = [LOOKUP[index % len(LOOKUP)], LOOKUP[(index + 2) % len(LOOKUP)]]
    return [[_fill(turn, a, b, row["answer"]) for turn in script] for script in scripts]


def _fill(turn: dict[str, Any], a: str, b: str, total: str) -> dict[str, Any]:
    text = json.dumps(turn).replace('"A"', json.dumps(a)).replace('"B"', json.dumps(b))
    filled = json.loads(text.replace("TOTAL", total))
    if "call" in filled and filled["call"][0] == "add" and isinstance(filled["call"][1]["a"], str):
        from vf_lookup import POPULATIONS  # the numbers a model would have read

        filled["call"][1] = {"a": POPULATIONS[a], "b": POPULATIONS[b]}
    return filled


def scripted_client(turns: list[dict[str, Any]]) -> Any:
    """A verifiers Client that answers with ``turns``, one per model call."""
    from verifiers.clients import Client
    from verifiers.types import Response, ResponseMessage, ToolCall

    class Scripted(Client):
        def __init__(self) -> None:
            super().__init__(None)
            self.left = list(turns)

        def setup_client(self, config: Any) -> Any:
            return None

        async def to_native_tool(self, tool: Any) -> Any:
            return tool

        async def to_native_prompt(self, messages: Any) -> Any:
            return messages, {}

        async def get_native_response(
            self, prompt: Any, model: Any, sampling_args: Any, tools: Any = None, **kwargs: Any
        ) -> Any:
            return self.left.pop(0)

        async def raise_from_native_response(self, response: Any) -> None:
            return None

        async def from_native_response(self, turn: dict[str, Any]) -> Any:
            calls = None
            if "call" in turn:
                name, arguments = turn["call"]
                calls = [ToolCall(id="call_1", name=name, arguments=json.dumps(arguments))]
            message = ResponseMessage(
                content=turn.get("content"),
                tool_calls=calls,
                finish_reason="tool_calls" if calls else "stop",
                is_truncated=False,
            )
            return Response(id="x", created=0, model="m", message=message)

        async def close(self) -> None:
            return None

    return Scripted()


async def play_through_server(
    url: str, split: str, key: str, turns: list[dict[str, Any]], submit: str
) -> dict[str, Any]:
    async with GenericEnvClient(url) as env:
        first = await env.reset(task_id=key, split=split)
        result = first
        for turn in turns:
            if "call" in turn:
                name, arguments = turn["call"]
            else:
                name, arguments = submit, {"completion": turn["content"]}
            result = await env.step(
                {"type": "call_tool", "tool_name": name, "arguments": arguments}
            )
            if result.done:
                break
        observation = result.observation
        return {
            "reward": result.reward,
            "done": result.done,
            "breakdown": (observation.get("metadata") or {}).get("reward_breakdown"),
            "prompt": first.observation["messages"],
        }


def main(folder: str, module: str) -> None:
    environment = VerifiersEnvironment.configured(Path(folder), module=module)
    app = create_app(
        environment,
        CallToolAction,
        CallToolObservation,
        reset_observation_cls=VerifiersObservation,
        env_name=module,
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    loaded = environment.loaded
    pairs = []
    split = "eval" if "eval" in environment.rows else "train"
    for index, (key, row) in enumerate(list(environment.rows[split].items())[:24]):
        for turns in completions(module, row, index):
            own = asyncio.run(loaded.run_rollout(dict(row), scripted_client(turns), "m", {}))
            ours = asyncio.run(play_through_server(url, split, key, turns, environment.submit_tool))
            pairs.append(
                {
                    "key": key,
                    "turns": turns,
                    "verifiers": {"reward": own["reward"], "metrics": own["metrics"]},
                    "openenv": ours,
                }
            )
    server.should_exit = True
    thread.join(10)
    tools = sorted(environment.specs)
    print(json.dumps({"pairs": pairs, "tools": tools}, default=str))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
