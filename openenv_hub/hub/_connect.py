"""``EnvClient.from_hub``: a client of a Space's running app, or of a copy run on this machine.

``runtime`` says where the environment runs: ``"space"`` (the Space's own app on the Hub),
``"local"`` (installed into ``python``, default this interpreter, and served by it),
``"uv"`` (an environment of its own, made by uv for that commit), or ``"docker"`` (the Space's
image built at that commit and run). ``local=True`` is another name for ``runtime="local"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from openenv_hub.errors import ConfigurationError, RevisionNotServedError, SpaceNotRunningError
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._errors import translate
from openenv_hub.hub._urls import SpaceUrls

if TYPE_CHECKING:
    from openenv_hub.providers import Provider

__all__ = ["client_from_hub"]

C = TypeVar("C")
RUNTIMES = ("space", "local", "uv", "docker")
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
    runtime: str | None = None,
    client_options: dict[str, Any],
) -> C:
    """``cls`` connected to the Space's app, or to a server of it run with ``runtime``."""
    rid = str(parse_repo_id(repo_id))
    runtime = _runtime(runtime, local)
    if runtime == "space":
        return cls(app_url(rid, revision, token=token, endpoint=endpoint), **client_options)  # type: ignore[call-arg]
    provider = _start(
        runtime, rid, revision, python=python, token=token, endpoint=endpoint,
        trust_remote_code=trust_remote_code,
    )  # fmt: skip
    try:
        return cls(provider.base_url, provider=provider, **client_options)  # type: ignore[call-arg]
    except BaseException:
        provider.stop()
        raise


def _runtime(runtime: str | None, local: bool) -> str:
    if local and runtime not in (None, "local"):
        raise ConfigurationError(
            f"local=True means runtime='local'; it cannot go with {runtime!r}."
        )
    chosen = "local" if local else (runtime or "space")
    if chosen not in RUNTIMES:
        raise ConfigurationError(
            f"Unknown runtime {chosen!r}; use one of {', '.join(repr(r) for r in RUNTIMES)}."
        )
    return chosen


def _start(
    runtime: str,
    repo_id: str,
    revision: str | None,
    *,
    python: str | Path | None,
    token: str | None,
    endpoint: str | None,
    trust_remote_code: bool,
) -> Provider:
    if runtime == "local":
        from openenv_hub.providers.hub import start_from_hub

        return start_from_hub(
            repo_id, revision, python=python, token=token, endpoint=endpoint,
            trust_remote_code=trust_remote_code,
        )  # fmt: skip
    from openenv_hub.providers import space

    start = space.start_space_uv if runtime == "uv" else space.start_space_docker
    options: dict[str, Any] = {"python": str(python)} if python and runtime == "uv" else {}
    return start(
        repo_id, revision, endpoint=endpoint, token=token, trust_remote_code=trust_remote_code,
        **options,
    )  # fmt: skip


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
