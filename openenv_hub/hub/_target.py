"""Where a push goes: the Space a folder remembers, like a git clone remembers its remote.

``pull`` writes ``.openenv/space.json`` into the folder it makes (the Space and the Hub it came
from), and every push records there the Space it went to. ``push`` without a ``repo_id`` goes to
the Space last pushed to, else to the one pulled from, else to ``<your name>/<manifest name>``.
The file lives in ``.openenv/``, which push never uploads (:mod:`~openenv_hub.hub._ignore`), so a
fork of the Space does not inherit it; a ``.openenv/.gitignore`` keeps it out of git too, as
huggingface_hub does with the metadata it keeps in a download folder. It holds no token.

A folder pulled from another Hub (``HF_ENDPOINT`` changed since) is refused without an explicit
``repo_id``: the name it remembers may belong to someone else there.

Example:
    >>> target = push_target("my_echo_env")  # doctest: +SKIP
    >>> target.repo_id, target.reason  # doctest: +SKIP
    ('alice/echo_env_mine', 'the Space this folder was pulled from')
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from openenv_hub.errors import HubConflictError
from openenv_hub.hub._access import whoami
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.model.manifest import load_manifest

__all__ = [
    "LINK_FILE",
    "PushTarget",
    "SpaceLink",
    "choose_target",
    "push_target",
    "read_link",
    "remember_pull",
    "remember_push",
]

LINK_FILE = Path(".openenv") / "space.json"
"""Where a folder remembers its Space, relative to the folder (never uploaded)."""


@dataclass(frozen=True)
class SpaceLink:
    """The Space a folder came from and the one it was last pushed to, on ``endpoint``."""

    endpoint: str
    pulled_from: str | None = None
    revision: str | None = None
    pushed_to: str | None = None

    @property
    def remembered(self) -> str | None:
        """Where a push goes by default: the last push, else the pull."""
        return self.pushed_to or self.pulled_from


@dataclass(frozen=True)
class PushTarget:
    """The Space a push goes to, and why that one (shown before anything is uploaded)."""

    repo_id: str
    reason: str
    link: SpaceLink | None = None


def read_link(folder: str | Path) -> SpaceLink | None:
    """The Space ``folder`` remembers; ``None`` if it remembers none (or the file is unreadable)."""
    path = Path(folder) / LINK_FILE
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        link = SpaceLink(
            endpoint=str(data["endpoint"]),
            pulled_from=data.get("pulled_from"),
            revision=data.get("revision"),
            pushed_to=data.get("pushed_to"),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return link if link.remembered else None


def remember_pull(folder: str | Path, *, endpoint: str, repo_id: str, revision: str | None) -> None:
    """Write that ``folder`` holds ``repo_id`` (at ``revision``) from ``endpoint``."""
    _write(Path(folder), SpaceLink(endpoint, pulled_from=repo_id, revision=revision))


def remember_push(folder: str | Path, *, endpoint: str, repo_id: str) -> None:
    """Record that ``folder`` was pushed to ``repo_id``; a folder that cannot be written to
    keeps what it had (the push itself is done)."""
    old = read_link(folder)
    kept = old if old is not None and old.endpoint == endpoint else SpaceLink(endpoint)
    link = SpaceLink(endpoint, kept.pulled_from, kept.revision, pushed_to=repo_id)
    with contextlib.suppress(OSError):
        _write(Path(folder), link)


def _write(folder: Path, link: SpaceLink) -> None:
    path = folder / LINK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text(
            f"# where openenv push goes (local to this folder)\n{path.name}\n.gitignore\n"
        )
    text = json.dumps({k: v for k, v in asdict(link).items() if v is not None}, indent=2)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".space-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text + "\n")
    os.replace(tmp, path)


def choose_target(
    folder: str | Path,
    repo_id: str | None,
    *,
    user_name: str,
    manifest_name: str,
    endpoint: str,
) -> PushTarget:
    """The Space a push of ``folder`` goes to (see the module's docstring for the order).

    Raises:
        HubConflictError: No ``repo_id`` and the folder comes from another Hub.
    """
    link = read_link(folder)
    if repo_id is not None:
        named = str(parse_repo_id(repo_id))
        elsewhere = link is not None and (link.remembered, link.endpoint) != (named, endpoint)
        reason = "named with --repo-id"
        if elsewhere and link is not None:
            reason += f"; this folder remembers {link.remembered} on {link.endpoint}"
        return PushTarget(named, reason, link)
    if link is None:
        return PushTarget(f"{user_name}/{manifest_name}", "your namespace and openenv.yaml's name")
    remembered = str(link.remembered)
    if link.endpoint != endpoint:
        raise HubConflictError(
            f"This folder belongs to the Space {remembered} on {link.endpoint}, but the Hub "
            f"now is {endpoint}; nothing was sent.",
            repo_id=remembered,
            hint=f"Name the Space to push to on {endpoint}: --repo-id {user_name}/{manifest_name}",
        )
    if link.pushed_to:
        return PushTarget(remembered, "the Space this folder was last pushed to", link)
    return PushTarget(remembered, "the Space this folder was pulled from", link)


def push_target(
    path: str | Path = ".",
    repo_id: str | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
) -> PushTarget:
    """The Space ``push(path, repo_id)`` would go to, and why; nothing is sent.

    Raises:
        ManifestError: ``path`` has no valid ``openenv.yaml``.
        HubAuthenticationError: No token (the default namespace is the token's user).
        HubConflictError: No ``repo_id`` and the folder comes from another Hub.
    """
    manifest = load_manifest(path)
    ctx = HubContext.create(endpoint=endpoint, token=token, required=True, action="push")
    user = whoami(ctx)
    return choose_target(
        path, repo_id, user_name=user["name"], manifest_name=manifest.name, endpoint=ctx.endpoint
    )
