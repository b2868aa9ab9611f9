"""Claude Code (npm ``@anthropic-ai/claude-code``), unmodified: ``claude -p MESSAGE`` per turn,
``--continue`` for the turns after the first (its session is kept in its home).

It speaks Anthropic's Messages API, streaming, to ``ANTHROPIC_BASE_URL`` (the capture proxy)
with the session's key as ``ANTHROPIC_API_KEY``; its first request carries its whole system
prompt and tool list (about 50k tokens for a small model's tokenizer). The tool bridge is given
as an MCP server (``--mcp-config``, only that one: ``--strict-mcp-config``), whose tools it
names ``mcp__openenv__NAME``. Its permission prompts are off: the sandbox is the boundary.

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
from openenv_hub.harness.sandbox import HOME, RunResult

__all__ = ["ClaudeCodeAdapter"]

_INSTALL = "npm install --prefix .agents @anthropic-ai/claude-code"
_MCP_CONFIG = f"{HOME}/.openenv-mcp.json"


class ClaudeCodeAdapter(SandboxedCLIAdapter):
    """Claude Code in its sandbox.

    Args:
        config: The harness's configuration (``model``: the name it asks for, one it knows,
            such as ``claude-sonnet-4-5``; ``max_turns``; ``max_output_tokens``).
        executable: Its ``claude`` command (default: ``claude`` on ``PATH``).
    """

    BUILTIN_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset(
        {
            "Agent", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList", "Edit",
            "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillShell",
            "ListAgents", "Monitor", "MultiEdit", "NotebookEdit", "Read", "ReportFindings",
            "ScheduleWakeup", "SendMessage", "Skill", "Task", "TaskCreate", "TaskGet",
            "TaskList", "TaskStop", "TaskUpdate", "TodoWrite", "ToolSearch", "WebFetch",
            "WebSearch", "Workflow", "Write",
        }
    )  # fmt: skip

    def __init__(
        self,
        config: HarnessConfig | None = None,
        *,
        executable: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(config or HarnessConfig(name="claude-code", model="claude-sonnet-4-5"))
        self.executable = find_executable("claude", executable, _INSTALL)

    def installation(self) -> list[str]:
        # The package's folder (its native binary), and node_modules where npm linked it.
        real = Path(os.path.realpath(self.executable))
        return sorted({str(real.parent.parent), str(Path(self.executable).parent.parent)})

    def write_settings(self, home: Path) -> None:
        if self.bridge_url is not None and self.tools:
            servers = {"openenv": {"type": "http", "url": self.bridge_url}}
            (home / ".openenv-mcp.json").write_text(json.dumps({"mcpServers": servers}))

    def command(self, message: str, turn: int) -> list[str]:
        argv = [*(self.config.command or [self.executable]), "-p", message]
        argv += ["--output-format", "stream-json", "--verbose"]
        argv += ["--dangerously-skip-permissions", "--max-turns", str(self.config.max_turns)]
        if self.config.model:
            argv += ["--model", self.config.model]
        if self.bridge_url is not None and self.tools:
            argv += ["--mcp-config", _MCP_CONFIG, "--strict-mcp-config"]
        return [*argv, "--continue"] if turn > 0 else argv

    def variables(self) -> dict[str, str]:
        assert self.run is not None
        return {
            "ANTHROPIC_BASE_URL": self.run.model_url,
            self.config.api_key_env_var or "ANTHROPIC_API_KEY": self.run.api_key,
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(self.config.max_output_tokens),
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def final_response(self, result: RunResult) -> str:
        """The ``result`` of its last ``{"type": "result"}`` line."""
        for line in reversed(result.stdout.splitlines()):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "result":
                return str(event.get("result") or "")
        return result.stdout.strip()[-2000:]
