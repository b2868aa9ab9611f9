"""The echo environment's oracle, for ``openenv validate --level quality``.

The echo environment has no task to solve: a tool call that succeeds earns half its reward, and
a message of 32 characters or more the other half. Its oracle sends one such message, then
stops; any long message is as good, which is why the manifest exempts the non-solutions that
send one.
"""

from __future__ import annotations

from typing import Any

MESSAGE = "A message of thirty-two characters or more earns the whole reward."


def oracle(messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Any:
    """One echo of :data:`MESSAGE`, then an answer without a tool call (the end)."""
    if any(message["role"] == "tool" for message in messages):
        return "Done."
    call = {"name": "echo_message", "arguments": {"message": MESSAGE}}
    return {"tool_calls": [{"function": call}]}
