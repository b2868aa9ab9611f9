"""A scripted harness for the environment's own tests (no model engine needed beyond the fake
one): a Python script, run in the harness's sandbox like any harness, that calls the model
through the capture proxy ``calls`` times, may call an environment tool through the bridge,
and writes ``hello.txt`` when asked."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from openenv_hub.harness import HarnessConfig, SandboxedCLIAdapter
from openenv_hub.harness.sandbox import HOME

SCRIPT = """
import json, os, sys, urllib.request

def post(url, body, headers):
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())

message, calls, tool, write = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "yes"
key = {"Authorization": "Bearer " + os.environ["MODEL_KEY"]}
for number in range(calls):
    messages = [{"role": "user", "content": message + " #" + str(number)}]
    post(os.environ["MODEL_URL"] + "/v1/chat/completions", {"model": "fake", "messages": messages}, key)
if tool != "-":
    bridge = open(os.path.expanduser("~/bridge.txt")).read().strip()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": {"word": "tea"}}}
    print(post(bridge, call, {})["result"]["content"][0]["text"])
if write:
    open("hello.txt", "w").write("hello\\n")
print("done after", calls, "calls")
"""


class ScriptedAdapter(SandboxedCLIAdapter):
    """Runs :data:`SCRIPT`: ``calls`` model calls, a bridge ``tool`` call, ``write`` the file."""

    BUILTIN_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset({"lookup"})

    def __init__(self, folder: Path, *, calls: int = 1, tool: str = "-", write: bool = True):
        super().__init__(HarnessConfig(name="scripted", session_timeout_s=60))
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "harness.py").write_text(SCRIPT)
        self.calls, self.tool, self.write = calls, tool, write

    def installation(self) -> list[str]:
        return [str(self.folder)]

    def write_settings(self, home: Path) -> None:
        (home / "bridge.txt").write_text(self.bridge_url or "")

    def command(self, message: str, turn: int) -> list[str]:
        script = str(self.folder / "harness.py")
        flags = [str(self.calls), self.tool, "yes" if self.write else "no"]
        return ["/usr/bin/python3", script, message, *flags]

    def variables(self) -> dict[str, str]:
        assert self.run is not None
        return {"MODEL_URL": self.run.model_url, "MODEL_KEY": self.run.api_key, "HOME": HOME}
