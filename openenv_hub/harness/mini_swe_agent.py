"""mini-swe-agent (PyPI ``mini-swe-agent``), unmodified: ``mini -t TASK -y --exit-immediately``
in a virtual environment of its own, one run per task (its loop ends when the model submits).

It speaks chat completions (through LiteLLM) with one native tool, ``bash``, and runs each
command in a fresh shell in ``/workspace``; a command whose output starts with
``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` ends the task. It has no MCP client: environment
tools are not offered to it (see docs/harnesses.md).

Layer: client.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import ClassVar

from openenv_hub.harness.adapter import SandboxedCLIAdapter
from openenv_hub.harness.events import HarnessConfig
from openenv_hub.harness.installs import find_executable, read_regular_file
from openenv_hub.harness.sandbox import HOME, RunResult
from openenv_hub.sandbox.bwrap import python_roots

__all__ = ["MiniSweAgentAdapter"]

_INSTALL = "python -m venv .venv-mini && .venv-mini/bin/pip install mini-swe-agent"
_TRAJECTORY = f"{HOME}/trajectory.json"


class MiniSweAgentAdapter(SandboxedCLIAdapter):
    """mini-swe-agent in its sandbox.

    Args:
        config: The harness's configuration (``model``: the name it asks for; ``max_turns``:
            its step limit).
        executable: The ``mini`` command of its virtual environment (default: ``mini`` on
            ``PATH``).
        config_file: A mini-swe-agent YAML config of your own (templates, limits); default:
            the package's ``mini.yaml``.
    """

    BUILTIN_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset({"bash"})
    ONE_SHOT: ClassVar[bool] = True

    def __init__(
        self,
        config: HarnessConfig | None = None,
        *,
        executable: str | os.PathLike[str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(config or HarnessConfig(name="mini-swe-agent"))
        self.executable = find_executable("mini", executable, _INSTALL)
        self.config_file = None if config_file is None else Path(config_file).resolve()

    def installation(self) -> list[str]:
        python = Path(self.executable).parent / "python"
        return python_roots(str(python)) if python.exists() else [str(Path(self.executable).parent)]

    def write_settings(self, home: Path) -> None:
        if self.config_file is not None:
            (home / "mini.yaml").write_text(self.config_file.read_text())

    def command(self, message: str, turn: int) -> list[str]:
        assert self.run is not None
        model = self.config.model or "openai/tiny"
        base = f"{self.run.model_url}/v1"
        argv = [self.executable, "-m", model, "-t", message, "-y", "--exit-immediately"]
        argv += ["-c", f"{HOME}/mini.yaml" if self.config_file is not None else "mini.yaml"]
        argv += ["-c", f"model.model_kwargs.api_base={base}"]
        argv += ["-c", f"agent.step_limit={self.config.max_turns}", "-o", _TRAJECTORY]
        return [*self.config.command, *argv[1:]] if self.config.command else argv

    def variables(self) -> dict[str, str]:
        assert self.run is not None
        key_name = self.config.api_key_env_var or "OPENAI_API_KEY"
        return {
            key_name: self.run.api_key,
            "MSWEA_CONFIGURED": "true",  # no interactive first-run setup
            "MSWEA_COST_TRACKING": "ignore_errors",  # a local model has no price
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of LiteLLM's price list
            "TERM": "dumb",
        }

    def final_response(self, result: RunResult) -> str:
        """The submission mini-swe-agent saved in its trajectory, else its output's end."""
        assert self.run is not None
        text = read_regular_file(self.run.home / "trajectory.json", 8 << 20)
        try:
            info = json.loads(text or "")["info"]
            return f"{info.get('exit_status', '')}: {info.get('submission', '')}".strip(": ")
        except (OSError, ValueError, KeyError, TypeError):
            return result.stdout.strip()[-2000:]
