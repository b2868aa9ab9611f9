"""Agent harnesses as environments (OpenEnv's RFC 005): mini-swe-agent, Claude Code and Codex
CLI run unmodified in a sandbox whose only network is the capture proxy and the tool bridge,
one step a conversational turn, every model call captured as the engine's token ids.

- :class:`HarnessEnvironment` (``reset`` / ``step(HarnessAction(message=...))``), its
  :class:`HarnessObservation`, and ``HarnessEnvironment.factory(...)`` for ``create_app``.
- The adapters: :class:`MiniSweAgentAdapter`, :class:`ClaudeCodeAdapter`,
  :class:`CodexAdapter`, on :class:`SandboxedCLIAdapter` (write one for another harness:
  docs/harnesses.md) and RFC 005's :class:`HarnessAdapter`, :class:`HarnessConfig`,
  :class:`HarnessEvent`, :class:`HarnessEventType`, :class:`HarnessResponse`.
- The sandbox: :class:`HarnessSandbox` and its :class:`HarnessLimits`; the tool bridge
  :class:`ToolBridge`; graders :class:`TestScriptGrader` and the :class:`WorkspaceGrader`
  protocol; tasks :class:`HarnessTask`, :func:`read_tasks`.

Layer: client.
"""

from openenv_hub.harness.adapter import HarnessAdapter, HarnessRun, SandboxedCLIAdapter
from openenv_hub.harness.bridge import ToolBridge, offered_names
from openenv_hub.harness.claude_code import ClaudeCodeAdapter
from openenv_hub.harness.codex import CodexAdapter
from openenv_hub.harness.environment import (
    NEVER_CALLED,
    HarnessAction,
    HarnessEnvironment,
    HarnessObservation,
    HarnessState,
    model_was_called,
)
from openenv_hub.harness.events import (
    HarnessConfig,
    HarnessEvent,
    HarnessEventType,
    HarnessResponse,
    HarnessTransport,
)
from openenv_hub.harness.graders import Grade, TestScriptGrader, WorkspaceGrader
from openenv_hub.harness.launch import SandboxUnavailable, find_launcher
from openenv_hub.harness.mini_swe_agent import MiniSweAgentAdapter
from openenv_hub.harness.sandbox import HarnessLimits, HarnessSandbox, Relay, RunResult
from openenv_hub.harness.tasks import HarnessTask, read_task, read_tasks

__all__ = [
    "NEVER_CALLED",
    "ClaudeCodeAdapter",
    "CodexAdapter",
    "Grade",
    "HarnessAction",
    "HarnessAdapter",
    "HarnessConfig",
    "HarnessEnvironment",
    "HarnessEvent",
    "HarnessEventType",
    "HarnessLimits",
    "HarnessObservation",
    "HarnessResponse",
    "HarnessRun",
    "HarnessSandbox",
    "HarnessState",
    "HarnessTask",
    "HarnessTransport",
    "MiniSweAgentAdapter",
    "Relay",
    "RunResult",
    "SandboxUnavailable",
    "SandboxedCLIAdapter",
    "TestScriptGrader",
    "ToolBridge",
    "WorkspaceGrader",
    "find_launcher",
    "model_was_called",
    "offered_names",
    "read_task",
    "read_tasks",
]
