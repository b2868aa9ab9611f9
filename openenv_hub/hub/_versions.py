"""``versions``: the tagged versions of an environment, oldest first (semantic versions sorted
numerically, other tags after them by name).

Example:
    >>> sorted(["0.10.0", "v0.2.0", "latest", "0.2.0-rc1", "0.9.1"], key=version_key)
    ['0.2.0-rc1', 'v0.2.0', '0.9.1', '0.10.0', 'latest']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._urls import SpaceUrls

__all__ = ["Version", "version_key", "versions"]

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


@dataclass(frozen=True)
class Version:
    """A version tag and the commit it points to, with the line that installs it."""

    name: str
    commit: str
    pip_install: str


def versions(
    repo_id: str, *, token: str | None = None, endpoint: str | None = None
) -> list[Version]:
    """The version tags of the Space ``repo_id``, oldest first."""
    rid = str(parse_repo_id(repo_id))
    ctx = HubContext.create(endpoint=endpoint, token=token)
    with hub_call(ctx, "list versions", repo_id=rid):
        refs = ctx.api.list_repo_refs(rid, repo_type="space")
    urls = SpaceUrls(ctx.endpoint, rid)
    tags = sorted(refs.tags, key=lambda tag: version_key(tag.name))
    return [Version(tag.name, tag.target_commit, urls.pip_line(tag.name)) for tag in tags]


def version_key(
    name: str,
) -> tuple[int, tuple[int, int, int], int, tuple[tuple[int, str], ...], str]:
    """Sort key: semantic versions first, numerically; a pre-release before its release."""
    match = _SEMVER.match(name)
    if match is None:
        return (1, (0, 0, 0), 0, (), name)
    major, minor, patch, pre = match.groups()
    numbers = (int(major), int(minor), int(patch or 0))
    parts = tuple(
        (0, f"{int(p):09d}") if p.isdigit() else (1, p) for p in (pre or "").split(".") if p
    )
    return (0, numbers, 0 if pre else 1, parts, name)
