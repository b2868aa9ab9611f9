"""``openenv serve``: run an environment's app with uvicorn (or with a runtime: uv, docker, Ray).

What it serves is named in one argument (:mod:`._serve_target`): a folder, a file, module:app, or
a Gymnasium id."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from openenv_hub.providers.local import port_in_use
from openenv_hub_cli._progress import showing_progress
from openenv_hub_cli._serve_target import ServeTargetArg, serve_target
from openenv_hub_cli._utils import CommandError, console

__all__ = ["command"]


def command(
    env: str = ServeTargetArg,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int | None = typer.Option(
        None,
        "--port",
        "-p",
        min=1,
        max=65535,
        help="Port to listen on.",
        show_default="the manifest's port",
    ),
    reload: bool = typer.Option(False, "--reload", help="Restart when a file of the env changes."),
    web: bool | None = typer.Option(
        None,
        "--web/--no-web",
        help="Mount the web UI at /web.",
        show_default="$ENABLE_WEB_INTERFACE",
    ),
    max_sessions: int | None = typer.Option(
        None, "--max-sessions", min=1, help="Sessions served at once.", show_default="64"
    ),
    runtime: str = typer.Option(
        "local",
        "--runtime",
        help="local (this interpreter), uv (an environment of its own) or docker (build and "
        "run the image).",
    ),
    tag: str | None = typer.Option(
        None, "--tag", "-t", help="docker: image tag.", show_default="openenv-NAME:latest"
    ),
    base_image: str | None = typer.Option(
        None, "--base-image", envvar="OPENENV_BASE_IMAGE", help="docker: BASE_IMAGE build arg."
    ),
    build_arg: list[str] = typer.Option(  # noqa: B008 - typer reads defaults from here
        [],
        "--build-arg",
        envvar="OPENENV_BUILD_ARGS",
        help="docker: KEY=VALUE build arg, repeatable (or $OPENENV_BUILD_ARGS).",
    ),
    ray: str | None = typer.Option(
        None,
        "--ray",
        metavar="[ADDRESS]",
        help="Serve replicas on the Ray cluster at ADDRESS (alone, or 'auto': $RAY_ADDRESS).",
    ),
    replicas: int = typer.Option(1, "--replicas", min=1, help="ray: number of replicas."),
) -> None:
    """Serve the environment (HTTP, /ws, /mcp, and the web UI with --web)."""
    target = serve_target(env)
    port = port or target.port
    if ray is not None:
        env_dir = target.folder("--ray")
        from openenv_hub_cli._serve_ray import serve_on_ray

        if runtime != "local" or reload:
            raise CommandError("--ray runs the replicas on Ray; drop --runtime and --reload.")
        address = None if ray == "auto" else ray
        serve_on_ray(env_dir, address, replicas=replicas, web=web, max_sessions=max_sessions)
        return
    if runtime != "local":
        docker = {"tag": tag, "base_image": base_image, "build_args": [*build_arg]}
        env_dir = target.folder(f"--runtime {runtime}")
        _serve_elsewhere(env_dir, runtime, port, reload, web, max_sessions, docker)
        return
    if port_in_use(host, port):
        raise CommandError(
            f"Port {port} on {host} is already in use.",
            hint=f"Stop the other server, or pick another port: openenv serve --port {port + 1}",
        )
    reload_path = target.reload_path() if reload else None
    _set_env(web, max_sessions or target.max_sessions, target.variables)
    app = target.make_app()
    _print_urls(host, port, web_on=_web_on())
    import uvicorn

    from openenv_hub.server.app import uvicorn_options

    uvicorn.run(
        reload_path or app,
        host=host,
        port=port,
        reload=reload,
        reload_dirs=[str(target.app_dir)] if reload else None,
        app_dir=str(target.app_dir),
        log_level="info",
        **uvicorn_options(),
    )


def _serve_elsewhere(
    env_dir: Path,
    runtime: str,
    port: int,
    reload: bool,
    web: bool | None,
    max_sessions: int | None,
    docker: dict[str, Any],
) -> None:
    from openenv_hub_cli._serve_runtime import serve_with_provider

    if runtime not in ("uv", "docker"):
        raise CommandError(f"Unknown runtime {runtime!r}.", hint="Use local, uv or docker.")
    if reload:
        raise CommandError("--reload works with the local runtime only.")
    if port_in_use("127.0.0.1", port):
        raise CommandError(
            f"Port {port} on 127.0.0.1 is already in use.",
            hint=f"Stop the other server, or pick another port: --port {port + 1}",
        )
    env = {"ENABLE_WEB_INTERFACE": "true" if web else "false"} if web is not None else {}
    if max_sessions:
        env["MAX_CONCURRENT_ENVS"] = str(max_sessions)
    options: dict[str, Any] = {"port": port, "env": env}
    if runtime == "docker":
        options.update(docker)
    with showing_progress():  # the build and the start, as they go
        serve_with_provider(env_dir, runtime, options)


def _set_env(web: bool | None, max_sessions: int | None, variables: dict[str, Any]) -> None:
    for key, value in variables.items():
        os.environ.setdefault(key, str(value))
    if web is not None:
        os.environ["ENABLE_WEB_INTERFACE"] = "true" if web else "false"
    if max_sessions is not None:
        os.environ["MAX_CONCURRENT_ENVS"] = str(max_sessions)


def _web_on() -> bool:
    return os.environ.get("ENABLE_WEB_INTERFACE", "").lower() in ("1", "true", "yes", "on")


def _print_urls(host: str, port: int, *, web_on: bool) -> None:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    base = f"http://{shown}:{port}"
    console.print(f"[bold]API[/]   {base}   (WebSocket ws://{shown}:{port}/ws)", markup=True)
    console.print(f"[bold]Docs[/]  {base}/docs", markup=True)
    ui = f"{base}/web" if web_on else "off (use --web)"
    console.print(f"[bold]UI[/]    {ui}", markup=True)
