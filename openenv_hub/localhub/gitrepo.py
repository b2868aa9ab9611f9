"""Read access to one bare git repository through git plumbing commands.

Everything the Hub API reports (files, sizes, blob ids, commits, refs) is read
straight from git, so API commits and ``git push`` see each other at once.

Layer: runtimes.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from openenv_hub.support.settings import environment

ZERO_OID = "0" * 40

_HEX_REV = re.compile(r"[0-9a-f]{7,40}")
_FORBIDDEN_IN_REV = re.compile(r"[\x00-\x20\x7f:^~?*\[\\]|\.\.|@\{")

SERVER_GIT_CONFIG: Mapping[str, str] = {
    "safe.directory": "*",
    "uploadpack.allowFilter": "true",
    "uploadpack.allowAnySHA1InWant": "true",
    "core.quotePath": "false",
}
"""Config forced on every server-side git process (command-line scope)."""


class GitCommandError(RuntimeError):
    """A git subprocess failed unexpectedly (a server bug, reported as a 500)."""


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Build an environment for server-side git, isolated from the caller's config.

    Inherited ``GIT_*`` variables (e.g. from a hook that started the tests) are
    dropped, and user/system config is ignored so settings such as
    ``commit.gpgsign`` cannot break commits.
    """
    env = {key: value for key, value in environment().items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_LITERAL_PATHSPECS="1",
        LC_ALL="C",
        GIT_CONFIG_COUNT=str(len(SERVER_GIT_CONFIG)),
    )
    for index, (key, value) in enumerate(SERVER_GIT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class TreeEntry:
    """One file or directory of a commit's tree."""

    path: str
    type: Literal["file", "directory"]
    oid: str
    size: int
    mode: str


@dataclass(frozen=True)
class CommitRecord:
    """One commit, as listed by the commits endpoint."""

    sha: str
    author: str
    timestamp: int
    title: str
    message: str


@dataclass(frozen=True)
class RefRecord:
    """A branch or tag and the commit it points to (tags are peeled)."""

    ref: str
    target: str

    @property
    def name(self) -> str:
        """Short name: ``main`` for ``refs/heads/main``."""
        return self.ref.split("/", 2)[2]


class GitRepo:
    """A bare repository on disk.

    Args:
        path: Directory of the bare repository (``.../name.git``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _exec(
        self, args: tuple[str, ...], input: bytes | None, env: Mapping[str, str] | None
    ) -> subprocess.CompletedProcess[bytes]:
        full_env = git_environment({"GIT_DIR": str(self.path), **(env or {})})
        return subprocess.run(
            ["git", *args], input=input, capture_output=True, env=full_env, check=False
        )

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> bytes:
        """Run ``git <args>`` against this repository and return its stdout.

        Raises:
            GitCommandError: If ``check`` and git exits non-zero.
        """
        proc = self._exec(args, input, env)
        if check and proc.returncode != 0:
            stderr = proc.stderr.decode(errors="replace").strip()
            raise GitCommandError(f"git {' '.join(args[:3])} failed: {stderr}")
        return proc.stdout

    def succeeds(self, *args: str, env: Mapping[str, str] | None = None) -> bool:
        """Run ``git <args>`` and report whether it exited with status 0."""
        return self._exec(args, None, env).returncode == 0

    def _peel(self, name: str) -> str | None:
        out = self.run("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", check=False)
        return out.decode().strip() or None

    def resolve(self, revision: str) -> str | None:
        """Resolve a branch, tag, full ref name or (abbreviated) sha to a commit sha.

        Branches win over tags of the same name, as on the Hub. Git revision
        expressions (``main~1``, ``HEAD^``) are not accepted.
        """
        if not revision or revision.startswith("-") or _FORBIDDEN_IN_REV.search(revision):
            return None
        if revision.startswith("refs/"):
            candidates = [revision]
        else:
            candidates = [f"refs/heads/{revision}", f"refs/tags/{revision}"]
        if _HEX_REV.fullmatch(revision):
            candidates.append(revision)
        for candidate in candidates:
            sha = self._peel(candidate)
            if sha:
                return sha
        return None

    def branch_head(self, branch: str) -> str | None:
        """Return the commit ``refs/heads/<branch>`` points to, if the branch exists."""
        if _FORBIDDEN_IN_REV.search(branch) or branch.startswith("-"):
            return None
        return self._peel(f"refs/heads/{branch}")

    def ref_exists(self, ref: str) -> bool:
        """Whether the full ref name (``refs/tags/v1``) exists."""
        out = self.run("rev-parse", "--verify", "--quiet", ref, check=False)
        return bool(out.strip())

    def entry(self, commit: str, path: str) -> TreeEntry | None:
        """Return the tree entry at ``path`` in ``commit`` (``""`` is the root)."""
        if not _is_repo_path(path):
            return None
        if not path:
            oid = self.run("rev-parse", f"{commit}^{{tree}}").decode().strip()
            return TreeEntry(path="", type="directory", oid=oid, size=0, mode="040000")
        entries = _parse_ls_tree(self.run("ls-tree", "-l", "-z", commit, "--", path))
        return next((entry for entry in entries if entry.path == path), None)

    def list_tree(self, commit: str, path: str = "", *, recursive: bool = False) -> list[TreeEntry]:
        """List the directory ``path`` of ``commit``; with ``recursive`` all descendants."""
        args = ["ls-tree", "-l", "-z"]
        if recursive:
            args += ["-r", "-t"]
        args.append(commit)
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        if prefix:
            args += ["--", prefix]
        entries = _parse_ls_tree(self.run(*args))
        return [entry for entry in entries if entry.path.startswith(prefix)]

    def list_files(self, commit: str) -> list[TreeEntry]:
        """List every file (blob) of ``commit``, recursively."""
        return [entry for entry in self.list_tree(commit, recursive=True) if entry.type == "file"]

    def read_blob(self, oid: str) -> bytes:
        """Return the content of blob ``oid``."""
        return self.run("cat-file", "blob", oid)

    def read_file(self, commit: str, path: str) -> bytes | None:
        """Return the content of file ``path`` in ``commit``, or None if absent."""
        entry = self.entry(commit, path)
        if entry is None or entry.type != "file":
            return None
        return self.read_blob(entry.oid)

    def log(self, commit: str, *, limit: int | None = None) -> list[CommitRecord]:
        """List commits reachable from ``commit``, newest first."""
        args = ["log", "-z", "--format=%H%x1f%an%x1f%ct%x1f%s%x1f%b"]
        if limit is not None:
            args.append(f"-n{limit}")
        records = []
        for raw in self.run(*args, commit).decode(errors="replace").split("\0"):
            if not raw.strip():
                continue
            sha, author, timestamp, title, body = raw.lstrip("\n").split("\x1f", 4)
            records.append(CommitRecord(sha, author, int(timestamp), title, body.strip()))
        return records

    def commit_timestamp(self, commit: str) -> int:
        """Committer time of ``commit`` in seconds since the epoch."""
        return int(self.run("show", "-s", "--format=%ct", commit).decode().strip())

    def refs(self) -> list[RefRecord]:
        """List branches and tags, tags peeled to the commit they mark."""
        fmt = "%(refname) %(objectname) %(*objectname)"
        out = self.run("for-each-ref", f"--format={fmt}", "refs/heads", "refs/tags").decode()
        records = []
        for line in out.splitlines():
            ref, target, peeled = line.split(" ")
            records.append(RefRecord(ref=ref, target=peeled or target))
        return records


def _is_repo_path(path: str) -> bool:
    """Whether ``path`` is relative and stays inside the tree (git errors otherwise)."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and "\0" not in path


def _parse_ls_tree(output: bytes) -> list[TreeEntry]:
    """Parse ``git ls-tree -l -z`` output into files and directories."""
    entries = []
    for record in output.decode(errors="replace").split("\0"):
        if not record:
            continue
        info, _, path = record.partition("\t")
        mode, kind, oid, size = info.split(None, 3)
        if kind == "blob":
            entries.append(TreeEntry(path, "file", oid, int(size), mode))
        elif kind == "tree":
            entries.append(TreeEntry(path, "directory", oid, 0, mode))
    return entries
