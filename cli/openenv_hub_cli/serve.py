"""``openenv serve``: run an environment's app with uvicorn (or with a runtime: uv, docker, Ray).

What it serves is named in one argument (:mod:`._serve_target`): a folder, a file, module:app, or
a Gymnasium id."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub.transport.local_ports import port_in_use
from openenv_hub_cli._progress import showing_progress
from openenv_hub_cli._serve_target import ServeTargetArg, serve_target
from openenv_hub_cli._utils import CommandError, console

__all__ = ["command"]


def _runtime_help() -> str:
    """Where the server runs, each runtime that serves a folder in a few words (the registry's)."""
    from openenv_hub.runtimes import get_runtime, runtime_names

    others = [name for name in runtime_names("folder") if name != "local"]
    described = "; ".join(f"{name}: {get_runtime(name).summary}" for name in others)
    spaces_only = [n for n in runtime_names("space") if n not in ("space", "local", *others)]
    more = "; ".join(f"{name}: {get_runtime(name).summary}" for name in spaces_only)
    spaces = ", ".join(n for n in runtime_names("space") if n not in ("space", "local"))
    return (
        f"Where the server runs. local: this process (the default; --reload works); "
        f"{described}; {more}. A Space NS/NAME (instead of a folder) runs with: {spaces}."
    )


def command(
    env: ServeTargetArg = ".",
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            "-p",
            min=1,
            max=65535,
            help="Port to listen on.",
            show_default="the manifest's port",
        ),
    ] = None,
    reload: Annotated[
        bool, typer.Option("--reload", help="Restart when a file of the env changes.")
    ] = False,
    web: Annotated[
        bool | None,
        typer.Option(
            "--web/--no-web", help="Mount the web UI at /web.", show_default="$ENABLE_WEB_INTERFACE"
        ),
    ] = None,
    max_sessions: Annotated[
        int | None,
        typer.Option(
            "--max-concurrent-envs",
            "--max-sessions",
            min=1,
            help="Sessions served at once ($MAX_CONCURRENT_ENVS; --max-sessions is its older name).",
            show_default="64",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="local: serve the address from N processes, each with its own sessions (up to "
            "--max-sessions each); a request naming a session reaches the process that holds it.",
        ),
    ] = 1,
    runtime: Annotated[
        str,
        typer.Option(
            "--runtime", help=_runtime_help() + " --ray and --jobs are older names of two."
        ),
    ] = "local",
    tag: Annotated[
        str | None,
        typer.Option(
            "--tag", "-t", help="docker, swarm: image tag.", show_default="openenv-NAME:latest"
        ),
    ] = None,
    base_image: Annotated[
        str | None,
        typer.Option(
            "--base-image", envvar="OPENENV_BASE_IMAGE", help="docker, swarm: BASE_IMAGE build arg."
        ),
    ] = None,
    build_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--build-arg",
            envvar="OPENENV_BUILD_ARGS",
            help="docker, swarm: KEY=VALUE build arg, repeatable (or $OPENENV_BUILD_ARGS).",
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="--runtime ray on the cluster at ADDRESS (alone, or 'auto': $RAY_ADDRESS).",
        ),
    ] = None,
    replicas: Annotated[
        int,
        typer.Option("--replicas", min=1, help="ray, swarm, daytona, --jobs: number of replicas."),
    ] = 1,
    jobs: Annotated[
        bool,
        typer.Option(
            "--jobs",
            help="--runtime jobs: run the Space NS/NAME (given as PATH) as Hugging Face Jobs.",
        ),
    ] = False,
    flavor: Annotated[
        str, typer.Option("--flavor", help="--jobs: the hardware flavor.")
    ] = "cpu-basic",
    timeout: Annotated[
        str,
        typer.Option("--timeout", help="--jobs: longest run of each Job (seconds, or 30m, 2h...)."),
    ] = "1h",
    detach: Annotated[
        bool,
        typer.Option(
            "--detach", help="--jobs: leave the Jobs running (until --timeout) and return."
        ),
    ] = False,
    public: Annotated[
        bool,
        typer.Option(
            "--public", help="--jobs: expose the port without a token (anyone may use it)."
        ),
    ] = False,
) -> None:
    """Serve the environment (HTTP, /ws, /mcp, and the web UI with --web)."""
    runtime, address = _one_runtime(runtime, ray, jobs, reload)
    if workers > 1 and (reload or runtime != "local"):
        raise CommandError("--workers N serves from this machine's processes: drop --reload "
                           "and --runtime (ray, swarm and --jobs take --replicas).")  # fmt: skip
    if build_arg is None:
        build_arg = []
    if runtime == "jobs":
        from openenv_hub_cli._serve_jobs import serve_jobs

        options = {"replicas": replicas, "flavor": flavor, "timeout": timeout, "public": public}
        serve_jobs(env, options, detach=detach)
        return
    if detach:
        raise CommandError("--detach goes with --jobs; other runtimes stop with this command.")
    if runtime != "local" and _names_a_space(env):
        given = {"replicas": replicas, "base_image": base_image, "build_args": [*build_arg]}
        _serve_space(env, runtime, web, given)
        return
    target = serve_target(env)
    port = port or target.port
    if runtime != "local":
        if reload:
            raise CommandError("--reload works with the local runtime only.")
        given = {"port": port, "tag": tag, "base_image": base_image, "build_args": [*build_arg]}
        given |= {"replicas": replicas, "address": address, "max_concurrent_envs": max_sessions}
        env_dir = target.folder("--ray" if ray is not None else f"--runtime {runtime}")
        _serve_elsewhere(env_dir, runtime, web, given)
        return
    if port_in_use(host, port):
        raise CommandError(
            f"Port {port} on {host} is already in use.",
            hint=f"Stop the other server, or pick another port: openenv serve --port {port + 1}",
        )
    reload_path = target.reload_path() if reload else None
    _set_env(web, max_sessions or target.max_concurrent_envs, target.variables)
    app = target.make_app()
    from openenv_hub.server.app import tell_bind_host
    from openenv_hub.server.watch import BIND_HOST_SETTING

    if reload or not tell_bind_host(app, host):  # who may watch (openenv_hub.server.watch)
        os.environ[BIND_HOST_SETTING] = host  # read by the reloader's child, or a wrapping app
    _print_urls(host, port, web_on=_serves_web_ui(app))
    import uvicorn

    from openenv_hub.runtimes.local import serving_here
    from openenv_hub.server.app import uvicorn_options
    from openenv_hub.transport.uvicorn_serving import tune_collector

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if workers > 1:
        from openenv_hub.server.processes import serve_processes

        options = uvicorn_options(app=app)
        with serving_here(f"http://{shown}:{port}", source=env):  # openenv ps lists it
            serve_processes(app, host=host, port=port, workers=workers, options=options,
                            log_level="info")  # fmt: skip
        return
    tune_collector()  # as openenv_hub.serve_app does (see openenv_hub.transport.uvicorn_serving)
    with serving_here(f"http://{shown}:{port}", source=env):  # openenv ps lists it
        uvicorn.run(
            reload_path or app,
            host=host,
            port=port,
            reload=reload,
            reload_dirs=[str(target.app_dir)] if reload else None,
            app_dir=str(target.app_dir),
            log_level="info",
            **uvicorn_options(app=app),  # frames bounded as the app bounds HTTP bodies
        )


def _one_runtime(runtime: str, ray: str | None, jobs: bool, reload: bool) -> tuple[str, str | None]:
    """The runtime chosen (``--ray`` and ``--jobs`` are its older names: ``--runtime ray``,
    ``--runtime jobs``) and the Ray cluster's address."""
    aliases = [name for name, given in (("ray", ray is not None), ("jobs", jobs)) if given]
    chosen = {runtime, *aliases} - {"local"} or {"local"}
    if len(chosen) > 1:
        flags = ", ".join(f"--{name}" for name in aliases)
        raise CommandError(
            f"{flags} and --runtime {runtime} name different runtimes; pick one.",
            hint=f"--{aliases[0]} is --runtime {aliases[0]}.",
        )
    if ray is not None and reload:
        raise CommandError("--ray runs the replicas on Ray; drop --runtime and --reload.")
    return chosen.pop(), (None if ray in (None, "auto") else ray)


def _serve_elsewhere(env_dir: Path, runtime: str, web: bool | None, given: dict[str, Any]) -> None:
    """Start the folder with ``runtime`` (registered by name), with the options of this command
    that it takes, until Ctrl-C."""
    from openenv_hub.runtimes import get_runtime
    from openenv_hub_cli._serve_runtime import serve_with_runtime

    takes = get_runtime(runtime).options.get("folder", frozenset())
    env = {"ENABLE_WEB_INTERFACE": "true" if web else "false"} if web is not None else {}
    if given["max_concurrent_envs"] and "max_concurrent_envs" not in takes:
        env["MAX_CONCURRENT_ENVS"] = str(given["max_concurrent_envs"])
    options = {key: value for key, value in given.items() if key in takes and value is not None}
    if "env" in takes:
        options["env"] = env
    port = options.get("port")
    if port is not None and port_in_use("127.0.0.1", port):
        raise CommandError(
            f"Port {port} on 127.0.0.1 is already in use.",
            hint=f"Stop the other server, or pick another port: --port {port + 1}",
        )
    with showing_progress():  # the build and the start, as they go
        serve_with_runtime(env_dir, runtime, options)


def _names_a_space(env: str) -> bool:
    """Whether ``env`` is a Space's id ``NS/NAME`` rather than a path here."""
    return re.fullmatch(r"[\w.-]+/[\w.-]+", env) is not None and not Path(env).exists()


def _serve_space(repo_id: str, runtime: str, web: bool | None, given: dict[str, Any]) -> None:
    """Start the Space with ``runtime`` (one that starts Spaces), with the options of this
    command that it takes, until Ctrl-C."""
    from openenv_hub.runtimes import get_runtime, runtime_names
    from openenv_hub_cli._serve_runtime import serve_space_with_runtime

    takes = get_runtime(runtime).options.get("space")
    if takes is None:
        able = ", ".join(name for name in runtime_names("space") if name != "space")
        raise CommandError(
            f"The {runtime} runtime cannot serve a Space ({repo_id}); these can: {able}.",
            hint=f"Or serve a folder of it: openenv pull {repo_id}, then openenv serve NAME.",
        )
    options = {key: value for key, value in given.items() if key in takes and value}
    if "env" in takes and web is not None:
        options["env"] = {"ENABLE_WEB_INTERFACE": "true" if web else "false"}
    with showing_progress():  # the build and the start, as they go
        serve_space_with_runtime(repo_id, runtime, options)


def _set_env(web: bool | None, max_sessions: int | None, variables: dict[str, Any]) -> None:
    for key, value in variables.items():
        os.environ.setdefault(key, str(value))
    if web is not None:
        os.environ["ENABLE_WEB_INTERFACE"] = "true" if web else "false"
    if max_sessions is not None:
        os.environ["MAX_CONCURRENT_ENVS"] = str(max_sessions)


def _serves_web_ui(app: Any) -> bool:
    """Whether the app serves the web UI: as it was built (``create_app(web=True)`` in its
    code, or ``--web``), which an import string (``--reload``) leaves to the environment."""
    if isinstance(app, str) or getattr(app, "router", None) is None:  # not a FastAPI app
        from openenv_hub.server.settings import web_interface

        return web_interface()
    from openenv_hub.server.index import serves_web_ui

    return serves_web_ui(app)


def _print_urls(host: str, port: int, *, web_on: bool) -> None:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    base = f"http://{shown}:{port}"
    console.print(f"[bold]API[/]   {base}   (WebSocket ws://{shown}:{port}/ws)", markup=True)
    console.print(f"[bold]Docs[/]  {base}/docs", markup=True)
    ui = f"{base}/web" if web_on else "off (use --web)"
    console.print(f"[bold]UI[/]    {ui}", markup=True)
