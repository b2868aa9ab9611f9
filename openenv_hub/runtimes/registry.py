"""The runtimes by name: one registry that ``from_folder``, ``from_docker_image``,
``from_hub(runtime=...)``, ``openenv serve --runtime`` and the pools start servers through.

A runtime is an object of the :class:`~openenv_hub.runtimes.base.Runtime` protocol (most
derive from :class:`~openenv_hub.runtimes.base.RuntimeBase`), made known with
:func:`register`. The built-in ones are the modules of :mod:`openenv_hub.runtimes` that call
:func:`register` when imported; they are imported on the first lookup, so adding a runtime is
adding its module (and its tests). Another package can register its own the same way.

:func:`starter` checks everything it can before anything starts (the runtime's name, that it
starts from that source, the options it takes, a folder's ``openenv.yaml``) and returns the
start to run later (clients start their server when awaited); :func:`start` starts at once.

Example::

    runtime_names("image")  # ['docker', 'kubernetes', 'swarm']
    with start("uv", "folder", "envs/echo_env", port=8001) as server:
        httpx.get(server.base_url + "/health")

Layer: runtimes.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.runtimes.base import SOURCE_WORDS, Provider, Runtime, Source, SpaceRef

__all__ = ["get_runtime", "register", "runtime_names", "start", "starter", "unregister"]

_RUNTIMES: dict[str, Runtime] = {}
_LOADING = threading.Lock()
_loaded = False


def register(runtime: Runtime) -> Runtime:
    """Make ``runtime`` known by its ``name`` (replacing a runtime of that name); returns it."""
    if not runtime.name.isidentifier():
        raise ConfigurationError(f"A runtime's name must be an identifier, not {runtime.name!r}.")
    _RUNTIMES[runtime.name] = runtime
    return runtime


def unregister(name: str) -> None:
    """Forget the runtime called ``name`` (nothing happens if there is none)."""
    _load_builtins()  # a built-in one would otherwise come back on the first lookup
    _RUNTIMES.pop(name, None)


def _load_builtins() -> None:
    """Import each public module of this package once, so that the runtimes they define
    register (a module that defines none registers nothing)."""
    global _loaded
    with _LOADING:
        if _loaded:
            return
        package = importlib.import_module("openenv_hub.runtimes")
        for module in pkgutil.iter_modules(package.__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"openenv_hub.runtimes.{module.name}")
        _loaded = True


def runtime_names(source: Source | None = None) -> list[str]:
    """The registered runtimes (those that start from ``source``, when given), by name."""
    _load_builtins()
    return sorted(
        name for name, runtime in _RUNTIMES.items() if source is None or source in runtime.options
    )


def get_runtime(name: str) -> Runtime:
    """The runtime called ``name``.

    Raises:
        ConfigurationError: No runtime has that name (the message lists them, and the closest).
    """
    _load_builtins()
    if name in _RUNTIMES:
        return _RUNTIMES[name]
    close = difflib.get_close_matches(name, list(_RUNTIMES), n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigurationError(
        f"Unknown runtime {name!r}{guess}; use one of {', '.join(runtime_names())}."
    )


def starter(
    name: str, source: Source, target: str | Path | SpaceRef, options: dict[str, Any], *,
    what: str = "", also_takes: str = "",
) -> Callable[[], Provider]:  # fmt: skip
    """The start of ``target`` (a folder, an image or a :class:`SpaceRef`) with the runtime
    ``name``, checked now and run when called. ``what`` names the call in messages (e.g.
    ``"from_folder(runtime='uv')"``); ``also_takes`` names what else the caller takes (a
    client's options), for the message about an option the runtime does not take.

    Raises:
        ConfigurationError: An unknown runtime, a source it cannot start from, an option it
            does not take, or a folder without ``openenv.yaml``.
    """
    runtime = get_runtime(name)
    allowed = runtime.options.get(source)
    if allowed is None:
        able = ", ".join(runtime_names(source))
        raise ConfigurationError(
            f"The {name} runtime cannot start from {SOURCE_WORDS[source]}; these can: {able}."
        )
    options = _checked(options, allowed, what or f"The {name} runtime", also_takes)
    if source == "folder":
        return partial(runtime.start_folder, _environment_folder(Path(str(target))), **options)
    if source == "image":
        return partial(runtime.start_image, str(target), **options)
    if not isinstance(target, SpaceRef):
        raise TypeError(f"A Space is given as a SpaceRef, not {type(target).__name__}.")
    return partial(runtime.start_space, target, **options)


def start(name: str, source: Source, target: str | Path | SpaceRef, **options: Any) -> Provider:
    """Start ``target`` with the runtime ``name`` now; see :func:`starter`."""
    return starter(name, source, target, options)()


def _checked(
    options: dict[str, Any], allowed: frozenset[str], what: str, also_takes: str
) -> dict[str, Any]:
    """``options`` (``env_vars``, OpenEnv's name, renamed ``env``) if ``allowed`` has them all."""
    options = dict(options)
    if "env_vars" in options:
        options["env"] = {**(options.pop("env_vars") or {}), **(options.get("env") or {})}
    unknown = sorted(set(options) - allowed)
    if unknown:
        takes = [*sorted(allowed), *([also_takes] if also_takes else [])]
        listed = ", ".join(takes[:-1]) + f" and {takes[-1]}" if len(takes) > 1 else "".join(takes)
        raise ConfigurationError(
            f"{what} does not take {', '.join(unknown)}; it takes {listed or 'no option'}."
        )
    return options


def _environment_folder(folder: Path) -> Path:
    if not (folder / "openenv.yaml").is_file():
        raise ConfigurationError(
            f"{folder} has no openenv.yaml: not an environment folder "
            "(create one with 'openenv init NAME')."
        )
    return folder
