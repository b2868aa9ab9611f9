"""An environment installed from a Space into a Python: found by the commit it came from, or
installed there (after consent) when that Python does not have it.

A distribution installed with ``pip install git+URL@REV`` records ``URL`` and the commit in its
``direct_url.json``; :func:`find_installed` compares both (credentials in the URL left aside).
"""

from __future__ import annotations

import sys
from pathlib import Path

from openenv_hub.discovery import EnvironmentInfo, list_environments
from openenv_hub.errors import InstallError
from openenv_hub.hub._client import HubContext, resolve_endpoint
from openenv_hub.hub._install import install
from openenv_hub.hub._reads import find_space
from openenv_hub.hub._urls import SpaceUrls, strip_credentials

__all__ = ["ensure_installed", "find_installed"]


def find_installed(
    repo_id: str,
    commit: str | None,
    *,
    python: str | Path | None = None,
    endpoint: str | None = None,
) -> EnvironmentInfo | None:
    """The environment ``python`` (default: this interpreter) has from ``repo_id`` at
    ``commit``, if any."""
    wanted = strip_credentials(SpaceUrls(resolve_endpoint(endpoint), repo_id).git)
    for env in list_environments(python=python):
        if env.source_url and strip_credentials(env.source_url) == wanted and env.commit == commit:
            return env
    return None


def ensure_installed(
    repo_id: str,
    revision: str | None = None,
    *,
    python: str | Path | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    yes: bool = False,
) -> EnvironmentInfo:
    """The environment of ``repo_id`` at ``revision`` in ``python``: the one installed from
    that commit, else installed now (``yes`` is the consent to run the Space's code).

    Raises:
        RemoteCodeNotTrustedError: Installing needs consent (``yes=True``).
        InstallError: pip failed, or the package declares no environment entry point.
    """
    executable = str(python or sys.executable)
    ctx = HubContext.create(endpoint=endpoint, token=token)
    commit = find_space(ctx, repo_id, revision).sha
    found = find_installed(repo_id, commit, python=executable, endpoint=ctx.endpoint)
    if found is None:
        install(
            repo_id, revision, upgrade=True, yes=yes, token=ctx.token, endpoint=ctx.endpoint,
            python=executable,
        )  # fmt: skip
        found = find_installed(repo_id, commit, python=executable, endpoint=ctx.endpoint)
    if found is None:
        raise InstallError(
            f"{repo_id} installed, but its package declares no 'openenv.environments' entry point.",
            repo_id=repo_id,
            revision=revision,
            hint='Add [project.entry-points."openenv.environments"] NAME = "pkg.client:Client" '
            "to its pyproject.toml.",
        )
    return found
