"""JSON bodies in the shapes ``huggingface_hub`` parses.

Field names follow the real Hub (camelCase); only what the client reads, plus
a few fields users commonly print, is included.

Layer: runtimes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

from .clock import iso_time
from .gitrepo import CommitRecord, GitRepo, RefRecord, TreeEntry
from .storage import RepoKey, RepoMeta

SPACE_SDKS = frozenset({"gradio", "streamlit", "docker", "static"})

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*$", re.S | re.M)


class FrontMatterError(ValueError):
    """README metadata that is not a YAML mapping."""


def parse_front_matter(text: str) -> dict[str, Any] | None:
    """Return the YAML metadata block at the top of a README, if any.

    Raises:
        FrontMatterError: If the block exists but is not a valid YAML mapping.
    """
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"Invalid YAML in README metadata: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("README metadata must be a YAML mapping")
    return data


def card_data(repo: GitRepo, commit: str | None) -> dict[str, Any] | None:
    """Metadata of ``README.md`` at ``commit``; None if absent or unparsable."""
    content = repo.read_file(commit, "README.md") if commit else None
    if content is None:
        return None
    try:
        return parse_front_matter(content.decode(errors="replace"))
    except FrontMatterError:
        return None


def tree_entry_json(entry: TreeEntry) -> dict[str, Any]:
    """One element of the tree and paths-info listings."""
    return {"type": entry.type, "oid": entry.oid, "size": entry.size, "path": entry.path}


def runtime_json(meta: RepoMeta) -> dict[str, Any]:
    """The Space runtime object (``get_space_runtime`` and ``space_info().runtime``)."""
    running = meta.stage == "RUNNING"
    runtime: dict[str, Any] = {
        "stage": meta.stage,
        "hardware": {"current": meta.hardware if running else None, "requested": meta.hardware},
        "storage": None,
        "gcTimeout": meta.sleep_time_s,
        "replicas": {"current": 1 if running else 0, "requested": 1},
        "devMode": False,
        "domains": [],
    }
    if meta.error_message:
        runtime["errorMessage"] = meta.error_message
    return runtime


def repo_info_json(
    key: RepoKey,
    meta: RepoMeta,
    repo: GitRepo,
    commit: str | None,
    *,
    base_url: str,
    blobs: bool = False,
) -> dict[str, Any]:
    """The body of ``GET /api/{type}s/{ns}/{name}[/revision/{rev}]``.

    Args:
        key: The repo.
        meta: Its metadata.
        repo: Its git repository.
        commit: Resolved commit to describe (None for an empty repo).
        base_url: Public base URL of the server, for ``host``.
        blobs: Include ``size`` and ``blobId`` of each file (``files_metadata=True``).
    """
    files = repo.list_files(commit) if commit else []
    card = card_data(repo, commit)
    info: dict[str, Any] = {
        "_id": f"{key.type}-{key.namespace}-{key.name}",
        "id": key.repo_id,
        "author": key.namespace,
        "sha": commit,
        "lastModified": iso_time(repo.commit_timestamp(commit)) if commit else meta.created_at,
        "createdAt": meta.created_at,
        "private": meta.private,
        "gated": False,
        "disabled": False,
        "likes": meta.likes,
        "trendingScore": 0,
        "tags": _tags(card),
        "siblings": [_sibling(entry, blobs) for entry in files],
        "cardData": card,
    }
    if key.type == "space":
        info.update(_space_fields(key, meta, card, base_url))
    else:
        info["downloads"] = 0
    return info


def _tags(card: dict[str, Any] | None) -> list[str]:
    tags = (card or {}).get("tags")
    return [str(tag) for tag in tags] if isinstance(tags, list) else []


def _sibling(entry: TreeEntry, blobs: bool) -> dict[str, Any]:
    if blobs:
        return {"rfilename": entry.path, "size": entry.size, "blobId": entry.oid}
    return {"rfilename": entry.path}


def _space_fields(
    key: RepoKey, meta: RepoMeta, card: dict[str, Any] | None, base_url: str
) -> dict[str, Any]:
    sdk = (card or {}).get("sdk") or meta.sdk
    return {
        "sdk": sdk,
        "subdomain": f"{key.namespace}-{key.name}".lower().replace("_", "-").replace(".", "-"),
        "host": meta.host or f"{base_url}/_localhub/apps/{key.repo_id}",
        "runtime": runtime_json(meta),
        "models": [],
        "datasets": [],
        "duplicatedFrom": meta.duplicated_from,
    }


def commit_json(record: CommitRecord) -> dict[str, Any]:
    """One element of the commits listing."""
    return {
        "id": record.sha,
        "title": record.title,
        "message": record.message,
        "authors": [{"user": record.author}],
        "date": iso_time(record.timestamp),
    }


def refs_json(refs: Iterable[RefRecord], *, include_prs: bool) -> dict[str, Any]:
    """The body of ``GET .../refs``: branches and tags (no converts or PRs here)."""
    refs = list(refs)
    body: dict[str, Any] = {
        "branches": [_ref_json(ref) for ref in refs if ref.ref.startswith("refs/heads/")],
        "tags": [_ref_json(ref) for ref in refs if ref.ref.startswith("refs/tags/")],
        "converts": [],
    }
    if include_prs:
        body["pullRequests"] = []
    return body


def _ref_json(ref: RefRecord) -> dict[str, str]:
    return {"name": ref.name, "ref": ref.ref, "targetCommit": ref.target}


def secrets_json(meta: RepoMeta) -> dict[str, dict[str, Any]]:
    """Space secrets without their values, which the Hub never returns."""
    return {
        key: {"description": entry.description, "updatedAt": entry.updated_at}
        for key, entry in meta.secrets.items()
    }


def variables_json(meta: RepoMeta) -> dict[str, dict[str, Any]]:
    """Space variables with their values."""
    return {
        key: {"value": entry.value, "description": entry.description, "updatedAt": entry.updated_at}
        for key, entry in meta.variables.items()
    }
