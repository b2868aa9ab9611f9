"""An environment from the Hub, run locally: install its package at a revision, then serve it.

The package is installed with :func:`openenv_hub.hub._install` (``pip install git+...@REV``) into
an interpreter (default: the running one), unless that interpreter already has the distribution
installed from the same Space at the same commit (its ``direct_url.json`` says so). The server
is ``python -m uvicorn APP`` on a free port of 127.0.0.1, where ``APP`` comes from an
``openenv.yaml`` shipped in the package, or else is ``<package>.server.app:app``, the package
being the one of the environment's entry point (group ``openenv.environments``).

Example:
    >>> server = start_from_hub("openenv/echo_env", revision="0.1.0", trust_remote_code=True)  # doctest: +SKIP
    >>> server.base_url  # doctest: +SKIP
    'http://127.0.0.1:50123'
"""

from __future__ import annotations

import sys
from pathlib import Path

from openenv_hub.discovery import EnvironmentInfo, list_environments
from openenv_hub.errors import InstallError
from openenv_hub.runtimes.local import LocalProcessProvider

__all__ = ["app_path", "find_installed", "start_from_hub"]


def start_from_hub(
    repo_id: str,
    revision: str | None = None,
    *,
    python: str | Path | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    trust_remote_code: bool = False,
    host: str = "127.0.0.1",
    env: dict[str, str] | None = None,
    startup_timeout_s: float = 60.0,
) -> LocalProcessProvider:
    """Install (or reuse) the environment of ``repo_id`` at ``revision`` and serve it.

    Raises:
        RemoteCodeNotTrustedError: Installing needs consent (``trust_remote_code=True``).
        InstallError: pip failed, or the package declares no environment entry point.
        ConnectError: The server did not answer ``/health`` in time (its output is included).
    """
    from openenv_hub.hub import install
    from openenv_hub.hub._client import HubContext
    from openenv_hub.hub._errors import translate
    from openenv_hub.hub._urls import SpaceUrls

    executable = str(python or sys.executable)
    ctx = HubContext.create(endpoint=endpoint, token=token)
    with translate(
        endpoint=ctx.endpoint, repo_id=repo_id, revision=revision, action="find the Space"
    ):
        commit = ctx.api.space_info(repo_id, revision=revision).sha
    git_url = SpaceUrls(ctx.endpoint, repo_id).git
    found = find_installed(git_url, commit, python=executable)
    if found is None:
        install(
            repo_id, revision, upgrade=True, yes=trust_remote_code, token=ctx.token,
            endpoint=ctx.endpoint, python=executable,
        )  # fmt: skip
        found = find_installed(git_url, commit, python=executable)
    if found is None:
        raise InstallError(
            f"{repo_id} installed, but its package declares no 'openenv.environments' entry point.",
            repo_id=repo_id,
            revision=revision,
            hint='Add [project.entry-points."openenv.environments"] NAME = "pkg.client:Client" '
            "to its pyproject.toml.",
        )
    return _serve(executable, app_path(found), host=host, env=env, timeout_s=startup_timeout_s)


def find_installed(
    git_url: str, commit: str | None, *, python: str | Path | None = None
) -> EnvironmentInfo | None:
    """The environment installed in ``python`` from ``git_url`` at ``commit``, if any."""
    from openenv_hub.hub._urls import strip_credentials

    wanted = strip_credentials(git_url)
    for env in list_environments(python=python):
        if env.source_url and strip_credentials(env.source_url) == wanted and env.commit == commit:
            return env
    return None


def app_path(env: EnvironmentInfo) -> str:
    """The ASGI app of an installed environment."""
    if env.manifest:
        from openenv_hub.manifest import ManifestError, load_manifest

        try:
            app = load_manifest(Path(env.manifest)).app_path
        except ManifestError:
            app = ""
        if app.split(".")[0].split(":")[0] == env.package:
            return app
    return f"{env.package}.server.app:app"


def _serve(
    python: str, app: str, *, host: str, env: dict[str, str] | None, timeout_s: float
) -> LocalProcessProvider:
    return LocalProcessProvider.start(
        app,
        python=python,
        cwd=Path(python).parent,  # holds no packages that could shadow the installed one
        host=host,
        env=env,
        startup_timeout_s=timeout_s,
    )
