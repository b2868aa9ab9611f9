"""``openenv build``: the Space's Docker image, built from a staged copy of the environment
holding what ``openenv push`` would upload (the files it leaves out are listed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from openenv_hub.docker import build_image, default_tag
from openenv_hub.model.manifest import load_manifest
from openenv_hub_cli._utils import CommandError, EnvPathArg, console, resolve_env_dir

__all__ = ["command"]


def command(
    path: EnvPathArg = Path("."),
    tag: Annotated[
        str | None,
        typer.Option("--tag", "-t", help="Image tag.", show_default="openenv-NAME:latest"),
    ] = None,
    base_image: Annotated[
        str | None,
        typer.Option(
            "--base-image", envvar="OPENENV_BASE_IMAGE", help="Passed as the BASE_IMAGE build arg."
        ),
    ] = None,
    build_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--build-arg",
            envvar="OPENENV_BUILD_ARGS",
            help="KEY=VALUE, repeatable (or $OPENENV_BUILD_ARGS, space-separated).",
        ),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Build every layer again.")] = False,
    include_secret: Annotated[
        list[str] | None,
        typer.Option(
            "--include-secret",
            help="Build this secret-looking file (*.pem, *.key, ...) into the image on purpose; a "
            "path or a .gitignore-style pattern (repeatable).",
        ),
    ] = None,
    allow_hard_links: Annotated[
        bool,
        typer.Option(
            "--allow-hard-links",
            help="Build in files that have more than one hard link (another name of such a file "
            "may be outside the folder).",
        ),
    ] = False,
) -> None:
    """Build the environment's image with the local Docker engine (on the host network).

    The image gets the files 'openenv push' would upload: no .env, no secret-looking file,
    no link to outside the folder, no hard link. A development version of openenv-hub is bundled into the
    build context as a wheel, so the image runs the same openenv-hub as this command.
    """
    if include_secret is None:
        include_secret = []
    if build_arg is None:
        build_arg = []
    env_dir = resolve_env_dir(path)
    manifest = load_manifest(env_dir)
    bad = [arg for arg in build_arg if "=" not in arg or arg.startswith("=")]
    if bad:
        raise CommandError(f"--build-arg must be KEY=VALUE, got {', '.join(bad)}")
    tag = tag or default_tag(manifest.name)
    console.print(f"Building [bold]{tag}[/] from {env_dir}", markup=True)
    selection = build_image(
        env_dir,
        tag,
        base_image=base_image,
        build_args=build_arg,
        no_cache=no_cache,
        include_secrets=include_secret,
        allow_hard_links=allow_hard_links,
    )
    if selection.skipped:
        console.print("[yellow]Not in the image:[/]", markup=True)
    for item in selection.skipped:
        console.print(f"  {escape(item.path)}: {escape(item.reason)}")
    console.print(f"[green]Built[/] {tag}", markup=True)
    console.print(f"Run it: docker run --rm --network host -e PORT={manifest.port} {tag}")
