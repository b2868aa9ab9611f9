"""Environment folders that importers write: the shape ``openenv init`` makes (manifest, Space
card, ``pyproject.toml``, Dockerfile, a package with a client and ``server/app.py``), around a
server module each importer writes, and the imported source copied in beside it.

Layer: client.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from openenv_hub.errors import ConfigurationError
from openenv_hub.hub import ENVIRONMENT_TAGS
from openenv_hub.model.manifest import Manifest, suggest_name

__all__ = ["IMPORT_TAGS", "FolderPlan", "class_prefix", "staged_folder", "write_folder"]

#: The tags every imported environment's card and manifest carry; the source library's follows.
IMPORT_TAGS = ENVIRONMENT_TAGS
#: Copied from an imported source tree: never these (credentials, caches, version control).
_LEFT_OUT = shutil.ignore_patterns(
    ".git", ".hg", ".venv", "venv", "__pycache__", "*.pyc", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", "node_modules", "build", "dist", "*.egg-info", ".env", ".env.*", ".netrc",
    "credentials*.json", "secrets.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*",
)  # fmt: skip


@dataclass
class FolderPlan:
    """What an importer writes.

    Attributes:
        name: The package name (a Python identifier).
        description: One line about the environment.
        library: The source library's tag (``harbor``, ``verifiers``).
        server_module: The text of ``NAME/server/app.py``.
        readme_body: The card's text below its front matter.
        copies: Folders (or files) to copy in: destination (relative to the folder) ->
            source.
        extra_files: More files to write: path (relative) -> text.
        manifest_fields: More fields of ``openenv.yaml`` (``quality``, ``taskset``, ...).
        dependencies: Requirements of ``pyproject.toml`` beyond openenv-hub.
    """

    name: str
    description: str
    library: str
    server_module: str
    readme_body: str
    copies: dict[str, Path] = field(default_factory=dict)
    extra_files: dict[str, str] = field(default_factory=dict)
    manifest_fields: dict[str, object] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)

    @property
    def tags(self) -> list[str]:
        return [*IMPORT_TAGS, self.library]


def class_prefix(name: str) -> str:
    """``my_tasks`` -> ``MyTasks`` (the client class is ``MyTasksEnv``)."""
    stem = name[:-4] if name.endswith("_env") and len(name) > 4 else name
    return "".join(part[:1].upper() + part[1:] for part in stem.split("_") if part) or "Imported"


def write_folder(plan: FolderPlan, destination: Path) -> Path:
    """Write ``plan`` to ``destination`` (which must not exist, or be empty); nothing is left
    behind if it fails.

    Raises:
        ConfigurationError: The name is not a package name, or ``destination`` holds files.
    """
    if not plan.name.isidentifier() or plan.name != plan.name.lower():
        raise ConfigurationError(
            f"{plan.name!r} cannot name an environment: it becomes a Python package.",
            hint=f"Try --name {suggest_name(plan.name)}",
        )
    for source in plan.copies.values():
        if Path(destination).resolve().is_relative_to(Path(source).resolve()):
            raise ConfigurationError(
                f"{destination} is inside {source}, which is copied into it.",
                hint="Write the environment folder outside the imported source.",
            )
    with staged_folder(Path(destination)) as staging:
        for relative, text in _files(plan).items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for relative, source in plan.copies.items():
            if Path(source).is_file():
                (staging / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, staging / relative)
            else:
                shutil.copytree(source, staging / relative, symlinks=True, ignore=_LEFT_OUT)
    return Path(destination)


@contextmanager
def staged_folder(destination: Path) -> Iterator[Path]:
    """A folder beside ``destination`` that becomes it when the block ends without error (and
    is removed when it does not).

    Raises:
        ConfigurationError: ``destination`` is a file, or a folder that holds files.
    """
    if destination.is_file() or (destination.is_dir() and any(destination.iterdir())):
        raise ConfigurationError(
            f"{destination} already exists and is not empty.",
            hint="Choose another --output folder, or remove it.",
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=destination.parent, prefix=f".{destination.name}-"))
    try:
        yield staging
        if destination.is_dir():
            destination.rmdir()
        os.replace(staging, destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _files(plan: FolderPlan) -> dict[str, str]:
    name, prefix = plan.name, class_prefix(plan.name)
    files = {
        "openenv.yaml": _manifest(plan),
        "README.md": _card(plan),
        "pyproject.toml": _pyproject(plan),
        "Dockerfile": _dockerfile(name),
        ".dockerignore": "__pycache__/\n*.pyc\n.venv/\n.env\n",
        f"{name}/__init__.py": _INIT.format(prefix=prefix, name=name),
        f"{name}/client.py": _CLIENT.format(prefix=prefix),
        f"{name}/models.py": _MODELS,
        f"{name}/server/__init__.py": "",
        f"{name}/server/app.py": plan.server_module,
    }
    files.update(plan.extra_files)
    return files


def _manifest(plan: FolderPlan) -> str:
    manifest = Manifest(
        name=plan.name,
        description=plan.description,
        app=f"{plan.name}.server.app:app",
        action="openenv_hub.types:CallToolAction",
        observation="openenv_hub.types:CallToolObservation",
        client=f"{plan.name}.client:{class_prefix(plan.name)}Env",
        tags=plan.tags,
        **plan.manifest_fields,  # type: ignore[arg-type]
    )
    return manifest.dump()


def _card(plan: FolderPlan) -> str:
    title = " ".join(part.capitalize() for part in plan.name.split("_") if part)
    tags = "".join(f"  - {tag}\n" for tag in plan.tags)
    front = (
        f"---\ntitle: {title}\nemoji: 🧰\ncolorFrom: blue\ncolorTo: indigo\nsdk: docker\n"
        f"app_port: 8000\nbase_path: /web\npinned: false\ntags:\n{tags}---\n"
    )
    return f"{front}\n# {title}\n\n{plan.description}\n\n{plan.readme_body.strip()}\n"


def _pyproject(plan: FolderPlan) -> str:
    from importlib.metadata import version

    requirements = [f"openenv-hub>={version('openenv-hub')}", *plan.dependencies]
    return _PYPROJECT.format(
        dist=plan.name.replace("_", "-"),
        name=plan.name,
        description=json.dumps(plan.description),
        dependencies=json.dumps(requirements),
        prefix=class_prefix(plan.name),
    )


def _dockerfile(name: str) -> str:
    template = Path(__file__).resolve().parents[1] / "_templates" / "env"
    text = (template / "{{cookiecutter.name}}" / "Dockerfile").read_text(encoding="utf-8")
    return text.replace("{{ cookiecutter.port }}", "8000").replace("{{ cookiecutter.name }}", name)


_INIT = '''"""The {name} environment's client (``{name}.server`` holds the server)."""

from {name}.client import {prefix}Env

__all__ = ["{prefix}Env"]
'''

_CLIENT = '''"""``{prefix}Env``: the client of this environment, whose actions are tool calls."""

from __future__ import annotations

from openenv_hub import MCPToolClient


class {prefix}Env(MCPToolClient):
    """Client of this environment: ``list_tools()``, ``call_tool(name, **arguments)``."""


__all__ = ["{prefix}Env"]
'''

_MODELS = '''"""This environment's actions and observations: MCP tool calls and their results."""

from openenv_hub.types import CallToolAction, CallToolObservation

__all__ = ["CallToolAction", "CallToolObservation"]
'''

_PYPROJECT = """[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-{dist}"
version = "0.1.0"
description = {description}
readme = "README.md"
requires-python = ">=3.10"
dependencies = {dependencies}

[project.scripts]
{dist}-server = "{name}.server.app:main"

[project.entry-points."openenv.environments"]
{name} = "{name}.client:{prefix}Env"

[tool.setuptools.packages.find]
include = ["{name}*"]
"""
