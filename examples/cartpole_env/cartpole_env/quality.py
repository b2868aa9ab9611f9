"""CartPole's oracle, for ``openenv validate --level quality``: push the cart towards where the
pole is falling (its angle, its angular velocity, and a little of the cart's drift), which keeps
it up for the 500 steps of an episode."""

from __future__ import annotations

import json
from typing import Any


def oracle(messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Any:
    """The push the last observation calls for (a policy as ``openenv eval`` plays it)."""
    shown = json.loads(messages[-1]["content"])
    if shown.get("terminated") or shown.get("truncated"):
        return "Done."
    position, velocity, angle, turning = shown["observation"]
    push = int(angle + 0.5 * turning + 0.01 * position + 0.1 * velocity > 0)
    call = {"name": tools[0]["function"]["name"], "arguments": {"action": push}}
    return {"tool_calls": [{"function": call}]}
