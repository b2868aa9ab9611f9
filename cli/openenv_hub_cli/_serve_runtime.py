"""``openenv serve --runtime NAME`` (any runtime of the registry but ``local``): start the
environment (a folder, or a Space ``NS/NAME`` for the runtimes that start Spaces) with it, print
its addresses, follow its log (or, for replicas that Ray restarts, their state) until Ctrl-C or
SIGTERM, or until the server goes away, then stop it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openenv_hub_cli._utils import CommandError, console, err_console, serving_until_stopped

if TYPE_CHECKING:
    from openenv_hub.runtimes import Provider

__all__ = ["serve_space_with_runtime", "serve_with_runtime"]


def serve_with_runtime(env_dir: Path, runtime: str, options: dict[str, Any]) -> None:
    from openenv_hub.runtimes import starter

    start = starter(runtime, "folder", env_dir, options, what=f"The {runtime} runtime")
    console.print(f"Starting {env_dir.name} with the {runtime} runtime...")
    _serve(start)


def serve_space_with_runtime(repo_id: str, runtime: str, options: dict[str, Any]) -> None:
    """Start the Space ``repo_id`` (its main branch, with the user's consent to run its code)
    with ``runtime``, and serve it as :func:`serve_with_runtime` does."""
    from openenv_hub.runtimes import SpaceRef, starter

    start = starter(runtime, "space", SpaceRef(repo_id), options, what=f"The {runtime} runtime")
    console.print(f"Starting the Space {repo_id} with the {runtime} runtime...")
    _serve(start)


def _serve(start: Callable[[], Provider]) -> None:
    with serving_until_stopped(start) as provider:
        if provider.restarts_replicas:  # Ray: follow the replicas' states, not a log
            from openenv_hub_cli._serve_ray import watch_replicas

            watch_replicas(provider)
            return
        _print_addresses(provider)
        console.print("Press Ctrl+C to stop.")
        _follow(provider)


def _print_addresses(provider: Provider) -> None:
    for base in provider.base_urls:
        console.print(
            f"[bold]API[/]   {base}   (WebSocket {base.replace('http', 'ws', 1)}/ws)", markup=True
        )
    console.print(f"[bold]Docs[/]  {provider.base_url}/docs", markup=True)
    for line in provider.details():
        console.print(line, markup=False, highlight=False)


def _follow(provider: Provider) -> None:
    """Print the server's new log lines until it stops running: an error if it ended on its
    own, said plainly if another process stopped it (``openenv stop``, ``kill``)."""
    shown = 0
    while True:
        lines = provider.logs(100_000).splitlines()
        for line in lines[shown:]:
            err_console.print(line, markup=False, highlight=False)
        shown = len(lines)
        if not provider.running():
            why = provider.stopped_from_outside()
            if why:
                console.print(f"The server was stopped from outside: {why}.")
                return
            raise CommandError(
                f"The server stopped ({provider.runtime} runtime).",
                hint="Read its log above.",
            )
        time.sleep(0.5)
