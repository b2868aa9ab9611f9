"""The seccomp filter every sandbox runs under: system calls that reach kernel code no agent needs.

Refused with ``EPERM``: making or entering namespaces (``unshare``, and ``clone`` with any
namespace flag, ``setns``), mounting (``mount`` and the new mount API), ``bpf``, the key
management calls (``keyctl``, ``add_key``, ``request_key``), ``perf_event_open``, reaching
into another process (``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``), and kernel
code with a history of exploits that Python never needs: ``io_uring_*``, ``userfaultfd``,
``modify_ldt``, ``memfd_secret``, file handles (``name_to_handle_at``, ``open_by_handle_at``)
and ``personality`` for anything but reading it (so no ``READ_IMPLIES_EXEC`` or
``ADDR_NO_RANDOMIZE``). ``clone3`` passes its flags in memory a filter cannot read, so it fails
with ``ENOSYS`` and the C library falls back to ``clone``, whose flags the filter does see. A
system call of another architecture (32-bit ``int 0x80``, x32) kills the process, as libseccomp
does by default.

Sockets are ``AF_UNIX`` only (``socket`` and ``socketpair`` of any other family fail with
``EAFNOSUPPORT``). The sandbox has no network but a loopback of its own, and cgroup v1 does not
charge TCP and UDP buffers to the sandbox's memory bound: 100 loopback connections filled and
never read held hundreds of MB outside it. ``AF_UNIX`` buffers are charged (``multiprocessing``
and ``asyncio`` use them); netlink, packet and crypto sockets are more kernel surface.

``bpf_program(inet=True)`` also lets ``AF_INET`` and ``AF_INET6`` through, for a sandbox whose
network namespace has no route out and whose cgroup bounds TCP buffers (a harness's sandbox,
:mod:`openenv_hub.harness.sandbox`): a harness speaks HTTP to its model and tools on its own
loopback, where relays carry it to the capture proxy and the tool bridge, and reaches nothing
else.

Threads, ``fork``, ``subprocess`` and ``multiprocessing`` are unaffected. The program is compiled
once per process with libseccomp (``pyseccomp``, or libseccomp's own ``seccomp`` bindings) and
handed to bubblewrap, which loads it just before the sandbox's interpreter starts.

Layer: services.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from typing import Any

__all__ = ["NAMESPACE_FLAGS", "REFUSED", "SeccompUnavailable", "bpf_program"]

NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
_CLONE_NEWTIME = 0x00000080  # unshare only: for clone, the low byte is the exit signal
REFUSED = (
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
)
# Newer calls, or calls of one architecture: refused where libseccomp knows them (a library that
# does not predates them; modify_ldt is x86's).
_REFUSED_IF_KNOWN = (
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "pidfd_getfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "modify_ldt",
    "memfd_secret",
    "name_to_handle_at",
    "open_by_handle_at",
)
AF_UNIX = 1
AF_INET = 2
AF_INET6 = 10
_PERSONALITY_QUERY = 0xFFFFFFFF  # personality(0xffffffff) reads the persona, changes nothing
_INSTALL = (
    "install the coding environment's dependency pyseccomp ('pip install pyseccomp') and the "
    "libseccomp library ('apt-get install libseccomp2', 'dnf install libseccomp')"
)


class SeccompUnavailable(Exception):
    """The filter cannot be compiled here; sandboxes must not start without it."""


def _library() -> Any:
    try:
        import pyseccomp

        return pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:  # RuntimeError: no libseccomp.so
        first = exc
    try:
        import seccomp  # libseccomp's own bindings (Debian: python3-seccomp)

        return seccomp
    except (ImportError, RuntimeError, OSError):
        raise SeccompUnavailable(
            f"the seccomp filter cannot be built ({first}); {_INSTALL}"
        ) from None


@functools.lru_cache(maxsize=2)
def bpf_program(*, inet: bool = False) -> bytes:
    """The compiled filter (a BPF program for this machine's architecture).

    Args:
        inet: Also allow ``AF_INET`` and ``AF_INET6`` sockets: only for a sandbox whose network
            namespace has nothing but its own loopback.

    Raises:
        SeccompUnavailable: libseccomp or its Python bindings are missing.
    """
    library = _library()
    refuse = library.ERRNO(errno.EPERM)
    rules = library.SyscallFilter(library.ALLOW)
    for flag in NAMESPACE_FLAGS.values():
        rules.add_rule(refuse, "clone", library.Arg(0, library.MASKED_EQ, flag, flag))
        rules.add_rule(refuse, "unshare", library.Arg(0, library.MASKED_EQ, flag, flag))
    rules.add_rule(
        refuse, "unshare", library.Arg(0, library.MASKED_EQ, _CLONE_NEWTIME, _CLONE_NEWTIME)
    )
    for name in REFUSED:
        rules.add_rule(refuse, name)
    for name in _REFUSED_IF_KNOWN:
        try:
            rules.add_rule(refuse, name)
        except (OSError, ValueError, RuntimeError):
            continue
    rules.add_rule(library.ERRNO(errno.ENOSYS), "clone3")
    families = {AF_UNIX, AF_INET, AF_INET6} if inet else {AF_UNIX}
    for name in ("socket", "socketpair"):
        for mask, value in _none_of(families):
            rules.add_rule(
                library.ERRNO(errno.EAFNOSUPPORT),
                name,
                library.Arg(0, library.MASKED_EQ, mask, value),
            )
    for mask, value in _other_than(_PERSONALITY_QUERY):
        rules.add_rule(refuse, "personality", library.Arg(0, library.MASKED_EQ, mask, value))
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()


def _none_of(allowed: set[int]) -> list[tuple[int, int]]:
    """(mask, value) pairs whose masked comparisons together match every 32-bit argument but
    the small numbers in ``allowed`` (each below 64): any of bits 6 to 31 set, or one of the
    other values below 64."""
    assert all(0 <= value < 64 for value in allowed)
    high = [(1 << bit, 1 << bit) for bit in range(6, 32)]
    return high + [(0x3F, value) for value in range(64) if value not in allowed]


def _other_than(allowed: int) -> list[tuple[int, int]]:
    """(mask, value) pairs, one per bit, whose masked comparisons together match every 32-bit
    argument but ``allowed``: it differs from ``allowed`` in at least one bit. (libseccomp takes
    one comparison per argument in a rule, and rules of one call are alternatives.) The masks
    leave the upper half of the register out, as the kernel does for an ``int`` argument."""
    return [(1 << bit, (allowed ^ (1 << bit)) & (1 << bit)) for bit in range(32)]
