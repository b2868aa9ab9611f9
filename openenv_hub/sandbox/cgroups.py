"""One cgroup per sandbox, bounding its memory and processes as a whole (the coding
environment's sandboxes and the harnesses').

Per-process limits (``RLIMIT_AS``, ``RLIMIT_NPROC``) do not see System V shared memory that no
process has attached, memfds, or files in the sandbox's tmpfs mounts; the kernel's memory
controller charges all of them to the cgroup of the process that made them. So every sandbox
gets a cgroup of its own, with ``memory_mb`` for everything it holds and ``max_processes`` (+1
for bubblewrap's own process) for its tasks:

* **cgroup v2** (one hierarchy): ``memory.max``, ``memory.swap.max`` = 0, ``pids.max``;
* **cgroup v1** (a hierarchy per controller): ``memory.limit_in_bytes`` (and
  ``memory.memsw.limit_in_bytes`` where swap is accounted), and ``pids.max``. v1 charges TCP
  buffers only to a counter of their own, and only once it has a limit: the group's
  ``memory.kmem.tcp.limit_in_bytes`` is a sixteenth of the memory bound. (The coding
  environment's seccomp filter refuses TCP sockets; a harness's sandbox, whose network namespace
  has no route out, takes them on its own loopback, and this bound holds their buffers. v2
  charges socket buffers to ``memory.max``, and both charge ``AF_UNIX`` buffers to the bound.)

Groups live in a folder ``openenv-sandbox`` under the hierarchy's root, or under the server's own
cgroup (a delegated subtree, for a server that is not root), or under ``cgroup_parent``. Each is
named after the server that made it (``<pid namespace>-<pid>-<start time>-<n>``): one is removed
when its sandbox stops, and a server that starts removes those of servers that are gone. Where no
group can be made (no controller, no permission, a read-only ``/sys/fs/cgroup``), memory is bounded
per process only, and the server says so.

Layer: services.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CgroupUnavailable",
    "Group",
    "Hierarchy",
    "find_hierarchy",
    "server_tag",
    "tcp_bytes",
]

FOLDER = "openenv-sandbox"
_CONTROLLERS = ("memory", "pids")
_counter = itertools.count()


class CgroupUnavailable(Exception):
    """No cgroup with the memory and pids controllers can be made here."""


@dataclass(frozen=True)
class Hierarchy:
    """Where this server makes its sandboxes' cgroups.

    Attributes:
        version: 1 or 2.
        folders: v2: the one ``openenv-sandbox`` folder; v1: the memory one, then the pids one.
    """

    version: int
    folders: tuple[Path, ...]

    def create(self, *, memory_bytes: int, max_tasks: int) -> Group:
        """A new group with these limits, empty until :meth:`Group.add` moves a process in."""
        name = f"{server_tag()}-{next(_counter)}"
        made: list[Path] = []
        try:
            for folder in self.folders:
                (folder / name).mkdir()
                made.append(folder / name)
            group = Group(self.version, tuple(made))
            group.limit(memory_bytes, max_tasks)
        except OSError as exc:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise CgroupUnavailable(f"could not make a cgroup in {self.folders[0]}: {exc}") from exc
        return group

    def remove_stale(self) -> int:
        """Remove the groups of servers of this PID namespace that are gone; how many."""
        mine = server_tag().split("-")[0] + "-"
        stale = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                stale |= {
                    p.name
                    for p in folder.iterdir()
                    if p.is_dir() and p.name.startswith(mine) and not _server_alive(p.name)
                }
        for name in stale:
            Group(
                self.version, tuple(f / name for f in self.folders if (f / name).is_dir())
            ).remove()
        return len(stale)


@dataclass(frozen=True)
class Group:
    """One sandbox's cgroup (v1: one folder per controller)."""

    version: int
    folders: tuple[Path, ...]

    def limit(self, memory_bytes: int, max_tasks: int) -> None:
        if self.version == 2:
            (folder,) = self.folders
            _write(folder / "memory.max", memory_bytes)
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", 0)
            _write(folder / "pids.max", max_tasks)
            return
        memory, pids = self.folders
        _write(memory / "memory.limit_in_bytes", memory_bytes)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            _write(memory / "memory.memsw.limit_in_bytes", memory_bytes)
        if (memory / "memory.kmem.tcp.limit_in_bytes").exists():
            _write(memory / "memory.kmem.tcp.limit_in_bytes", tcp_bytes(memory_bytes))
        _write(pids / "pids.max", max_tasks)

    def add(self, pid: int) -> None:
        """Move a process (not its existing children) into the group."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", pid)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return found

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the group's memory bound."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = (self.folders[0] / name).read_text().splitlines()
        except OSError:
            return 0
        counts = dict(line.split(None, 1) for line in lines if " " in line)
        return int(counts.get("oom_kill", "0"))

    def remove(self, timeout_s: float = 2.0) -> bool:
        """Kill what is left in the group, then remove it; False if it could not be removed."""
        deadline = time.monotonic() + timeout_s
        while True:
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            left = []
            for folder in self.folders:
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        raise
                    left.append(folder)
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)


def tcp_bytes(memory_bytes: int) -> int:
    """The TCP buffers a cgroup v1 group may hold besides its memory bound."""
    return max(memory_bytes // 16, 1 << 20)


def _write(path: Path, value: int) -> None:
    with open(path, "w") as file:
        file.write(str(value))


def server_tag() -> str:
    """``<pid namespace inode>-<pid>-<start time>`` of this process: unique while it lives."""
    namespace = os.stat("/proc/self/ns/pid").st_ino
    return f"{namespace}-{os.getpid()}-{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, counted after the command name


def _server_alive(name: str) -> bool:
    try:
        _, pid, started, _ = name.split("-")
        return _start_time(int(pid)) == started
    except (OSError, ValueError):
        return False


def find_hierarchy(parent: str = "", mounts: str = "/proc/self/mounts") -> Hierarchy:
    """Where sandboxes' cgroups can be made here, proven by making and removing one.

    Args:
        parent: A cgroup path (``/system.slice/coding.service``) to make them under; by default
            the hierarchy's root, then the server's own cgroup (a delegated subtree).
        mounts: The mount table to read.

    Raises:
        CgroupUnavailable: Why none can be made.
    """
    table = [line.split() for line in Path(mounts).read_text().splitlines()]
    v1 = {
        c: Path(m[1])
        for m in table
        if len(m) > 3 and m[2] == "cgroup"
        for c in _CONTROLLERS
        if c in m[3].split(",")
    }
    v2 = [Path(m[1]) for m in table if len(m) > 2 and m[2] == "cgroup2"]
    if set(v1) == set(_CONTROLLERS):
        return _first_that_works(1, tuple(v1[c] for c in _CONTROLLERS), parent)
    reasons = []
    for mount in v2:
        offered = _read(mount / "cgroup.controllers").split()
        if all(c in offered for c in _CONTROLLERS):
            return _first_that_works(2, (mount,), parent)
        reasons.append(f"the cgroup v2 hierarchy at {mount} offers {offered or 'no'} controllers")
    if v1:
        reasons.append(f"cgroup v1 has {', '.join(sorted(v1))} but not both memory and pids")
    raise CgroupUnavailable("; ".join(reasons) or "no cgroup hierarchy is mounted")


def _first_that_works(version: int, roots: tuple[Path, ...], parent: str) -> Hierarchy:
    failures = []
    for paths in _candidates(version, parent):
        bases = tuple(root / path.lstrip("/") for root, path in zip(roots, paths, strict=True))
        try:
            hierarchy = _prepare(version, bases)
            hierarchy.create(memory_bytes=64 << 20, max_tasks=8).remove()
        except (OSError, CgroupUnavailable) as exc:
            failures.append(f"{bases[0]}: {exc}")
            continue
        hierarchy.remove_stale()
        return hierarchy
    raise CgroupUnavailable("; ".join(failures))


def _candidates(version: int, parent: str) -> list[tuple[str, ...]]:
    """Cgroup paths to try, one per hierarchy: ``parent``; else the root, then our own."""
    keys = ("",) if version == 2 else _CONTROLLERS
    if parent:
        return [tuple(parent for _ in keys)]
    own = _own_cgroups()
    return list(dict.fromkeys([tuple("/" for _ in keys), tuple(own.get(k, "/") for k in keys)]))


def _prepare(version: int, bases: tuple[Path, ...]) -> Hierarchy:
    folders = tuple(base / FOLDER for base in bases)
    if version == 2:
        (base,) = bases
        _enable_controllers(base)
        folders[0].mkdir(exist_ok=True)
        _enable_controllers(folders[0])
    else:
        for folder in folders:
            folder.mkdir(exist_ok=True)
    return Hierarchy(version, folders)


def _enable_controllers(folder: Path) -> None:
    enabled = _read(folder / "cgroup.subtree_control").split()
    missing = [c for c in _CONTROLLERS if c not in enabled]
    if missing:
        with open(folder / "cgroup.subtree_control", "w") as file:
            file.write(" ".join(f"+{c}" for c in missing))


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path."""
    paths = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
