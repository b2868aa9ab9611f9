"""docs/harnesses.md, "Harnesses as environments": its blocks run as printed, in order, the
Python ones in one namespace, against vLLM serving the harness tests' tiny model through the
capture proxy (the harnesses' paths and the proxy are the test's); the app it makes is served
and plays the task over the wire."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from engine_support.fixtures import ENGINE_TIMEOUT_S
from harness_support import CLAUDE, MINI, MINI_CONFIG, installed

from openenv_hub.capture import CaptureProxy
from openenv_hub.client import GenericEnvClient

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]

DOC = "docs/harnesses.md"
PYTHON_BLOCKS = ["harness-mini", "harness-captured", "harness-claude", "harness-serve"]


def test_the_harness_blocks_run_as_printed(
    harness_proxy: CaptureProxy,
    serve: Callable[..., Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    subprocess.run(["bash", "-euc", doc_block(DOC, "harness-task").code], check=True)
    replacements = {
        ".venv-mini/bin/mini": installed(MINI),
        '"mini.yaml"': repr(str(MINI_CONFIG)),
        ".agents/node_modules/.bin/claude": installed(CLAUDE),
    }
    namespace: dict[str, Any] = {"proxy": harness_proxy}
    for name in PYTHON_BLOCKS:
        code = doc_block(DOC, name).code
        for old, new in replacements.items():
            code = code.replace(old, new)
        exec(compile(code, f"{DOC}:{name}", "exec"), namespace)
    out = capsys.readouterr().out
    # mini-swe-agent solved the task with two model calls, one training sequence.
    assert "1.0 True 2 Submitted" in out
    assert "tool_call bash {'command': \"printf 'hello\\\\n' > hello.txt\"}" in out
    sequence = namespace["sequence"]
    assert f"{len(sequence.input_ids)} {sum(sequence.loss_mask)} 2" in out
    # Claude Code: two turns of one conversation, each answered and captured soundly.
    assert out.count("done 0 True") == 2
    claude_calls = [line for line in out.splitlines() if line.startswith("messages True ")]
    assert len(claude_calls) == 2 and claude_calls[1].split()[-1] == "0"  # continues call 0
    # The app: its task routes list the task, and a session plays it.
    served = serve(namespace["app"])
    assert asyncio.run(_play(served.url)) == 1.0
    assert (tmp_path / "episodes.jsonl").exists()


async def _play(url: str) -> float | None:
    async with GenericEnvClient(url) as env:
        first = await env.reset(task_id="write-hello")
        result = await env.step({"message": first.observation["instruction"]})
        return result.reward
