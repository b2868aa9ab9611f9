"""Prime Intellect's ``vf-eval`` (the ``verifiers`` package) as the peer of ``openenv eval``.

verifiers ships an OpenEnv taskset: it resets an OpenEnv server with each of its ``resets``,
shows the model the observation and the action's schema, and steps with the model's reply.
So the same word game server, model and concurrency serve both tools, run one after the other.

verifiers runs in a virtual environment of its own: its pins (``openai``, ``mcp``) would
replace ours. Make it once with::

    python3 -m venv ~/.cache/openenv-hub/verifiers-venv
    ~/.cache/openenv-hub/verifiers-venv/bin/pip install verifiers==0.3.1 openenv==0.10.0

(``openenv`` is the client verifiers' taskset drives the server with; verifiers 0.4.0 pins
``mcp==2.0.0``, which ``openenv`` 0.10's ``fastmcp<4`` cannot take, so 0.3.1 is the newest
verifiers that installs beside it), or point ``--verifiers-python`` at another.

verifiers streams each model call and waits for the OpenAI ``data: [DONE]`` line, which
``transformers serve`` does not send: :class:`DoneRelay` adds it. Both tools reach the model
through the relay, so both pay its hop.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

DEFAULT_PYTHON = Path("~/.cache/openenv-hub/verifiers-venv/bin/python").expanduser()

CONFIG = """\
model = "{model}"
num_rollouts = {per_task}
max_concurrent = {concurrency}
push = false
output_dir = "{output}"

[env.taskset]
id = "openenv"
base_url = "{game_url}"
resets = [{resets}]

[env.player]
max_turns = 1

[env.player.harness]
id = "null"

[env.player.runtime]
type = "subprocess"

[client]
base_url = "{base_url}"
api_key_var = "VF_BENCH_KEY"

[sampling]
max_tokens = 12
temperature = 1.0
"""


def verifiers_python(given: str | None) -> Path | None:
    """The interpreter that has verifiers, or None (with the line that says how to make it)."""
    python = Path(given).expanduser() if given else DEFAULT_PYTHON
    if not python.exists():
        return None
    found = subprocess.run(
        [str(python), "-c", "import verifiers.v1, openenv"], capture_output=True, check=False
    )
    return python if found.returncode == 0 else None


def run_vf_eval(
    python: Path, work: Path, *, model: str, base_url: str, game_url: str, seeds: list[int],
    per_task: int, concurrency: int,
) -> tuple[float, int, float]:  # fmt: skip
    """Wall time of one ``vf-eval`` process, its rollouts that ended without an error, and the
    mean time of a rollout outside the model (its span less its model calls), in seconds."""
    output = work / f"vf-{time.monotonic_ns()}"
    resets = ", ".join(f"{{seed = {seed}}}" for seed in seeds)
    config = work / "vf-eval.toml"
    config.write_text(
        CONFIG.format(
            model=model,
            per_task=per_task,
            concurrency=concurrency,
            output=output,
            game_url=game_url,
            resets=resets,
            base_url=base_url,
        )
    )
    command = [*vf_eval(python), "@", str(config)]
    started = time.perf_counter()
    subprocess.run(
        command, cwd=work, check=True, capture_output=True,
        env={**os.environ, "VF_BENCH_KEY": "unused"},
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    lines = next(output.rglob("traces.jsonl")).read_text().splitlines()
    episodes = [json.loads(line) for line in lines]
    outside = [_outside_model(trace) for e in episodes for trace in e["traces"]]
    ok = sum(1 for e in episodes if not e.get("errors"))
    return elapsed, ok, sum(outside) / max(len(outside), 1)


def _outside_model(trace: dict[str, Any]) -> float:
    timing = trace["timing"]
    span = timing["scoring"]["end"] - timing["start"]
    return float(span - timing["agent"]["model"]["duration"])


def vf_eval(python: Path) -> list[str]:
    """The command of verifiers' evaluation CLI (``vf-eval`` in 0.4; in 0.3 the ``vf-eval``
    script is the legacy one, and the CLI that reads this config is ``eval``)."""
    return [str(python), "-c", VF_EVAL_MAIN]


VF_EVAL_MAIN = "import sys; from verifiers.v1.cli.eval.main import main; sys.exit(main())"


def vf_start_time(python: Path) -> float:
    """Wall time of ``vf-eval --help``: the process start alone."""
    started = time.perf_counter()
    subprocess.run([*vf_eval(python), "--help"], capture_output=True, check=True)
    return time.perf_counter() - started


class DoneRelay:
    """An ASGI app forwarding ``/v1/...`` to the model server, ending each SSE stream with
    ``data: [DONE]``."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.http = httpx.AsyncClient(timeout=300, trust_env=False)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {"content-type": "application/json"}
        request = self.http.build_request(
            scope["method"], self.upstream + scope["path"], content=body or None, headers=headers
        )
        response = await self.http.send(request, stream=True)
        streamed = "text/event-stream" in response.headers.get("content-type", "")
        kept = [(b"content-type", response.headers.get("content-type", "").encode())]
        await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await response.aclose()
        tail = b"data: [DONE]\n\n" if streamed else b""
        await send({"type": "http.response.body", "body": tail})
