"""The runtimes by name: one registry that ``from_folder``, ``from_docker_image``,
``from_hub(runtime=...)``, ``openenv serve --runtime`` and the pools start servers through.

A runtime is an object of the :class:`~openenv_hub.runtimes.base.Runtime` protocol (most
derive from :class:`~openenv_hub.runtimes.base.RuntimeBase`), made known with
:func:`register`. The built-in ones are listed in :data:`BUILTIN_RUNTIMES` by name and
``"module:Class"`` and imported on first use, so adding a runtime is adding its module, a line
there (and its tests). Another package registers its own the same way (``register("name",
"package.module:Class")``, or ``register(object)``).

Each runtime names its inventory (:func:`inventory_of`): what lists and stops the servers it
started, from any process, for ``openenv ps`` and ``openenv stop``. No module outside this
package builds a runtime's provider itself (``tests/runtimes/test_registry_boundary.py``).

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
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, overload

from openenv_hub.errors import ConfigurationError
from openenv_hub.runtimes.base import SOURCE_WORDS, Inventory, Provider, Runtime, Source, SpaceRef

__all__ = [
    "BUILTIN_RUNTIMES",
    "get_runtime",
    "inventory_of",
    "register",
    "runtime_names",
    "start",
    "starter",
    "unregister",
]

#: The built-in runtimes: name -> ``"module:Class"``, imported on first use (so that listing
#: the names imports no runtime's dependencies).
BUILTIN_RUNTIMES: dict[str, str] = {
    "local": "openenv_hub.runtimes.local:LocalRuntime",
    "uv": "openenv_hub.runtimes.uv:UvRuntime",
    "docker": "openenv_hub.runtimes.docker:DockerRuntime",
    "swarm": "openenv_hub.runtimes.swarm:SwarmRuntime",
    "ray": "openenv_hub.runtimes.ray:RayRuntime",
    "kubernetes": "openenv_hub.runtimes.kubernetes:KubernetesRuntime",
    "space": "openenv_hub.runtimes.space:SpaceRuntime",
    "jobs": "openenv_hub.runtimes.jobs:JobsRuntime",
    "daytona": "openenv_hub.runtimes.daytona:DaytonaRuntime",
}

_RUNTIMES: dict[str, Runtime | str] = dict(BUILTIN_RUNTIMES)
_LOADING = threading.RLock()


@overload
def register(runtime: Runtime) -> Runtime: ...


@overload
def register(runtime: str, entry_point: str) -> None: ...


def register(runtime: Runtime | str, entry_point: str = "") -> Runtime | None:
    """Make a runtime known by name, replacing one of that name: ``register(runtime)`` (an
    object with a ``name``; returns it), or ``register("name", "module:Class")``, imported and
    made on first use, as the built-in ones are."""
    found: Runtime | str
    if isinstance(runtime, str):
        name, found = runtime, entry_point
        if found.count(":") != 1:
            raise ConfigurationError(f"A runtime is registered as 'module:Class', not {found!r}.")
    else:
        name, found = runtime.name, runtime
    if not name.isidentifier():
        raise ConfigurationError(f"A runtime's name must be an identifier, not {name!r}.")
    with _LOADING:
        _RUNTIMES[name] = found
    return None if isinstance(found, str) else found


def unregister(name: str) -> None:
    """Forget the runtime called ``name`` (nothing happens if there is none)."""
    with _LOADING:
        _RUNTIMES.pop(name, None)


def _loaded(name: str) -> Runtime:
    """The runtime ``name``, imported and made now if it was registered as ``module:Class``."""
    with _LOADING:
        found = _RUNTIMES[name]
        if isinstance(found, str):
            found = _RUNTIMES[name] = load_entry_point(found)()
        return found


def load_entry_point(entry_point: str) -> Any:
    """What ``"module:Name"`` names, imported now."""
    module, _, attribute = entry_point.partition(":")
    return getattr(importlib.import_module(module), attribute)


def runtime_names(source: Source | None = None) -> list[str]:
    """The registered runtimes (those that start from ``source``, when given), by name."""
    names = sorted(_RUNTIMES)
    return [name for name in names if source is None or source in _loaded(name).options]


def get_runtime(name: str) -> Runtime:
    """The runtime called ``name``.

    Raises:
        ConfigurationError: No runtime has that name (the message lists them, and the closest).
    """
    if name in _RUNTIMES:
        return _loaded(name)
    close = difflib.get_close_matches(name, list(_RUNTIMES), n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigurationError(
        f"Unknown runtime {name!r}{guess}; use one of {', '.join(runtime_names())}."
    )


def inventory_of(name: str) -> Inventory | None:
    """What lists and stops the servers the runtime ``name`` started, from any process (None:
    it starts nothing to stop, as ``space``, whose app runs on the Hub)."""
    entry_point = get_runtime(name).inventory
    return load_entry_point(entry_point)() if entry_point else None


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


def start(name: str, source: Source, target: str | Path | SpaceRef, /, **options: Any) -> Provider:
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
