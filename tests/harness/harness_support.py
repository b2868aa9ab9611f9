"""What the harness tests share: where scripts/test.sh installs the harnesses, the engine's long
context, and a harness environment with a tool of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_support.vllm_engine import REPO

from openenv_hub.harness import HarnessEnvironment
from openenv_hub.model.tools import tool

#: Claude Code's first request is about 50k tokens; the tiny model's positions are stretched.
LONG_CONTEXT = (
    "--max-model-len",
    "131072",
    "--hf-overrides",
    '{"max_position_embeddings": 131072}',
)
MINI = REPO / ".venv-mini" / "bin" / "mini"
CLAUDE = REPO / ".agents" / "node_modules" / ".bin" / "claude"
CODEX = REPO / ".agents" / "node_modules" / ".bin" / "codex"
MINI_CONFIG = Path(__file__).with_name("mini.yaml")
HIDDEN_MARKER = "HIDDEN-TEST-MARKER-4b1d"
INSTALLS = (
    "bash scripts/test.sh installs it (mini-swe-agent in .venv-mini, npm packages in .agents)"
)


def installed(path: Path) -> str:
    """``path`` of a harness, or the test fails naming how to install it."""
    if not path.exists():
        pytest.fail(f"{path.relative_to(REPO)} is missing: {INSTALLS}", pytrace=False)
    return str(path)


class WithTool(HarnessEnvironment):
    """A harness environment with one tool of its own, so the tool bridge is there too."""

    @tool
    def lookup(self, word: str) -> str:
        """Look a word up."""
        return word.upper()
