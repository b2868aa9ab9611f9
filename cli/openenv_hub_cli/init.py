"""``openenv init NAME``: a new environment, as a complete Space repo, from the template."""

from __future__ import annotations

import json
import keyword
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub import __version__
from openenv_hub.model.manifest import suggest_name
from openenv_hub_cli._utils import CommandError, console

__all__ = ["command", "name_problem", "render_env", "template_dir"]

NEXT_INSTALL = 'pip install -e ".[dev]"'
"""How a new environment is installed for work: editable, with pytest (its ``dev`` extra)."""

EMOJIS = ["🤖", "🎮", "🧩", "🎯", "🕹️", "🧪", "🚀", "🌱", "🔊", "🎲"]
COLORS = ["red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"]


def template_dir() -> Path:
    """The cookiecutter template, inside the installed package (or the source tree)."""
    import openenv_hub

    return Path(openenv_hub.__file__).resolve().parent / "_templates" / "env"


def name_problem(name: str) -> str:
    """Why ``name`` cannot be an environment (package) name, or ``""``."""
    if not name.isidentifier():
        return "is not a valid Python identifier (letters, digits and underscores only)"
    if keyword.iskeyword(name):
        return "is a Python keyword"
    if name != name.lower():
        return "should be lowercase (it becomes the package name)"
    return ""


def class_prefix(name: str) -> str:
    """``my_game_env`` -> ``MyGame``; ``echo`` -> ``Echo``."""
    stem = name[:-4] if name.endswith("_env") and len(name) > 4 else name
    return "".join(part[:1].upper() + part[1:] for part in stem.split("_") if part) or "Env"


def render_env(
    name: str, output_dir: Path, *, description: str | None = None, rng: random.Random | None = None
) -> Path:
    """Render the template to ``output_dir/name``; nothing is left behind if it fails.

    Nothing is written anywhere else either: cookiecutter's replay file goes to the temporary
    folder, and its hooks (which would leave a rendered script in the system's temporary folder
    on every run) are not run, since ``name_problem`` makes the same check first.
    """
    from cookiecutter.main import cookiecutter

    problem = name_problem(name)
    if problem:
        raise ValueError(f"'{name}' {problem}")
    rng = rng or random.Random()
    target = output_dir / name
    output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output_dir, prefix=f".{name}-init-") as tmp:
        config = Path(tmp) / ".cookiecutter.json"  # JSON is YAML, which cookiecutter reads
        config.write_text(json.dumps({"replay_dir": f"{tmp}/.replay", "cookiecutters_dir": tmp}))
        cookiecutter(
            str(template_dir()),
            no_input=True,
            output_dir=tmp,
            extra_context=_context(name, description, rng),
            config_file=str(config),
            accept_hooks=False,
        )
        for cache in Path(tmp).rglob("__pycache__"):
            shutil.rmtree(cache)
        if target.is_dir():
            target.rmdir()  # empty: checked by the caller
        os.replace(Path(tmp) / name, target)
    return target


def _context(name: str, description: str | None, rng: random.Random) -> dict[str, Any]:
    color_from, color_to = rng.sample(COLORS, 2)
    context: dict[str, Any] = {
        "name": name,
        "class_prefix": class_prefix(name),
        "title": " ".join(part.capitalize() for part in name.split("_") if part),
        "dist_name": name.replace("_", "-"),
        "emoji": rng.choice(EMOJIS),
        "color_from": color_from,
        "color_to": color_to,
        "openenv_hub_version": __version__,
    }
    if description:
        context["description"] = description
    return context


def command(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="Package name of the environment, e.g. my_env.")
    ],
    output_dir: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Where to create it.")
    ] = Path("."),
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="One line about it.")
    ] = None,
    no_input: Annotated[
        bool, typer.Option("--no-input", help="Never prompt; use defaults.")
    ] = False,
) -> None:
    """Create a new environment: a Space repo with server, client, Dockerfile and tests."""
    problem = name_problem(name)
    if problem:
        raise CommandError(f"'{name}' {problem}.", hint=f"Try: openenv init {suggest_name(name)}")
    target = output_dir / name
    if target.is_file() or (target.is_dir() and any(target.iterdir())):
        raise CommandError(
            f"{target} already exists and is not empty.",
            hint="Pick another name or --output-dir, or remove the folder.",
        )
    if description is None and not no_input and sys.stdin.isatty():
        description = typer.prompt("Description", default="", show_default=False) or None
    path = render_env(name, output_dir, description=description)
    console.print(f"[green]Created[/] {path}", markup=True)
    steps = [f"cd {path}", NEXT_INSTALL, "pytest", "openenv serve --reload", "openenv validate"]
    lines = "".join(f"  {step}\n" for step in [*steps, "openenv build"])
    console.print("Next:\n" + lines, end="", markup=False)
