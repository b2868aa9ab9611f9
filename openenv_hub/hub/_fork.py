"""``fork``: duplicate a Space into your namespace (history, files and variables included)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openenv_hub.errors import HubError
from openenv_hub.hub._access import check_write_access, whoami
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._errors import hub_call, scrubbed
from openenv_hub.hub._reads import find_space
from openenv_hub.hub._urls import SpaceUrls

__all__ = ["ForkResult", "fork"]


@dataclass(frozen=True)
class ForkResult:
    """The new Space: id, page, app URL and visibility."""

    source: str
    repo_id: str
    url: str
    app_url: str
    private: bool


def fork(
    src: str,
    repo_id: str | None = None,
    *,
    private: bool | None = None,
    hardware: str | None = None,
    variables: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    token: str | None = None,
    endpoint: str | None = None,
) -> ForkResult:
    """Duplicate the Space ``src`` as ``repo_id`` (default: ``<your user name>/<src name>``).

    Args:
        src: The Space to copy, ``namespace/name``.
        repo_id: The new Space.
        private: Visibility of the copy; default: the same as ``src``.
        hardware: Hardware of the copy.
        variables: Variables to set on the copy (the source's are copied too).
        secrets: Secrets to set on the copy (the source's are never copied).
        token: Hub token; default ``HF_TOKEN`` or the saved login.
        endpoint: The Hub; default ``HF_ENDPOINT`` or https://huggingface.co.
    """
    source = str(parse_repo_id(src))
    ctx = HubContext.create(endpoint=endpoint, token=token, required=True, action="fork")
    api = ctx.api
    user = whoami(ctx)
    target = str(parse_repo_id(repo_id)) if repo_id else f"{user['name']}/{source.split('/')[1]}"
    check_write_access(user, target, endpoint=ctx.endpoint)
    options: dict[str, Any] = {
        "private": private,
        "space_hardware": hardware,
        "space_variables": _pairs(variables),
        "space_secrets": _pairs(secrets),
    }
    try:
        with hub_call(ctx, f"fork into {target}", repo_id=source):
            _duplicate(api, source, target, options)
    except HubError as exc:  # never let a secret travel in a message or a traceback
        raise scrubbed(exc, *(secrets or {}).values()) from None
    info = find_space(ctx, target)
    urls = SpaceUrls(ctx.endpoint, target)
    return ForkResult(source, target, urls.web, urls.app_url(info), bool(info.private))


def _pairs(values: Mapping[str, str] | None) -> list[dict[str, str]] | None:
    if not values:
        return None
    return [{"key": key.strip(), "value": value} for key, value in values.items()]


def _duplicate(api: Any, source: str, target: str, options: dict[str, Any]) -> None:
    duplicate_repo = getattr(api, "duplicate_repo", None)
    if duplicate_repo is not None:  # huggingface_hub >= 1.0
        duplicate_repo(source, target, repo_type="space", **options)
        return
    legacy = {  # duplicate_space of older clients takes other keyword names
        "private": options["private"],
        "hardware": options["space_hardware"],
        "variables": options["space_variables"],
        "secrets": options["space_secrets"],
    }
    api.duplicate_space(source, target, **legacy)
