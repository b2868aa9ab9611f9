"""Codex CLI (npm ``@openai/codex``), unmodified: ``codex exec MESSAGE`` per turn, ``codex exec
resume --last`` for the turns after the first (its sessions are kept in its home).

It speaks OpenAI's Responses API, streaming, to a model provider of its ``config.toml`` whose
``base_url`` is the capture proxy (``wire_api = "responses"``), with the session's key in the
variable the provider names. The tool bridge is an MCP server of the same file
(``[mcp_servers.openenv]``). Its own command sandbox and approvals are off: it runs inside
ours. At start it looks for github.com, api.github.com and chatgpt.com: the sandbox refuses
the names and reports them (``error`` events with ``refused``).

Layer: client.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import ClassVar

from openenv_hub.harness.adapter import SandboxedCLIAdapter
from openenv_hub.harness.events import HarnessConfig
from openenv_hub.harness.installs import find_executable
from openenv_hub.harness.sandbox import RunResult

__all__ = ["CodexAdapter"]

_INSTALL = "npm install --prefix .agents @openai/codex"
_KEY_VARIABLE = "OPENENV_CAPTURE_KEY"


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


class CodexAdapter(SandboxedCLIAdapter):
    """Codex CLI in its sandbox.

    Args:
        config: The harness's configuration (``model``: the name it asks for).
        executable: Its ``codex`` command (default: ``codex`` on ``PATH``).
    """

    BUILTIN_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset(
        {
            "apply_patch", "close_agent", "create_goal", "exec_command", "get_goal",
            "list_mcp_resources", "request_user_input", "resume_agent", "send_input", "shell",
            "spawn_agent", "update_goal", "update_plan", "view_image", "wait_agent",
            "web_search", "write_stdin",
        }
    )  # fmt: skip

    def __init__(
        self,
        config: HarnessConfig | None = None,
        *,
        executable: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(config or HarnessConfig(name="codex", model="gpt-5-codex"))
        self.executable = find_executable("codex", executable, _INSTALL)

    def installation(self) -> list[str]:
        # node_modules (the launcher script and the native binary of its platform package).
        real = Path(os.path.realpath(self.executable))
        return sorted({str(real.parent.parent.parent), str(Path(self.executable).parent.parent)})

    def write_settings(self, home: Path) -> None:
        assert self.run is not None
        lines = [
            f"model = {_toml(self.config.model or 'gpt-5-codex')}",
            'model_provider = "openenv"',
            "",
            "[model_providers.openenv]",
            'name = "openenv capture proxy"',
            f"base_url = {_toml(self.run.model_url + '/v1')}",
            f"env_key = {_toml(self.config.api_key_env_var or _KEY_VARIABLE)}",
            'wire_api = "responses"',
        ]
        if self.bridge_url is not None and self.tools:
            lines += ["", "[mcp_servers.openenv]", f"url = {_toml(self.bridge_url)}"]
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".codex" / "config.toml").write_text("\n".join(lines) + "\n")

    def command(self, message: str, turn: int) -> list[str]:
        argv = [*(self.config.command or [self.executable]), "exec"]
        argv += ["--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox"]
        argv += ["resume", "--last"] if turn > 0 else []
        return [*argv, message]

    def variables(self) -> dict[str, str]:
        assert self.run is not None
        return {self.config.api_key_env_var or _KEY_VARIABLE: self.run.api_key}

    def final_response(self, result: RunResult) -> str:
        """The text of its last ``agent_message`` item."""
        for line in reversed(result.stdout.splitlines()):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            item = event.get("item") if isinstance(event, dict) else None
            if isinstance(item, dict) and item.get("type") == "agent_message":
                return str(item.get("text") or "")
        return result.stdout.strip()[-2000:]
