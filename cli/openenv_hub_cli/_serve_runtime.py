"""``openenv serve --runtime NAME`` (any runtime of the registry but ``local``): start the
environment (a folder, or a Space ``NS/NAME`` for the runtimes that start Spaces) with it, print
its addresses, follow its log (or, for replicas that Ray restarts, their state) until Ctrl-C or
SIGTERM, or until the server goes away, then stop it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openenv_hub_cli._utils import CommandError, console, err_console, serving_until_stopped

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


def _serve(start: Callable[[], Any]) -> None:
    with serving_until_stopped(start) as provider:
        if hasattr(provider, "replicas") and hasattr(provider, "events"):
            from openenv_hub_cli._serve_ray import watch_replicas

            watch_replicas(provider)
            return
        _print_addresses(provider)
        console.print("Press Ctrl+C to stop.")
        _follow(provider)


def _print_addresses(provider: Any) -> None:
    for base in provider.base_urls:
        console.print(
            f"[bold]API[/]   {base}   (WebSocket {base.replace('http', 'ws', 1)}/ws)", markup=True
        )
    console.print(f"[bold]Docs[/]  {provider.base_url}/docs", markup=True)
    sandboxes = getattr(provider, "sandbox_ids", None)
    if sandboxes:
        console.print(
            f"Sandboxes {', '.join(sandboxes)} (openenv ps --daytona lists them). Their URLs "
            "need each sandbox's preview token in the x-daytona-preview-token header "
            "(from_hub(runtime='daytona') and EnvPool over DaytonaProvider send it)."
        )
    name = getattr(provider, "name", "")
    if name:
        console.print(
            f"[bold]Name[/]  {name}  (openenv ps lists it; openenv stop {name})", markup=True
        )


def _follow(provider: Any) -> None:
    """Print the server's new log lines until it stops running: an error if it ended on its
    own, said plainly if another process stopped it (``openenv stop``, ``kill``)."""
    shown = 0
    while True:
        lines = provider.logs(100_000).splitlines()
        for line in lines[shown:]:
            err_console.print(line, markup=False, highlight=False)
        shown = len(lines)
        running = getattr(provider, "running", None)
        if callable(running) and not running():
            stopped = getattr(provider, "stopped_from_outside", None)
            why = stopped() if callable(stopped) else None
            if why:
                console.print(f"The server was stopped from outside: {why}.")
                return
            raise CommandError(
                f"The server stopped ({provider.runtime} runtime).",
                hint="Read its log above.",
            )
        time.sleep(0.5)
