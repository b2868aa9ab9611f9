"""``openenv serve --runtime uv|docker``: start the environment with a provider, print its
addresses, follow its log until Ctrl-C or SIGTERM (or until the server goes away), then stop
it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from openenv_hub_cli._utils import CommandError, console, err_console, serving_until_stopped

__all__ = ["serve_with_provider"]


def serve_with_provider(env_dir: Path, runtime: str, options: dict[str, Any]) -> None:
    from openenv_hub.runtimes.launch import start_folder

    console.print(f"Starting {env_dir.name} with the {runtime} runtime...")
    with serving_until_stopped(lambda: start_folder(env_dir, runtime, **options)) as provider:
        base = provider.base_url
        name = getattr(provider, "name", "")
        console.print(
            f"[bold]API[/]   {base}   (WebSocket {base.replace('http', 'ws', 1)}/ws)", markup=True
        )
        console.print(f"[bold]Docs[/]  {base}/docs", markup=True)
        if name:
            console.print(
                f"[bold]Name[/]  {name}  (openenv ps lists it; openenv stop {name})", markup=True
            )
        console.print("Press Ctrl+C to stop.")
        _follow(provider)


def _follow(provider: Any) -> None:
    """Print the server's new log lines until it stops running."""
    shown = 0
    while True:
        lines = provider.logs(100_000).splitlines()
        for line in lines[shown:]:
            err_console.print(line, markup=False, highlight=False)
        shown = len(lines)
        running = getattr(provider, "running", None)
        if callable(running) and not running():
            raise CommandError(
                f"The server stopped ({provider.runtime} runtime).",
                hint="Read its log above.",
            )
        time.sleep(0.5)
