"""Which files of an environment folder are published, and why each other one is not.

Each path meets these rules in turn:

1. **Fixed excludes** (``.env``, virtual environments, caches, build outputs, ``.git/``) are
   never published, whatever the ignore files say.
2. **Ignore rules**: every ``.gitignore`` from the enclosing git work tree down to the path's
   folder, then the extra patterns, matched by ``pathspec``'s ``GitIgnoreSpec`` (git's own
   semantics: last match wins, ``!`` re-includes, ``dir/`` matches folders, ``/`` anchors).
3. **Safety rules** leave out, and list, what must not travel to a public Space by accident:
   a ``.git`` or ``.cache`` file (a submodule or worktree pointer the Hub refuses), a link that
   leads outside the folder (never followed) or nowhere, a link to something not published,
   secret-looking files (:data:`SECRET_PATTERNS`) unless ``include_secrets`` names them, and
   files with more than one hard link unless ``allow_hard_links`` (a hard link is the file
   itself under a second name, which may lie anywhere on the file system: a folder cannot
   tell where).
   Fixed excludes and secret patterns match in any case (``.Git/``, ``.VENV/``, ``ID_RSA``,
   ``server.PEM``): a file system that ignores case (macOS, Windows), or a careless rename,
   must not let a folder of tools or a key through.

A link whose target is a published file of the same folder is published as that file. Files
over :data:`LARGE_FILE_BYTES` are published and listed in ``large``: the Hub stores them with
Xet (Git LFS). The manifest's ``exclude`` patterns (``openenv.yaml``) count as extra patterns.

Whatever leaves the folder goes through :func:`stage_files`: the Space bundle ``openenv push``
uploads and every Docker build context (``openenv build``, the docker runtime, a Space built on
this machine) alike.

Example:
    >>> rules = GitIgnoreSpec.from_lines(["build/", "*.log", "!keep.log"])
    >>> [rules.match_file(p) for p in ("pkg/build/", "debug.log", "keep.log")]
    [True, True, False]
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from openenv_hub.errors import PackagingError
from openenv_hub.model.manifest import ManifestError, load_manifest

__all__ = [
    "ALWAYS_EXCLUDED",
    "LARGE_FILE_BYTES",
    "SECRET_PATTERNS",
    "FileSelection",
    "LargeFile",
    "Skipped",
    "select_files",
    "stage_files",
]

ALWAYS_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
        ".ruff_cache", ".tox", ".nox", ".eggs", ".ipynb_checkpoints", "node_modules", "build",
        "dist", "htmlcov", ".idea", ".vscode", ".openenv", ".cache",
    }
)  # fmt: skip
ALWAYS_EXCLUDED_FILES = (
    ".env", ".env.*", "*.pyc", "*.pyo", ".DS_Store", ".coverage", ".netrc", "_netrc",
)  # fmt: skip
_ENV_EXAMPLES = (".env.example", ".env.sample", ".env.template")
ALWAYS_EXCLUDED = (*sorted(ALWAYS_EXCLUDED_DIRS), "*.egg-info", *ALWAYS_EXCLUDED_FILES)

SECRET_PATTERNS = (
    "*.pem", "*.key", "*.p12", "*.pfx", "*.ppk", "*.jks", "*.keystore",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    "credentials", "credentials*.json", ".git-credentials", ".pypirc", ".npmrc", ".pgpass",
    ".vault-token", "kubeconfig*", "**/.kube/config", "**/.streamlit/secrets.toml",
    "*.tfstate", "*.tfstate.backup", "*.env", ".envrc", "deploy_key*",
    "application_default_credentials.json", "client_secret*.json", "service-account*.json",
    "service_account*.json", "**/.docker/config.json", "**/gh/hosts.yml",
    "**/huggingface/token", "**/huggingface/stored_tokens", "**/.huggingface/token",
)  # fmt: skip
"""Paths that look like keys or credentials (``.gitignore`` patterns, matched in any case):
left out unless included on purpose. ``credentials`` covers ``.aws/credentials``,
``application_default_credentials.json`` gcloud's login, ``gh/hosts.yml`` GitHub's CLI login,
``huggingface/token`` the Hub's."""

LARGE_FILE_BYTES = 10 * 1024 * 1024
"""Files above this size are stored by the Hub with Xet (Git LFS), not as plain git blobs."""

_HUB_REFUSED_NAMES = frozenset({".git", ".cache"})  # the Hub refuses any path with such a part
_FIXED_FILES = GitIgnoreSpec.from_lines(p.lower() for p in ALWAYS_EXCLUDED_FILES)
# a pattern without "/" names a file (never a folder on the way to it); one with "/" a path
_SECRET_NAMES = GitIgnoreSpec.from_lines(p.lower() for p in SECRET_PATTERNS if "/" not in p)
_SECRET_PATHS = GitIgnoreSpec.from_lines(p.lower() for p in SECRET_PATTERNS if "/" in p)


@dataclass(frozen=True)
class Skipped:
    """A file left out by a safety rule, and why (a phrase that completes "left out: ...")."""

    path: str
    reason: str


@dataclass(frozen=True)
class LargeFile:
    """A published file above :data:`LARGE_FILE_BYTES`."""

    path: str
    size: int


@dataclass
class FileSelection:
    """Files to publish (relative POSIX paths, sorted), and what was left out.

    Attributes:
        files: What is published.
        ignored: Left out by fixed excludes and ignore rules (folders end with ``/``).
        skipped: Left out by a safety rule, each with its reason.
        large: Published files above :data:`LARGE_FILE_BYTES`.
    """

    files: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    large: list[LargeFile] = field(default_factory=list)


@dataclass
class _Rules:
    """The rules of one ignore file; ``base`` is its folder, relative to the top."""

    base: str
    spec: GitIgnoreSpec

    def verdict(self, path: str, *, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included) or None (no rule matched)."""
        if self.base:
            if not path.startswith(self.base + "/"):
                return None
            path = path[len(self.base) + 1 :]
        return self.spec.check_file(path + "/" if is_dir else path).include


def select_files(
    root: Path,
    *,
    exclude: Sequence[str] = (),
    include_secrets: Sequence[str] = (),
    allow_hard_links: bool = False,
) -> FileSelection:
    """The files under ``root`` that belong in the Space.

    Args:
        root: The environment folder.
        exclude: More patterns, ``.gitignore`` style, relative to ``root`` (after the
            manifest's own ``exclude``).
        include_secrets: Patterns (or plain paths) of secret-looking files to publish anyway.
        allow_hard_links: Publish files that have more than one hard link (left out and
            listed otherwise).
    """
    excludes = [*_manifest_excludes(root), *exclude]
    walk = _Walk(root.resolve(), excludes, include_secrets, allow_hard_links=allow_hard_links)
    walk.run()
    selection = walk.selection
    selection.files.sort()
    selection.ignored.sort()
    selection.skipped.sort(key=lambda item: item.path)
    selection.large.sort(key=lambda item: item.path)
    return selection


def stage_files(
    source: Path,
    root: Path,
    *,
    exclude: Sequence[str] = (),
    include_secrets: Sequence[str] = (),
    allow_hard_links: bool = False,
) -> FileSelection:
    """Copy the files :func:`select_files` selects from ``source`` into the folder ``root``.

    A link is copied as the file it names (checked again, at copy time, to lie inside
    ``source`` and, unless ``allow_hard_links``, to have one name only), so nothing outside
    the folder is ever copied.

    Raises:
        PackagingError: A selected path became a link to outside ``source``, or a hard link,
            meanwhile.
    """
    selection = select_files(
        source, exclude=exclude, include_secrets=include_secrets, allow_hard_links=allow_hard_links
    )
    root.mkdir(parents=True, exist_ok=True)
    for rel in selection.files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(_inside(source, rel, allow_hard_links=allow_hard_links), target)
    return selection


def _inside(source: Path, rel: str, *, allow_hard_links: bool) -> Path:
    """The file ``rel`` names (a link's target), checked again to lie inside ``source``."""
    real = Path(os.path.realpath(source / rel))
    if not real.is_relative_to(source.resolve()):
        raise PackagingError(f"{rel} changed into a link to outside {source} while staging")
    if not allow_hard_links and real.stat().st_nlink > 1:
        raise PackagingError(f"{rel} changed into a hard link while staging")
    return real


def _manifest_excludes(root: Path) -> list[str]:
    """The ``exclude`` patterns of the folder's manifest (none without a valid one)."""
    if not (root / "openenv.yaml").is_file():
        return []
    try:
        return list(load_manifest(root).exclude)
    except ManifestError:
        return []


class _Walk:
    """One pass over the folder (links are never followed), deciding every path."""

    def __init__(
        self,
        root: Path,
        exclude: Sequence[str],
        include: Sequence[str],
        *,
        allow_hard_links: bool,
    ) -> None:
        self.root = root
        self.allow_hard_links = allow_hard_links
        top = _work_tree(root) or root
        self.prefix = root.relative_to(top).as_posix() if top != root else ""
        self.top_rules = [
            rules for rules in (_read_rules(top / d, d) for d in _ancestors(self.prefix)) if rules
        ]
        self.extra = _Rules(self.prefix, GitIgnoreSpec.from_lines(exclude))
        self.include = GitIgnoreSpec.from_lines(include)
        self.selection = FileSelection()
        self.links: list[tuple[str, Path]] = []  # (relative path, the path it leads to)

    def run(self) -> None:
        rules_by_dir: dict[str, list[_Rules]] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            here = Path(dirpath)
            rel_dir = _rel(here, self.root)
            parent = rules_by_dir.get(rel_dir.rpartition("/")[0], self.top_rules)
            local = _read_rules(here, _join(self.prefix, rel_dir)) if rel_dir else None
            rules = [*parent, local] if local else parent
            rules_by_dir[rel_dir] = rules
            kept = []
            for name in sorted(dirnames):
                rel = _join(rel_dir, name)
                if self._left_out(rules, rel, name, is_dir=True):
                    self.selection.ignored.append(rel + "/")
                elif (here / name).is_symlink():
                    self.links.append((rel, here / name))
                else:
                    kept.append(name)
            dirnames[:] = kept
            for name in filenames:
                self._file(rules, here / name, _join(rel_dir, name), name)
        self._resolve_links()

    def _file(self, rules: list[_Rules], path: Path, rel: str, name: str) -> None:
        if self._left_out(rules, rel, name, is_dir=False):
            self.selection.ignored.append(rel)
        elif name in _HUB_REFUSED_NAMES:
            self._skip(rel, f"a {name} file (a submodule or worktree pointer; the Hub refuses it)")
        elif path.is_symlink():
            self.links.append((rel, path))
        elif self._secret(rel):
            self._skip(rel, f"looks like a secret (--include-secret {rel} uploads it)")
        elif path.is_file():
            links = path.lstat().st_nlink
            if links > 1 and not self.allow_hard_links:
                self._skip(rel, _hard_link_reason(links))
            else:
                self._publish(rel, path)

    def _resolve_links(self) -> None:
        """Publish a link only as a published file of this folder; list every other one."""
        published = set(self.selection.files)
        for rel, path in self.links:
            target = Path(os.path.realpath(path))
            if not target.exists():
                self._skip(rel, "a broken link")
            elif not target.is_relative_to(self.root):
                self._skip(rel, "a link to outside the folder (never followed)")
            elif target.is_dir():
                self._skip(rel, "a link to a folder (not followed)")
            elif _rel(target, self.root) not in published:
                self._skip(rel, f"a link to {_rel(target, self.root)}, which is not published")
            elif self._secret(rel):
                self._skip(rel, f"looks like a secret (--include-secret {rel} uploads it)")
            else:
                self._publish(rel, target)

    def _left_out(self, rules: list[_Rules], rel: str, name: str, *, is_dir: bool) -> bool:
        if _fixed_exclude(name, is_dir=is_dir):
            return True
        ignored = False
        for rule_set in [*rules, self.extra]:
            verdict = rule_set.verdict(_join(self.prefix, rel), is_dir=is_dir)
            if verdict is not None:
                ignored = verdict
        return ignored

    def _secret(self, rel: str) -> bool:
        lowered = rel.lower()
        looks = _SECRET_NAMES.match_file(lowered.rpartition("/")[2]) or _SECRET_PATHS.match_file(
            lowered
        )
        return looks and not self.include.match_file(rel)

    def _publish(self, rel: str, path: Path) -> None:
        self.selection.files.append(rel)
        size = path.stat().st_size
        if size > LARGE_FILE_BYTES:
            self.selection.large.append(LargeFile(rel, size))

    def _skip(self, rel: str, reason: str) -> None:
        self.selection.skipped.append(Skipped(rel, reason))


def _fixed_exclude(name: str, *, is_dir: bool) -> bool:
    lowered = name.lower()  # .Git/ is .git/ where the file system ignores case
    if is_dir:
        return lowered in ALWAYS_EXCLUDED_DIRS or lowered.endswith(".egg-info")
    return lowered not in _ENV_EXAMPLES and _FIXED_FILES.match_file(lowered)


def _hard_link_reason(links: int) -> str:
    return (
        f"a hard link (the file has {links} names, and another may be outside the folder; "
        "--allow-hard-links uploads it)"
    )


def _read_rules(folder: Path, base: str) -> _Rules | None:
    path = folder / ".gitignore"
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return _Rules(base, GitIgnoreSpec.from_lines(lines))


def _ancestors(prefix: str) -> list[str]:
    """The folders from the top of the work tree down to the environment folder."""
    if not prefix:
        return [""]
    parts = prefix.split("/")
    return ["", *("/".join(parts[:i]) for i in range(1, len(parts))), prefix]


def _rel(path: Path, root: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return "" if rel == "." else rel


def _join(a: str, b: str) -> str:
    return f"{a}/{b}" if a else b


def _work_tree(path: Path) -> Path | None:
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None
