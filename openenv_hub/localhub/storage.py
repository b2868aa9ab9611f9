"""On-disk store: one bare git repo per Hub repo, plus a JSON file of Hub metadata.

Layout under the data directory::

    repos/{models,datasets,spaces}/<namespace>/<name>.git/   bare repository
    repos/.../<name>.git/localhub.json                       visibility, sdk, secrets...
    tmp/                                                     repos being built

New and duplicated repos are built under ``tmp/`` and renamed into place, so
other requests never see a half-made repository.

Layer: runtimes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .clock import iso_time
from .errors import HubError
from .gitops import Author, PutFile, commit_files
from .gitrepo import GitRepo, git_environment

RepoType = Literal["model", "dataset", "space"]
REPO_TYPES: tuple[RepoType, ...] = ("model", "dataset", "space")
PLURALS: Mapping[str, RepoType] = {"models": "model", "datasets": "dataset", "spaces": "space"}
RESERVED_NAMESPACES = frozenset({"api", "models", "datasets", "spaces", "_localhub"})
META_FILE = "localhub.json"

_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")


def _valid_name(part: str) -> bool:
    return bool(_NAME.fullmatch(part)) and ".." not in part and "--" not in part


@dataclass(frozen=True)
class RepoKey:
    """Identifies a repo: its type and ``namespace/name``."""

    type: RepoType
    namespace: str
    name: str

    @classmethod
    def parse(cls, repo_type: str, repo_id: str) -> RepoKey:
        """Build a key from ``"model" | "dataset" | "space"`` and ``"ns/name"``.

        Raises:
            HubError: 400 if the type or id is malformed.
        """
        if repo_type not in REPO_TYPES:
            raise HubError.bad_request(f"Invalid repo type: {repo_type!r}")
        namespace, sep, name = repo_id.partition("/")
        if not sep:
            raise HubError.bad_request(f"Repo id must be 'namespace/name', got {repo_id!r}")
        return cls(repo_type, namespace, name)

    @property
    def repo_id(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def plural(self) -> str:
        """``models``, ``datasets`` or ``spaces``, as used in API paths."""
        return f"{self.type}s"

    @property
    def web_path(self) -> str:
        """Path of the repo page and git remote: ``spaces/ns/name`` or ``ns/name`` for models."""
        return self.repo_id if self.type == "model" else f"{self.plural}/{self.repo_id}"

    def is_valid(self) -> bool:
        """Whether namespace and name follow the Hub's naming rules."""
        return (
            _valid_name(self.namespace)
            and _valid_name(self.name)
            and not self.name.endswith(".git")
            and self.namespace not in RESERVED_NAMESPACES
        )


@dataclass
class KeyValue:
    """A Space secret or variable."""

    value: str
    description: str | None = None
    updated_at: str = field(default_factory=iso_time)


@dataclass
class RepoMeta:
    """Hub state that is not in git.

    Attributes:
        private: Visible only to the owner and org members.
        created_at: Creation time (ISO, ``Z`` suffix).
        sdk: Space SDK (``docker``, ``gradio``...), None for models and datasets.
        hardware: Space hardware flavour.
        sleep_time_s: Seconds of inactivity before a Space sleeps, if set.
        stage: Current Space runtime stage (``RUNNING``, ``BUILDING``...).
        next_stages: Stages the runtime moves through, one per runtime read.
        host: URL reported as the Space's host; None means LocalHub's placeholder.
        error_message: Runtime error message reported with the stage.
        secrets: Space secrets (values are never returned by the API).
        variables: Space variables.
        duplicated_from: ``ns/name`` of the source repo for duplicates.
        likes: How many users like the repo (set through the control routes).
    """

    private: bool = False
    created_at: str = field(default_factory=iso_time)
    sdk: str | None = None
    hardware: str = "cpu-basic"
    sleep_time_s: int | None = None
    stage: str = "RUNNING"
    next_stages: list[str] = field(default_factory=list)
    host: str | None = None
    error_message: str | None = None
    secrets: dict[str, KeyValue] = field(default_factory=dict)
    variables: dict[str, KeyValue] = field(default_factory=dict)
    duplicated_from: str | None = None
    likes: int = 0

    def to_json(self) -> str:
        """Serialise for ``localhub.json``."""
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RepoMeta:
        """Parse ``localhub.json``; unknown keys are ignored."""
        raw: dict[str, Any] = json.loads(text)
        known = {key: value for key, value in raw.items() if key in cls.__dataclass_fields__}
        for kind in ("secrets", "variables"):
            known[kind] = {k: KeyValue(**v) for k, v in known.get(kind, {}).items()}
        return cls(**known)


class RepoStore:
    """Creates, finds and removes repos under a data directory.

    Args:
        root: Data directory; created if missing.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        (self.root / "repos").mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").mkdir(exist_ok=True)
        self._layout_lock = threading.Lock()
        self._locks: dict[RepoKey, threading.RLock] = {}
        self._locks_guard = threading.Lock()

    def path(self, key: RepoKey) -> Path:
        """Directory of the bare repository for ``key`` (which may not exist)."""
        return self.root / "repos" / key.plural / key.namespace / f"{key.name}.git"

    def exists(self, key: RepoKey) -> bool:
        """Whether ``key`` names a valid, existing repo."""
        return key.is_valid() and (self.path(key) / META_FILE).is_file()

    def keys(self, repo_type: RepoType) -> list[RepoKey]:
        """Every existing repo of ``repo_type``, sorted by id."""
        base = self.root / "repos" / f"{repo_type}s"
        found = (
            RepoKey(repo_type, repo_dir.parent.name, repo_dir.name.removesuffix(".git"))
            for repo_dir in base.glob("*/*.git")
        )
        return sorted((key for key in found if self.exists(key)), key=lambda key: key.repo_id)

    def git(self, key: RepoKey) -> GitRepo:
        """Git access to the repo of ``key``."""
        return GitRepo(self.path(key))

    def lock(self, key: RepoKey) -> threading.RLock:
        """Per-repo lock serialising metadata edits and API commits."""
        with self._locks_guard:
            return self._locks.setdefault(key, threading.RLock())

    def read_meta(self, key: RepoKey) -> RepoMeta:
        """Load the metadata of an existing repo."""
        return RepoMeta.from_json((self.path(key) / META_FILE).read_text())

    @contextmanager
    def edit_meta(self, key: RepoKey) -> Iterator[RepoMeta]:
        """Load metadata under the repo lock and save it when the block succeeds."""
        with self.lock(key):
            meta = self.read_meta(key)
            yield meta
            _write_meta(self.path(key), meta)

    def create(
        self, key: RepoKey, meta: RepoMeta, *, files: Mapping[str, bytes], author: str
    ) -> None:
        """Create ``key`` with an initial commit of ``files`` on ``main``.

        Raises:
            FileExistsError: If the repo already exists.
        """
        staging = self._staging_dir()
        _run_git("init", "--quiet", "--bare", "--initial-branch=main", str(staging))
        _write_meta(staging, meta)
        ops = [PutFile(path, content) for path, content in files.items()]
        commit_files(
            GitRepo(staging),
            "main",
            ops,
            message="initial commit",
            author=Author.for_user(author),
            create_branch=True,
        )
        self._publish(staging, key)

    def duplicate(self, source: RepoKey, target: RepoKey, meta: RepoMeta) -> None:
        """Copy all branches, tags and history of ``source`` into a new repo ``target``.

        Raises:
            FileExistsError: If ``target`` already exists.
        """
        staging = self._staging_dir()
        _run_git("clone", "--quiet", "--bare", "--no-local", str(self.path(source)), str(staging))
        GitRepo(staging).run("remote", "remove", "origin")
        _write_meta(staging, meta)
        self._publish(staging, target)

    def delete(self, key: RepoKey) -> None:
        """Remove a repo and all its data.

        Raises:
            FileNotFoundError: If it does not exist.
        """
        with self._layout_lock:
            if not self.exists(key):
                raise FileNotFoundError(key.repo_id)
            trash = self._staging_dir()
            os.replace(self.path(key), trash)
        shutil.rmtree(trash, ignore_errors=True)

    def move(self, source: RepoKey, target: RepoKey) -> None:
        """Rename a repo (same type).

        Raises:
            FileNotFoundError: If ``source`` does not exist.
            FileExistsError: If ``target`` already exists.
        """
        with self._layout_lock:
            if not self.exists(source):
                raise FileNotFoundError(source.repo_id)
            if self.path(target).exists():
                raise FileExistsError(target.repo_id)
            self.path(target).parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.path(source), self.path(target))

    def _staging_dir(self) -> Path:
        return self.root / "tmp" / f"{uuid.uuid4().hex}.git"

    def _publish(self, staging: Path, key: RepoKey) -> None:
        with self._layout_lock:
            final = self.path(key)
            if final.exists():
                shutil.rmtree(staging, ignore_errors=True)
                raise FileExistsError(key.repo_id)
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging, final)


def _write_meta(repo_dir: Path, meta: RepoMeta) -> None:
    tmp = repo_dir / f"{META_FILE}.{uuid.uuid4().hex}.tmp"
    tmp.write_text(meta.to_json())
    os.replace(tmp, repo_dir / META_FILE)


def _run_git(*args: str) -> None:
    subprocess.run(["git", *args], env=git_environment(), capture_output=True, check=True)
