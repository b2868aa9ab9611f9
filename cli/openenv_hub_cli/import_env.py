"""``openenv import harbor|verifiers SOURCE``: an environment in another format as an
environment folder (see docs/importing.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from openenv_hub_cli._utils import console

__all__ = ["app"]

app = typer.Typer(
    help="Make an environment folder from a Harbor task set or a verifiers environment.",
    no_args_is_help=True,
)

OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="The environment folder to write.")
]
NameOption = Annotated[
    str | None, typer.Option("--name", help="Its package name (default: the folder's).")
]


@app.command("harbor")
def harbor(
    source: Annotated[
        str,
        typer.Argument(help="A Harbor task folder, a folder of them, or hf://datasets/NS/NAME."),
    ],
    output: OutputOption,
    name: NameOption = None,
    build: Annotated[
        bool,
        typer.Option(
            "--build", help="Build each task's image now (runs its Dockerfile: asks first)."
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Consent to building without asking.")
    ] = False,
) -> None:
    """Serve a Harbor task set: each episode one task in a container of its own, graded by its
    hidden test; the oracle is each task's solution/solve.sh."""
    from openenv_hub.importers import import_harbor

    made = import_harbor(source, output, name=name, build=build, trust_remote_code=yes)
    console.print(
        f"[green]Imported[/] {len(made.tasks)} Harbor tasks into {made.path}", markup=True
    )
    for image in made.images:
        console.print(f"  built {image}", markup=False)
    console.print(f"Next:\n  openenv serve {made.path}\n  openenv tasks {made.path}", markup=False)


@app.command("verifiers")
def verifiers(
    source: Annotated[
        str,
        typer.Argument(
            help="The environment's .py file, its folder, or an installed module's name."
        ),
    ],
    output: OutputOption,
    name: NameOption = None,
    module: Annotated[
        str | None,
        typer.Option("--module", help="The module to take when the source holds several."),
    ] = None,
    arguments: Annotated[
        str, typer.Option("--args", help="load_environment's arguments, as a JSON object.")
    ] = "{}",
) -> None:
    """Serve a verifiers environment (load_environment()), found by reading its source: nothing
    of it runs until the folder is served."""
    import json

    from openenv_hub.importers import import_verifiers
    from openenv_hub_cli._utils import CommandError

    try:
        given = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise CommandError(
            f"--args is not JSON: {exc}", hint="e.g. --args '{\"max_turns\": 4}'"
        ) from None
    if not isinstance(given, dict):
        raise CommandError("--args must be a JSON object of load_environment's arguments.")
    made = import_verifiers(source, output, name=name, module=module, arguments=given)
    found = made.detected
    kinds = ", ".join(found.classes) or "an environment"
    console.print(
        f"[green]Imported[/] {found.module}.load_environment() ({kinds}) into {made.path}",
        markup=True,
    )
    console.print(
        f"Next (serving it runs {found.module}'s code; read it first):\n  openenv serve {made.path}",
        markup=False,
    )
