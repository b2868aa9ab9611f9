"""Where a Space's app runs: its URL, once the Hub says it runs the revision asked for.

``EnvClient.from_hub(repo_id)`` (the ``space`` runtime) connects there.
"""

from __future__ import annotations

from openenv_hub.errors import RevisionNotServedError, SpaceNotRunningError
from openenv_hub.hub._client import HubContext
from openenv_hub.hub._reads import find_space
from openenv_hub.hub._urls import SpaceUrls

__all__ = ["app_url"]

_NOT_SERVING = {"BUILD_ERROR", "RUNTIME_ERROR", "CONFIG_ERROR", "NO_APP_FILE", "PAUSED", "STOPPED"}


def app_url(
    repo_id: str,
    revision: str | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
) -> str:
    """The URL of the Space's running app. ``revision`` must be what the Space runs.

    Raises:
        RevisionNotServedError: The Space runs another commit than ``revision`` names.
        SpaceNotRunningError: The Space failed, or is paused or stopped (``stage`` says which).
        HubError: No such Space, or the Hub did not answer.
    """
    ctx = HubContext.create(endpoint=endpoint, token=token)
    info = find_space(ctx, repo_id)
    if revision is not None:
        wanted = find_space(ctx, repo_id, revision).sha
        if wanted != info.sha:
            raise RevisionNotServedError(repo_id, revision, info.sha or "?")
    runtime = getattr(info, "runtime", None)
    stage = getattr(runtime, "stage", None)
    if stage in _NOT_SERVING:
        reason = str((getattr(runtime, "raw", None) or {}).get("errorMessage") or "").strip()
        raise SpaceNotRunningError(
            repo_id,
            str(stage),
            reason=reason,
            hint=f"See its logs at {SpaceUrls(ctx.endpoint, repo_id).web}, or run it locally "
            "with from_hub(..., runtime='uv') or runtime='docker'.",
        )
    return SpaceUrls(ctx.endpoint, repo_id).app_url(info)
