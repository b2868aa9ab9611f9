"""What ``openenv serve`` can serve, named in one argument:

- an environment folder (with ``openenv.yaml``): every runtime;
- a Python file defining ``app`` (``guess.py``, or ``guess.py:other`` for another name);
- an import path ``module:attribute`` (``echo_env.server.app:app``), imported from the current
  folder as uvicorn does;
- a Gymnasium id written ``gym:ID`` (``gym:Blackjack-v1``; ``gym:ale_py:ALE/Pong-v5`` for an id
  another package registers).

The last three run in this interpreter only (no ``--runtime``, no ``--ray``): those need a folder
to install or build. A bare id such as ``Blackjack-v1`` is no path: the error says to write
``gym:Blackjack-v1``.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub.errors import DependencyNotInstalledError
from openenv_hub.model.manifest import load_manifest
from openenv_hub.validation.failure import describe_import_failure
from openenv_hub_cli._utils import CommandError, resolve_env_dir

__all__ = ["DEFAULT_PORT", "ServeTarget", "ServeTargetArg", "serve_target"]

DEFAULT_PORT = 8000
GYM_PREFIX = "gym:"
_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_GYM_ID = re.compile(r"^([\w.-]+:)?([\w.-]+/)?[\w.-]+-v\d+$")
_SPACE_ID = re.compile(r"^[\w.-]+/[\w.-]+$")

ServeTargetArg = Annotated[
    str,
    typer.Argument(
        metavar="ENV",
        help="An environment folder, a Python file defining 'app', module:app, or gym:ID "
        "(a Gymnasium id).",
        show_default="current folder",
    ),
]


@dataclass
class ServeTarget:
    """One thing to serve: how to import it, where from, and what its folder says.

    ``env_dir`` is set for an environment folder only; ``app_path`` is ``None`` when there is no
    import string to hand to uvicorn's ``--reload`` (a Gymnasium id).
    """

    label: str
    app_dir: Path
    make_app: Callable[[], Any]
    app_path: str | None = None
    env_dir: Path | None = None
    port: int = DEFAULT_PORT
    max_concurrent_envs: int | None = None
    variables: dict[str, Any] = field(default_factory=dict)

    def folder(self, option: str) -> Path:
        """The environment folder, which ``option`` needs; a usage error for anything else."""
        if self.env_dir is None:
            raise CommandError(
                f"{option} serves an environment folder (with openenv.yaml), not {self.label}.",
                hint=f"Drop {option} to serve it in this interpreter, or serve its folder.",
            )
        return self.env_dir

    def reload_path(self) -> str:
        """The import string ``--reload`` restarts from."""
        if self.app_path is None:
            raise CommandError(
                f"--reload needs a file or a module to watch; {self.label} has none."
            )
        return self.app_path


def serve_target(spec: str) -> ServeTarget:
    """What ``spec`` names (see the module's docstring), checked, not imported yet."""
    if spec.startswith(GYM_PREFIX):
        return _gymnasium(spec.removeprefix(GYM_PREFIX))
    path = Path(spec)
    if path.is_dir():
        return _folder(resolve_env_dir(path))
    file, _, attribute = spec.rpartition(":") if ".py:" in spec else (spec, "", "")
    if file.endswith(".py") and Path(file).is_file():
        return _python_file(Path(file).resolve(), attribute or "app")
    if path.exists():
        raise CommandError(
            f"Not a folder or a Python file: {spec}",
            hint="Serve an environment folder, a .py file defining 'app', or module:app.",
        )
    if _IMPORT_PATH.match(spec):
        return _import_path(spec)
    if _GYM_ID.match(spec):
        raise CommandError(
            f"Path does not exist: {spec}",
            hint=f"To serve the Gymnasium environment {spec}, write: openenv serve gym:{spec}",
        )
    if _SPACE_ID.match(spec) and not path.parent.is_dir():  # not a typo of a folder's path
        raise _a_space_not_a_folder(spec)
    return _folder(resolve_env_dir(path))  # says that the path does not exist


def _a_space_not_a_folder(repo_id: str) -> CommandError:
    """What to say when ``repo_id`` names no folder here but reads as a Space's id."""
    from openenv_hub.runtimes import runtime_names

    able = [name for name in runtime_names("space") if name not in ("space", "local")]
    first = "uv" if "uv" in able else able[0]
    return CommandError(
        f"There is no folder {repo_id} here. To serve the Space {repo_id}, say where it runs: "
        f"openenv serve {repo_id} --runtime {first} (or --runtime {', '.join(able)}).",
        hint=f"Or get its folder first: openenv pull {repo_id}, then openenv serve "
        f"{repo_id.split('/')[1]}",
    )


def _folder(env_dir: Path) -> ServeTarget:
    manifest = load_manifest(env_dir)
    return ServeTarget(
        label=str(env_dir),
        app_dir=env_dir,
        make_app=lambda: import_app(manifest.app_path, env_dir, origin="openenv.yaml"),
        app_path=manifest.app_path,
        env_dir=env_dir,
        port=manifest.port,
        max_concurrent_envs=manifest.max_concurrent_envs,
        variables=dict(manifest.variables),
    )


def _python_file(file: Path, attribute: str) -> ServeTarget:
    app_path = f"{file.stem}:{attribute}"
    return ServeTarget(
        label=file.name,
        app_dir=file.parent,
        make_app=lambda: import_app(app_path, file.parent, origin=file.name),
        app_path=app_path,
    )


def _import_path(spec: str) -> ServeTarget:
    here = Path.cwd()
    return ServeTarget(
        label=spec,
        app_dir=here,
        make_app=lambda: import_app(spec, here, origin="the command line"),
        app_path=spec,
    )


def _gymnasium(env_id: str) -> ServeTarget:
    if not env_id:
        raise CommandError("gym: needs an id after it.", hint="e.g. openenv serve gym:CartPole-v1")

    def make() -> Any:
        import openenv_hub.ui  # noqa: F401 - registers the web UI that web=True mounts
        from openenv_hub.gymnasium import GymnasiumEnvironment
        from openenv_hub.server.app import create_app

        return create_app(GymnasiumEnvironment.factory(env_id))

    return ServeTarget(label=f"the Gymnasium id {env_id}", app_dir=Path.cwd(), make_app=make)


def import_app(app_path: str, app_dir: Path, *, origin: str) -> Any:
    """Import the app now, so that a broken import is reported before uvicorn starts."""
    sys.path.insert(0, str(app_dir))
    module, _, attr = app_path.partition(":")
    try:
        loaded = importlib.import_module(module)
    except DependencyNotInstalledError:
        raise
    except Exception as exc:  # the environment's code: a syntax error, a failing import, ...
        raise CommandError(
            f"The app '{app_path}' (from {origin}) does not import: {describe_import_failure(exc)}",
            hint=_fix_hint(origin),
        ) from exc
    app = getattr(loaded, attr, None)
    if app is None:
        raise CommandError(
            f"The app '{app_path}' (from {origin}) does not import: {module} has no '{attr}'.",
            hint=_fix_hint(origin),
        )
    return app


def _fix_hint(origin: str) -> str:
    if origin == "openenv.yaml":
        return (
            "Fix the error, or the 'app' field of openenv.yaml. "
            "Run 'openenv validate --level import' for details."
        )
    return "Fix the error, or name the app: openenv serve FILE.py:NAME (or module:NAME)."
