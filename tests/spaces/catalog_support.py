"""Spaces to list: environments published with ``openenv push`` and plain Spaces with a card."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"


def card(tags: list[str], **fields: Any) -> bytes:
    """A Space card (README.md) with ``tags`` and more front matter."""
    front = {"sdk": "docker", "app_port": 8000, **fields}
    if tags:
        front["tags"] = tags
    return f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n\n# A Space\n".encode()


def echo_copy(target: Path, *, extra_tags: list[str]) -> Path:
    """envs/echo_env copied to ``target``, its card carrying ``extra_tags`` too."""
    shutil.copytree(
        ECHO_ENV,
        target,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache"),
    )
    readme = target / "README.md"
    text = readme.read_text(encoding="utf-8")
    lines = "".join(f"  - {tag}\n" for tag in extra_tags)
    readme.write_text(text.replace("tags:\n  - openenv\n", f"tags:\n  - openenv\n{lines}", 1))
    assert all(tag in readme.read_text(encoding="utf-8") for tag in extra_tags)
    return target


def plain_space(
    api: Any, repo_id: str, tags: list[str], *, sdk: str = "docker", **fields: Any
) -> str:
    """A Space holding only a card; ``sdk: static`` ones are never built."""
    api.create_repo(repo_id, repo_type="space", space_sdk=sdk)
    api.upload_file(
        path_or_fileobj=card(tags, **{**fields, "sdk": sdk}),
        path_in_repo="README.md",
        repo_id=repo_id,
        repo_type="space",
    )
    return repo_id
