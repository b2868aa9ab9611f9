"""The fixed conversations the capture tests' model is fine-tuned on (tests/engine_support/
tiny_chat_model.py): a shell tool called and answered, plain answers, a second user turn.

Under greedy decoding the fine-tuned model writes each assistant turn below exactly; sampled
at temperature 1 it mostly follows them and sometimes strays, which gives multi-turn rollouts
both tool calls that parse and answers that do not tokenise back the way they were sampled.
"""

from __future__ import annotations

from typing import Any

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command."}},
            "required": ["command"],
        },
    },
}
TOOLS: list[dict[str, Any]] = [BASH]


def call(command: str) -> dict[str, Any]:
    """An assistant message calling ``bash`` (arguments as an object, as templates take them)."""
    function = {"name": "bash", "arguments": {"command": command}}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": function}],
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool(text: str) -> dict[str, Any]:
    return {"role": "tool", "content": text}


CONVERSATIONS: list[list[dict[str, Any]]] = [
    [
        user("Write hello.txt with the word hello in it."),
        call("echo hello > hello.txt"),
        tool(""),
        assistant("Done: hello.txt holds the word hello."),
    ],
    [
        user("Which files are here?"),
        call("ls"),
        tool("hello.txt\nnotes.md"),
        assistant("There are two files: hello.txt and notes.md."),
        user("Thanks!"),
        assistant("You are welcome."),
    ],
    [
        user("What is 2 + 3?"),
        assistant("2 + 3 = 5."),
    ],
    [
        user("How many lines does notes.md have?"),
        call("wc -l notes.md"),
        tool("3 notes.md"),
        assistant("notes.md has 3 lines."),
    ],
]

#: What the model is fine-tuned on: ``tiny_chat_model.py SPEC FOLDER`` takes this as SPEC.
SPEC: dict[str, Any] = {"conversations": CONVERSATIONS, "tools": TOOLS}

#: Scripted tool results by command (a command not listed gets ``"ok"``).
TOOL_OUTPUTS = {
    "ls": "hello.txt\nnotes.md",
    "wc -l notes.md": "3 notes.md",
    "echo hello > hello.txt": "",
}
#: Scripted user turns after an answer without a tool call.
FOLLOW_UPS = ["Thanks!", "And then?", "Which files are here?", "What is 2 + 3?"]
