"""What importing the library costs: no CLI, no Hub client, no UI, no cluster engine."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LIBRARY = Path(__file__).resolve().parents[1] / "openenv_hub"
HEAVY = ("openenv_hub_cli", "typer", "gradio", "huggingface_hub", "ray", "docker", "kubernetes")
HEAVY += ("torch", "transformers", "trl", "datasets", "pyarrow")


@pytest.mark.parametrize(
    "statement",
    [
        "import openenv_hub",
        "from openenv_hub import EnvClient, GenericEnvClient, MCPToolClient",
        "from openenv_hub import Environment, create_app",
        "from openenv_hub.rubrics import LLMJudge, WeightedSum",
        "import openenv_hub.trajectories",
        "from openenv_hub.trl import environment_factory",
        "from openenv_hub import EnvPool, SyncEnvPool",
        "import openenv_hub.runtimes.ray, openenv_hub.runtimes.kubernetes",
    ],
)
def test_importing_the_library_loads_no_heavy_package(statement: str) -> None:
    code = f"""
        import sys
        {statement}
        loaded = [name for name in {HEAVY!r} if name in sys.modules]
        assert not loaded, loaded
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_the_library_never_imports_the_command_line_package() -> None:
    offenders = []
    for path in LIBRARY.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(LIBRARY.parent)}: {name}"
                for name in names
                if name.split(".")[0] in ("openenv_hub_cli", "typer")
            ]
    assert offenders == []


def test_the_openenv_command_is_the_cli_package() -> None:
    from importlib.metadata import entry_points

    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "openenv"]
    assert script.value == "openenv_hub_cli.main:main"
