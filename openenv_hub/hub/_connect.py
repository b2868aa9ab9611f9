"""``EnvClient.from_hub``: a client of a Space's running app, or of a local copy of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from openenv_hub.errors import RevisionNotServedError, SpaceNotRunningError
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._errors import translate
from openenv_hub.hub.urls import SpaceUrls

__all__ = ["client_from_hub"]

C = TypeVar("C")
_NOT_SERVING = {"BUILD_ERROR", "RUNTIME_ERROR", "CONFIG_ERROR", "NO_APP_FILE", "PAUSED", "STOPPED"}


def client_from_hub(
    cls: type[C],
    repo_id: str,
    *,
    revision: str | None = None,
    local: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    trust_remote_code: bool = False,
    python: str | Path | None = None,
    client_options: dict[str, Any],
) -> C:
    """``cls`` connected to the Space's app, or (``local=True``) to a local server of it."""
    rid = str(parse_repo_id(repo_id))
    if local:
        from openenv_hub.providers.hub import start_from_hub

        provider = start_from_hub(
            rid, revision, python=python, token=token, endpoint=endpoint,
            trust_remote_code=trust_remote_code,
        )  # fmt: skip
        try:
            return cls(provider.base_url, provider=provider, **client_options)  # type: ignore[call-arg]
        except BaseException:
            provider.stop()
            raise
    return cls(app_url(rid, revision, token=token, endpoint=endpoint), **client_options)  # type: ignore[call-arg]


def app_url(
    repo_id: str,
    revision: str | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
) -> str:
    """The URL of the Space's running app. ``revision`` must be what the Space runs."""
    ctx = HubContext.create(endpoint=endpoint, token=token)
    with translate(endpoint=ctx.endpoint, repo_id=repo_id, action="find the Space"):
        info = ctx.api.space_info(repo_id)
    if revision is not None:
        with translate(
            endpoint=ctx.endpoint, repo_id=repo_id, revision=revision, action="find the version"
        ):
            wanted = ctx.api.space_info(repo_id, revision=revision).sha
        if wanted != info.sha:
            raise RevisionNotServedError(repo_id, revision, info.sha or "?")
    stage = getattr(getattr(info, "runtime", None), "stage", None)
    if stage in _NOT_SERVING:
        raise SpaceNotRunningError(
            repo_id,
            str(stage),
            hint=f"See its logs at {SpaceUrls(ctx.endpoint, repo_id).web}, or run it locally "
            "with from_hub(..., local=True).",
        )
    return SpaceUrls(ctx.endpoint, repo_id).app_url(info)
