"""The extras of pyproject.toml: ``all`` installs every one a user may want."""

from __future__ import annotations

import re
import sys

from doc_blocks import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# Extras for working on openenv-hub itself, not for using it.
FOR_CONTRIBUTORS = {"dev", "docs"}


def _extras() -> dict[str, list[str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    return extras


def _included(extra: str, extras: dict[str, list[str]]) -> set[str]:
    """The extras ``extra`` installs through ``openenv-hub[...]`` lines, itself included."""
    found, todo = set(), [extra]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for requirement in extras[name]:
            match = re.fullmatch(r"openenv-hub\[([\w,\s-]+)\]", requirement.strip())
            if match:
                todo += [part.strip() for part in match[1].split(",")]
    return found


def test_all_installs_every_extra() -> None:
    extras = _extras()
    assert set(extras) - FOR_CONTRIBUTORS - _included("all", extras) == set()


def test_dev_installs_what_the_docs_site_needs() -> None:
    assert "docs" in _included("dev", _extras())
