"""Persistent context: names and files live from step to step, until reset or a killed step;
MCP tools and CodeAction drive the same interpreter; 16 concurrent sessions do not meet."""

from __future__ import annotations

import ast
import asyncio
import json

import httpx
from coding_env import CodeAction, CodingEnv
from coding_support import Target


def test_names_and_files_persist_until_reset(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset()
        first = env.step(CodeAction(code="x = 41\nopen('notes.txt', 'w').write('hi')")).observation
        assert first.exit_code == 0 and not first.context_lost
        second = env.step(CodeAction(code="x += 1\nprint(open('notes.txt').read())\nx")).observation
        assert (second.result, second.stdout) == ("42", "hi\n")
        reset = env.reset().observation
        assert reset.message == "A fresh interpreter is ready."
        gone = env.step(CodeAction(code="import os\nprint(os.listdir('.'))\nx")).observation
        assert gone.stdout == "[]\n"
        assert gone.error.type == "NameError" and gone.exit_code == 1


def test_a_killed_step_loses_the_context_and_says_so(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset()
        env.step(CodeAction(code="kept = 'yes'"))
        killed = env.step(CodeAction(code="import os\nos.kill(os.getpid(), 9)")).observation
        assert killed.context_lost and "SIGKILL" in killed.message
        assert "names and files from earlier steps are gone" in killed.message
        after = env.step(CodeAction(code="kept")).observation
        assert after.error.type == "NameError" and not after.context_lost
        assert env.state().context_restarts == 1


def test_observation_fields(local_target: Target) -> None:
    code = (
        "import sys\nprint('out')\nprint('err', file=sys.stderr)\ndef f():\n    return 1 / 0\nf()"
    )
    with local_target.client().sync() as env:
        env.reset()
        failed = env.step(CodeAction(code=code)).observation
        assert (failed.stdout, failed.stderr, failed.exit_code) == ("out\n", "err\n", 1)
        assert failed.error.type == "ZeroDivisionError"
        assert failed.error.traceback[0] == '  File "<cell-1>", line 6, in <module>'
        assert all("worker.py" not in line for line in failed.error.traceback)
        exited = env.step(CodeAction(code="raise SystemExit(3)")).observation
        assert exited.exit_code == 3 and exited.error is None
        value = env.step(CodeAction(code="'x' * 5000")).observation
        assert len(value.result) < 2100 and value.result.endswith("...")
        assert 0 <= value.duration_s < 5


def test_tools_and_actions_share_the_session(local_target: Target) -> None:
    with local_target.client().sync() as env:
        env.reset()
        env.step(CodeAction(code="shared = 7\nopen('a.txt', 'w').write('abc')"))
        ran = env.call_tool("run_python", code="shared * 6")
        assert ran["result"] == "42" and ran["context_lost"] is False
        assert env.call_tool("list_files") == {
            "files": [{"path": "a.txt", "size": 3}],
            "truncated": False,
        }
        assert env.call_tool("reset_context")["context_lost"] is True
        assert env.step(CodeAction(code="shared")).observation.error.type == "NameError"
        assert env.call_tool("list_files")["files"] == []
        names = {tool.name for tool in env.list_tools()}
        assert names == {"run_python", "reset_context", "list_files", "list_tasks"}


def test_mcp_json_rpc_drives_the_session(local_target: Target) -> None:
    with httpx.Client(base_url=local_target.base_url, timeout=60) as http:
        created = http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}
        )
        session = created.json()["result"]["session_id"]

        def call(name: str, **arguments: object) -> dict[str, object]:
            body = {"name": name, "arguments": arguments, "session_id": session}
            reply = http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": body}
            )
            return reply.json()["result"]["data"]  # type: ignore[no-any-return]

        call("run_python", code="y = 'kept'")
        assert call("run_python", code="y")["result"] == "'kept'"
        http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "openenv/session/close",
                "params": {"session_id": session},
            },
        )


def test_sixteen_concurrent_sessions_do_not_see_each_other(local_target: Target) -> None:
    async def one(index: int) -> tuple[str, str]:
        async with CodingEnv(base_url=local_target.base_url, message_timeout_s=120) as env:
            await env.reset()
            mine = f"name_{index}"
            await env.step(
                CodeAction(code=f"{mine} = {index}\nopen('{mine}.txt', 'w').write('{index}')")
            )
            await asyncio.sleep(0.2)  # let the others write too
            look = "import os, json\njson.dumps([sorted(k for k in globals() if k.startswith('name_')), os.listdir('.')])"
            seen = (await env.step(CodeAction(code=look))).observation
            return mine, seen.result

    async def all_of_them() -> list[tuple[str, str]]:
        return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(16))), timeout=240)

    results = asyncio.run(all_of_them())
    for mine, seen in results:
        names, files = json.loads(ast.literal_eval(seen))
        assert names == [mine] and files == [f"{mine}.txt"], (mine, seen)
