"""Installed environments, found by their entry points (group ``openenv.environments``).

An environment package declares its client class in its ``pyproject.toml``::

    [project.entry-points."openenv.environments"]
    echo_env = "echo_env.client:EchoEnv"

No naming convention is assumed: the entry point says which module and class to load.

Example:
    >>> [env.name for env in list_environments()]  # doctest: +SKIP
    ['echo_env']
    >>> get_environment("echo").name  # doctest: +SKIP
    EnvironmentNotFoundError: No installed environment is named 'echo'. Did you mean 'echo_env'?

Layer: services.
"""

from __future__ import annotations

import difflib
import inspect
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from openenv_hub.errors import EnvironmentNotFoundError

__all__ = [
    "ENTRY_POINT_GROUP",
    "EnvironmentInfo",
    "get_environment",
    "installed_distributions",
    "installed_sources",
    "list_environments",
]

ENTRY_POINT_GROUP = "openenv.environments"


def _scan(group: str) -> list[dict[str, Any]]:
    """Each entry point of ``group`` with its distribution. Stdlib only: it also runs, as
    source, inside other interpreters (see :func:`list_environments`)."""
    import json
    from importlib import metadata

    found = []
    for dist in metadata.distributions():
        for ep in dist.entry_points:
            if ep.group != group:
                continue
            try:
                direct = json.loads(dist.read_text("direct_url.json") or "null") or {}
            except ValueError:
                direct = {}
            vcs = direct.get("vcs_info") or {}
            shipped = [f for f in (dist.files or []) if str(f).endswith("openenv.yaml")]
            found.append(
                {
                    "name": ep.name,
                    "value": ep.value,
                    "distribution": dist.metadata["Name"],
                    "version": dist.version,
                    "source_url": direct.get("url"),
                    "commit": vcs.get("commit_id"),
                    "requested_revision": vcs.get("requested_revision"),
                    "manifest": str(dist.locate_file(shipped[0])) if shipped else None,
                }
            )
    return found


@dataclass(frozen=True)
class EnvironmentInfo:
    """An installed environment.

    Attributes:
        name: The entry point's name (how you ask for the environment).
        value: ``module:Class`` of its client.
        distribution: The pip distribution that provides it, and ``version`` of it.
        source_url: Where pip installed it from (``direct_url.json``), e.g. a Space's git URL.
        commit: The git commit it was installed from, and ``requested_revision`` as asked.
        manifest: Path of an ``openenv.yaml`` shipped in the distribution, if any.
    """

    name: str
    value: str
    distribution: str
    version: str
    source_url: str | None = None
    commit: str | None = None
    requested_revision: str | None = None
    manifest: str | None = None

    @property
    def package(self) -> str:
        """The top-level package of the client module, e.g. ``echo_env``."""
        return self.value.split(":")[0].split(".")[0]

    def load(self) -> Any:
        """Import and return the client class."""
        module, _, attr = self.value.partition(":")
        obj: Any = import_module(module)
        for part in attr.split(".") if attr else []:
            obj = getattr(obj, part)
        return obj


def list_environments(*, python: str | Path | None = None) -> list[EnvironmentInfo]:
    """The environments installed in this interpreter, or in ``python`` (another one)."""
    found = [EnvironmentInfo(**item) for item in _run(_scan, ENTRY_POINT_GROUP, python=python)]
    unique = {(env.name, env.distribution): env for env in found}
    return sorted(unique.values(), key=lambda env: env.name)


def installed_sources(*, python: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """``{distribution: {"url", "commit"}}`` for each distribution pip installed from a URL."""
    return dict(_run(_sources, python=python))


def _sources() -> dict[str, dict[str, Any]]:
    """Stdlib only, like :func:`_scan`."""
    import json
    from importlib import metadata

    found = {}
    for dist in metadata.distributions():
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "null") or {}
        except ValueError:
            continue
        if direct.get("url"):
            commit = (direct.get("vcs_info") or {}).get("commit_id")
            found[dist.metadata["Name"]] = {"url": direct["url"], "commit": commit}
    return found


def installed_distributions(*, python: str | Path | None = None) -> list[dict[str, Any]]:
    """Every installed distribution: ``name``, ``version``, ``editable`` (and the folder it
    was installed from, ``location``), ``url``/``commit`` when pip installed it from a URL, and
    ``requires`` (its ``Requires-Dist`` lines)."""
    return list(_run(_distributions, python=python))


def _distributions() -> list[dict[str, Any]]:
    """Stdlib only, like :func:`_scan`."""
    import json
    from importlib import metadata

    found = []
    for dist in metadata.distributions():
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "null") or {}
        except ValueError:
            direct = {}
        editable = bool((direct.get("dir_info") or {}).get("editable"))
        url = str(direct.get("url") or "")
        found.append(
            {
                "name": dist.metadata["Name"],
                "version": dist.version,
                "editable": editable,
                "location": url.removeprefix("file://") if editable else "",
                "url": url,
                "commit": (direct.get("vcs_info") or {}).get("commit_id"),
                "requires": list(dist.requires or []),
            }
        )
    return found


def _run(func: Callable[..., Any], *args: Any, python: str | Path | None) -> Any:
    """``func(*args)`` here, or, for another interpreter, its source run there (JSON back)."""
    # Compare without resolving symlinks: every venv's python links to the same interpreter.
    if python is None or Path(python).absolute() == Path(sys.executable).absolute():
        return func(*args)
    call = f"print(json.dumps({func.__name__}(*{list(args)!r})))"
    code = f"import json\nfrom typing import Any\n{inspect.getsource(func)}\n{call}"
    done = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def get_environment(name: str, *, python: str | Path | None = None) -> EnvironmentInfo:
    """The installed environment ``name`` (``-`` and ``_`` are interchangeable).

    Raises:
        EnvironmentNotFoundError: None has that name; the error suggests close names.
    """
    installed = list_environments(python=python)
    wanted = _normal(name)
    for env in installed:
        if _normal(env.name) == wanted:
            return env
    names = [env.name for env in installed]
    suggestions = _close_names(wanted, names)
    raise EnvironmentNotFoundError(name, installed=names, suggestions=suggestions)


def _close_names(wanted: str, names: list[str]) -> list[str]:
    """Up to three names like ``wanted``: close enough, and about as close as the closest."""
    scores = {n: difflib.SequenceMatcher(None, wanted, _normal(n)).ratio() for n in names}
    best = max(scores.values(), default=0.0)
    close = [n for n, score in scores.items() if score >= 0.5 and score >= best - 0.1]
    return sorted(close, key=lambda n: -scores[n])[:3]


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_")
