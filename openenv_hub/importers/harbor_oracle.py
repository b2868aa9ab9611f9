"""The oracle of a Harbor task set: a policy that plays each task's ``solution/solve.sh`` through
the environment's tools, then submits, as Harbor's oracle agent does.

The policy reads which task it plays from the first observation (``task_id``), copies the
task's ``solution/`` folder to ``/solution`` in the task's container (as base64 text, in
pieces a command line can hold), runs ``solve.sh`` there, and calls ``submit``. It is an
ordinary policy, ``policy(messages, tools, seed) -> message``, so ``openenv eval --policy``
plays it, and a quality check can hold every task to reaching its best reward with it::

    from openenv_hub.importers import harbor_oracle

    policy = harbor_oracle("my_env/tasks")

An environment made by ``openenv import harbor`` names it in its manifest (``oracle:
NAME.oracle:solve``); :func:`~openenv_hub.importers.load_oracle` loads the policy a manifest
names. The solution only ever travels this way: the environment's server never sends it.

Layer: client.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shlex
import tarfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.importers.harbor_tasks import HarborTask, read_task_set

__all__ = ["harbor_oracle", "oracle_commands"]

#: Base64 text sent in one command (well under Linux's 128 KiB bound on one argument).
CHUNK_CHARS = 60_000
_TASK_ID = re.compile(r'"task_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def oracle_commands(task: HarborTask) -> list[str]:
    """The shell commands that put the task's ``solution/`` at ``/solution`` and run
    ``solve.sh``, in order.

    Raises:
        ConfigurationError: The task has no ``solution/solve.sh``.
    """
    if not task.has_oracle:
        raise ConfigurationError(f"The task {task.name} has no solution/solve.sh: no oracle.")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(task.solve_script.parent, arcname=".")
    text = base64.b64encode(buffer.getvalue()).decode()
    staged = "/tmp/.openenv-oracle.b64"
    commands = [f"rm -f {staged}"]
    commands += [
        f"printf %s {shlex.quote(text[i : i + CHUNK_CHARS])} >> {staged}"
        for i in range(0, len(text), CHUNK_CHARS)
    ]
    commands.append(
        f"mkdir -p /solution && base64 -d {staged} | tar -xz -C /solution && rm -f {staged} "
        "&& chmod +x /solution/solve.sh && /solution/solve.sh"
    )
    return commands


OraclePolicy = Callable[
    [list[dict[str, Any]], list[dict[str, Any]], int], Awaitable[dict[str, Any]]
]


def harbor_oracle(tasks_dir: Path | str) -> OraclePolicy:
    """The oracle policy of the Harbor tasks in ``tasks_dir`` (see the module), a function
    policy as ``openenv eval --policy MODULE:FUNCTION`` takes one."""
    tasks = {task.name: task for task in read_task_set(Path(tasks_dir))}

    async def solve(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int
    ) -> dict[str, Any]:
        task = tasks.get(_task_id(messages))
        if task is None:
            raise ConfigurationError(f"The oracle knows no task {_task_id(messages)!r}.")
        commands = oracle_commands(task)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        call = (
            {"name": "bash", "arguments": {"command": commands[turn]}}
            if turn < len(commands)
            else {"name": "submit", "arguments": {}}
        )
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"oracle_{turn}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
            ],
        }

    return solve


def _task_id(messages: list[dict[str, Any]]) -> str:
    """The ``task_id`` of the first observation, found in the first message that names one."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            found = _TASK_ID.search(content)
            if found is not None:
                return str(json.loads(f'"{found.group(1)}"'))
    raise ConfigurationError(
        "The oracle found no task_id in the conversation: it plays Harbor environments only."
    )
