"""Write operations on bare repositories: commits, tags and branches.

Commits are built with plumbing only (no work tree): the parent's tree is read
into a dict, edited in Python, written through a throwaway index, committed
with ``commit-tree`` and published with a compare-and-swap ``update-ref``. A
concurrent ``git push`` therefore can never be overwritten silently.

Layer: runtimes.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import HubError
from .gitrepo import ZERO_OID, GitRepo

IndexEntries = dict[str, tuple[str, str]]
"""``path -> (mode, oid)`` for every blob (and gitlink) of a tree."""

_BLOB_MODES = frozenset({"100644", "100755"})


@dataclass(frozen=True)
class PutFile:
    """Add or overwrite a file, whose content is ``content`` or, if set, the file ``source``
    (a big upload, spooled to disk)."""

    path: str
    content: bytes = b""
    source: Path | None = None


@dataclass(frozen=True)
class DeletePath:
    """Remove a file, or with ``folder`` everything below a directory."""

    path: str
    folder: bool = False


FileOp = PutFile | DeletePath


@dataclass(frozen=True)
class Author:
    """Name and e-mail recorded as author and committer of API commits."""

    name: str
    email: str

    @classmethod
    def for_user(cls, name: str) -> Author:
        """The identity LocalHub records for Hub user ``name``."""
        return cls(name, f"{name}@users.noreply.localhub")

    def env(self) -> dict[str, str]:
        """Environment variables that make git use this identity."""
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }


def normalize_path(path: str) -> str:
    """Validate a path inside a repo and strip surrounding slashes.

    Raises:
        HubError: 400 for empty paths, ``.``/``..`` parts or anything inside ``.git``.
    """
    cleaned = path.strip("/")
    parts = cleaned.split("/")
    bad_part = any(part in ("", ".", "..", ".git") for part in parts)
    if not cleaned or bad_part or any(char in cleaned for char in "\0\n\r"):
        raise HubError.bad_request(f"Invalid path in repo: {path!r}")
    return cleaned


def read_entries(repo: GitRepo, commit: str | None) -> IndexEntries:
    """Return every blob and gitlink of ``commit``'s tree (empty for None)."""
    if commit is None:
        return {}
    entries: IndexEntries = {}
    for record in repo.run("ls-tree", "-r", "-z", "--full-tree", commit).decode().split("\0"):
        if record:
            info, _, path = record.partition("\t")
            mode, _kind, oid = info.split()
            entries[path] = (mode, oid)
    return entries


def apply_edits(
    entries: Mapping[str, tuple[str, str]],
    edits: Sequence[tuple[str, str] | DeletePath],
    commit: str | None = None,
) -> IndexEntries:
    """Apply staged edits to a tree listing, without touching git.

    Args:
        entries: The parent tree, ``path -> (mode, oid)``.
        edits: ``(path, blob_oid)`` to write a file, or :class:`DeletePath`.
        commit: Parent commit, only echoed in ``EntryNotFound`` errors.

    Raises:
        HubError: 404 ``EntryNotFound`` when deleting a missing path; 400 when a
            file and a directory would share a path.
    """
    result = dict(entries)
    for edit in edits:
        if isinstance(edit, DeletePath):
            _delete(result, edit, commit)
        else:
            _put(result, *edit)
    return result


def _put(entries: IndexEntries, path: str, oid: str) -> None:
    parts = path.split("/")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth])
        if parent in entries:
            raise HubError.bad_request(f"Cannot add {path!r}: {parent!r} is a file")
    prefix = path + "/"
    if any(existing.startswith(prefix) for existing in entries):
        raise HubError.bad_request(f"Cannot add {path!r}: a folder with this name exists")
    mode = entries[path][0] if path in entries else "100644"
    entries[path] = (mode if mode in _BLOB_MODES else "100644", oid)


def _delete(entries: IndexEntries, edit: DeletePath, commit: str | None) -> None:
    path = edit.path.strip("/")
    if edit.folder:
        doomed = [existing for existing in entries if existing.startswith(path + "/")]
    else:
        doomed = [path] if path in entries else []
    if not doomed:
        raise HubError.entry_not_found(path, commit)
    for existing in doomed:
        del entries[existing]


def write_blobs(repo: GitRepo, contents: Sequence[bytes | Path]) -> list[str]:
    """Store ``contents`` (bytes, or files holding them) as blobs with a single
    ``hash-object`` call; return their ids."""
    if not contents:
        return []
    with tempfile.TemporaryDirectory(prefix="localhub-blobs-") as tmp:
        paths = []
        for index, content in enumerate(contents):
            if isinstance(content, Path):
                paths.append(str(content))
                continue
            path = Path(tmp, str(index))
            path.write_bytes(content)
            paths.append(str(path))
        stdin = ("\n".join(paths) + "\n").encode()
        out = repo.run("hash-object", "-w", "--no-filters", "--stdin-paths", input=stdin)
    return out.decode().split()


def write_tree(repo: GitRepo, entries: Mapping[str, tuple[str, str]]) -> str:
    """Write ``entries`` as a tree object through a temporary index; return its id."""
    lines = "".join(f"{mode} {oid}\t{path}\n" for path, (mode, oid) in sorted(entries.items()))
    with tempfile.TemporaryDirectory(prefix="localhub-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp, "index"))}
        repo.run("update-index", "--add", "--index-info", input=lines.encode(), env=env)
        return repo.run("write-tree", env=env).decode().strip()


def _stage(repo: GitRepo, ops: Sequence[FileOp]) -> list[tuple[str, str] | DeletePath]:
    """Validate paths, then store the new contents as blobs in one go."""
    paths = [normalize_path(op.path) for op in ops]
    puts = [op for op in ops if isinstance(op, PutFile)]
    oids = iter(write_blobs(repo, [op.source or op.content for op in puts]))
    staged: list[tuple[str, str] | DeletePath] = []
    for path, op in zip(paths, ops, strict=True):
        if isinstance(op, PutFile):
            staged.append((path, next(oids)))
        else:
            staged.append(DeletePath(path, op.folder))
    return staged


def commit_files(
    repo: GitRepo,
    branch: str,
    ops: Sequence[FileOp],
    *,
    message: str,
    author: Author,
    parent_commit: str | None = None,
    create_branch: bool = False,
) -> str:
    """Commit ``ops`` on top of ``branch`` and move the branch; return the new sha.

    Raises:
        HubError: 404 ``RevisionNotFound`` for an unknown branch (unless
            ``create_branch``), 412 when ``parent_commit`` is not the branch head,
            409 when the branch moved while committing, or an edit error.
    """
    old = repo.branch_head(branch)
    if old is None and not create_branch:
        raise HubError.revision_not_found(branch)
    if parent_commit and (
        old is None or len(parent_commit) < 7 or not old.startswith(parent_commit)
    ):
        raise HubError(412, "A commit has happened since. Please refresh and try again.")
    tree = write_tree(repo, apply_edits(read_entries(repo, old), _stage(repo, ops), old))
    parents = ["-p", old] if old else []
    text = message if message.endswith("\n") else message + "\n"
    sha = repo.run("commit-tree", tree, *parents, input=text.encode(), env=author.env())
    new = sha.decode().strip()
    update_ref(repo, f"refs/heads/{branch}", new, expected=old)
    return new


def update_ref(repo: GitRepo, ref: str, new: str, *, expected: str | None) -> None:
    """Point ``ref`` at ``new`` only if it still points at ``expected`` (None: absent).

    Raises:
        HubError: 409 if the ref changed (or already exists, when ``expected`` is None).
    """
    if not repo.succeeds("update-ref", ref, new, expected or ZERO_OID):
        raise HubError(409, f"Reference {ref} was updated concurrently or already exists")


def check_ref_name(repo: GitRepo, ref: str) -> None:
    """Reject names git would refuse (``..``, spaces, a trailing ``.lock``...).

    Raises:
        HubError: 400 for an invalid name.
    """
    if not repo.succeeds("check-ref-format", ref):
        raise HubError.bad_request(f"Invalid reference name: {ref.split('/', 2)[-1]!r}")


def create_tag(
    repo: GitRepo, tag: str, target: str, *, author: Author, message: str | None = None
) -> None:
    """Create ``refs/tags/<tag>`` at commit ``target``; annotated when ``message`` is set.

    Raises:
        HubError: 400 for an invalid name, 409 if the tag already exists.
    """
    ref = f"refs/tags/{tag}"
    check_ref_name(repo, ref)
    if repo.ref_exists(ref):
        raise HubError(409, f"Tag {tag!r} already exists")
    if message:
        body = (
            f"object {target}\ntype commit\ntag {tag}\n"
            f"tagger {author.name} <{author.email}> {_now_git()}\n\n{message}\n"
        )
        oid = repo.run("mktag", input=body.encode()).decode().strip()
    else:
        oid = target
    update_ref(repo, ref, oid, expected=None)


def create_branch(repo: GitRepo, branch: str, target: str) -> None:
    """Create ``refs/heads/<branch>`` at commit ``target``.

    Raises:
        HubError: 400 for an invalid name, 409 if the branch already exists.
    """
    ref = f"refs/heads/{branch}"
    check_ref_name(repo, ref)
    if repo.ref_exists(ref):
        raise HubError(409, f"Branch {branch!r} already exists")
    update_ref(repo, ref, target, expected=None)


def delete_ref(repo: GitRepo, ref: str) -> None:
    """Delete a branch or tag.

    Raises:
        HubError: 404 ``RevisionNotFound`` if it does not exist.
    """
    if not repo.ref_exists(ref) or not repo.succeeds("update-ref", "-d", ref):
        raise HubError.revision_not_found(ref.split("/", 2)[-1])


def _now_git() -> str:
    return f"{int(time.time())} +0000"
