"""Which files of an environment folder are published: ``.gitignore`` rules plus fixed excludes.

Files that must never reach a Space (``.env``, virtual environments, caches, build outputs,
``.git``) are excluded whatever the ignore files say. Then the rules of every ``.gitignore`` from
the enclosing git work tree down to each folder apply, with git's semantics (last match wins,
``!`` re-includes, ``dir/`` matches folders, a ``/`` anchors), and then the extra patterns.

Example:
    >>> rule = IgnoreRule.parse("build/")
    >>> rule.matches("pkg/build", is_dir=True), rule.matches("pkg/build", is_dir=False)
    (True, False)
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ALWAYS_EXCLUDED", "FileSelection", "IgnoreRule", "select_files"]

ALWAYS_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
        ".ruff_cache", ".tox", ".nox", ".eggs", ".ipynb_checkpoints", "node_modules", "build",
        "dist", "htmlcov", ".idea", ".vscode", ".openenv", ".cache",
    }
)  # fmt: skip
ALWAYS_EXCLUDED_FILES = (".env", ".env.*", "*.pyc", "*.pyo", ".DS_Store", ".coverage", ".netrc")
_ENV_EXAMPLES = (".env.example", ".env.sample", ".env.template")
ALWAYS_EXCLUDED = (*sorted(ALWAYS_EXCLUDED_DIRS), "*.egg-info", *ALWAYS_EXCLUDED_FILES)


@dataclass(frozen=True)
class IgnoreRule:
    """One line of a ``.gitignore``, compiled."""

    pattern: str
    regex: re.Pattern[str]
    negated: bool = False
    dir_only: bool = False

    @classmethod
    def parse(cls, line: str) -> IgnoreRule | None:
        """The rule of a ``.gitignore`` line; ``None`` for blanks and comments."""
        text = line.rstrip("\n\r")
        if not text.endswith("\\ "):
            text = text.rstrip()
        if not text or text.startswith("#"):
            return None
        negated = text.startswith("!")
        if negated or text.startswith("\\!") or text.startswith("\\#"):
            text = text[1:]
        dir_only = text.endswith("/")
        text = text.rstrip("/")
        if not text:
            return None
        anchored = "/" in text
        body = _glob_regex(text.lstrip("/"))
        regex = re.compile(("^" if anchored else "^(?:.*/)?") + body + "$")
        return cls(line.strip(), regex, negated, dir_only)

    def matches(self, path: str, *, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return bool(self.regex.match(path))


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                inner = glob[i + 1 : end]
                inner = "^" + inner[1:] if inner.startswith("!") else inner
                out.append(f"[{inner.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif char == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


@dataclass
class _RuleSet:
    """The rules of one ignore file; ``base`` is its folder, relative to the top."""

    base: str
    rules: list[IgnoreRule]

    def verdict(self, path: str, *, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included) or None (no rule matched)."""
        if self.base:
            if not path.startswith(self.base + "/"):
                return None
            path = path[len(self.base) + 1 :]
        result = None
        for rule in self.rules:
            if rule.matches(path, is_dir=is_dir):
                result = not rule.negated
        return result


@dataclass
class FileSelection:
    """Files to publish (relative POSIX paths, sorted), and what was left out."""

    files: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def select_files(root: Path, *, exclude: Sequence[str] = ()) -> FileSelection:
    """The files under ``root`` that belong in the Space.

    Args:
        root: The environment folder.
        exclude: More patterns, ``.gitignore`` style, relative to ``root``.
    """
    root = root.resolve()
    top = _work_tree(root) or root
    prefix = root.relative_to(top).as_posix() if top != root else ""
    sets = [_read_rules(top / d, d) for d in _ancestors(prefix)]
    extra = _RuleSet(prefix, _parse(exclude))
    selection = FileSelection()
    _walk(root, prefix, [s for s in sets if s.rules], extra, selection)
    selection.files.sort()
    selection.ignored.sort()
    return selection


def _walk(
    root: Path, prefix: str, sets: list[_RuleSet], extra: _RuleSet, out: FileSelection
) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if rel_dir:
            local = _read_rules(here, _join(prefix, rel_dir))
            sets = [*sets, local] if local.rules else sets
        kept = []
        for name in sorted(dirnames):
            rel = _join(rel_dir, name)
            if _excluded(name, is_dir=True) or _ignored([*sets, extra], _join(prefix, rel), True):
                out.ignored.append(rel + "/")
            elif not (here / name).is_symlink():
                kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            rel = _join(rel_dir, name)
            if _excluded(name, is_dir=False) or _ignored([*sets, extra], _join(prefix, rel), False):
                out.ignored.append(rel)
            elif (here / name).is_file():
                out.files.append(rel)


def _excluded(name: str, *, is_dir: bool) -> bool:
    if is_dir:
        return name in ALWAYS_EXCLUDED_DIRS or name.endswith(".egg-info")
    if name in _ENV_EXAMPLES:
        return False
    return any(
        re.fullmatch(_glob_regex(pattern), name) is not None for pattern in ALWAYS_EXCLUDED_FILES
    )


def _ignored(sets: Iterable[_RuleSet], path: str, is_dir: bool) -> bool:
    ignored = False
    for rule_set in sets:
        verdict = rule_set.verdict(path, is_dir=is_dir)
        if verdict is not None:
            ignored = verdict
    return ignored


def _read_rules(folder: Path, base: str) -> _RuleSet:
    path = folder / ".gitignore"
    lines = (
        path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []
    )
    return _RuleSet(base, _parse(lines))


def _parse(lines: Iterable[str]) -> list[IgnoreRule]:
    return [rule for line in lines if (rule := IgnoreRule.parse(line)) is not None]


def _ancestors(prefix: str) -> list[str]:
    """The folders from the top down to (not including) the environment folder."""
    if not prefix:
        return [""]
    parts = prefix.split("/")
    return ["", *("/".join(parts[:i]) for i in range(1, len(parts))), prefix]


def _join(a: str, b: str) -> str:
    return f"{a}/{b}" if a else b


def _work_tree(path: Path) -> Path | None:
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None
