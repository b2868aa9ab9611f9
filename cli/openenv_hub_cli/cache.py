"""``openenv cache list`` and ``openenv cache prune``: the environments ``--runtime uv`` made."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub.runtimes.uv import cache_root
from openenv_hub.runtimes.uv_cache import CachedEnv, cached_envs, remove_cached
from openenv_hub_cli._utils import CommandError, console

__all__ = ["app"]

app = typer.Typer(
    help="The environments --runtime uv made (one per folder and per Space commit).",
    no_args_is_help=True,
)


@app.command("list")
def list_envs() -> None:
    """List the uv environments: source, size, when last started, whether a server uses one."""
    envs = cached_envs()
    if not envs:
        console.print(f"No uv environments in {cache_root()}.")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("NAME", "SOURCE", "SIZE", "LAST USED", "IN USE"):
        table.add_column(column, overflow="fold")
    now = time.time()
    for env in envs:
        table.add_row(
            env.name,
            escape(_source(env)),
            _size(env.size_bytes),
            _ago(env.unused_for_days(now)),
            "yes" if env.in_use else "",
        )
    console.print(table)
    console.print(f"{len(envs)} in {cache_root()}, {_size(sum(e.size_bytes for e in envs))}.")


@app.command("prune")
def prune(
    older_than: Annotated[
        float,
        typer.Option("--older-than", min=0, help="Remove those not started for this many days."),
    ] = 30.0,
    remove_all: Annotated[bool, typer.Option("--all", help="Remove every one not in use.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would go; remove nothing.")
    ] = False,
) -> None:
    """Remove unused uv environments (they are made again when needed). Never one in use; an
    entry that is a link is removed alone, never what it points to."""
    now = time.time()
    chosen = [
        env
        for env in cached_envs()
        if not env.in_use and (remove_all or env.unused_for_days(now) >= older_than)
    ]
    if dry_run:
        for env in chosen:
            console.print(f"Would remove {_what(env)}.")
        console.print(f"{len(chosen)} would go, {_size(sum(e.size_bytes for e in chosen))}.")
        return
    removed = remove_cached(chosen)
    for env in removed:
        console.print(f"Removed {_what(env)}.")
    console.print(f"Removed {len(removed)}, {_size(sum(e.size_bytes for e in removed))}.")
    if len(removed) < len(chosen):
        raise CommandError(
            f"{len(chosen) - len(removed)} could not be removed: a server started using it, or "
            "it is being made.",
            hint="Run the command again once those are done.",
        )


def _source(env: CachedEnv) -> str:
    return f"a link to {env.link}" if env.link else env.source or "?"


def _what(env: CachedEnv) -> str:
    """The entry for a message; a link is removed alone, and the message says so."""
    if env.link:
        return f"the link {env.name} (what it points to, {escape(env.link)}, is left in place)"
    return f"{env.name} ({escape(env.source or '?')})"


def _size(count: int) -> str:
    if count < 1000:
        return f"{count} B"
    for unit, scale in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if count < scale * 1000 or unit == "GB":
            return f"{count / scale:.1f} {unit}"
    raise AssertionError("unreachable")


def _ago(days: float) -> str:
    if days < 1 / 24:
        return "just now"
    if days < 1:
        return f"{days * 24:.0f} h ago"
    return f"{days:.0f} days ago"
