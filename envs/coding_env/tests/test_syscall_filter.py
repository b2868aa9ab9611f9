"""The seccomp filter: each refused system call tried by agent code through the real sandbox, and
ordinary Python (threads, subprocess, multiprocessing) still working under it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from coding_env import CodeAction
from coding_support import ENV_DIR, Target

# Each call is made through libc with arguments that would succeed without the filter (or fail
# with a different error); a clone that did succeed ends its child at once.
ATTEMPTS = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SIGCHLD = 17
NR = {"clone": 56, "clone3": 435, "bpf": 321, "keyctl": 250, "perf_event_open": 298,
      "setns": 308, "process_vm_readv": 310, "pidfd_getfd": 438}
def attempt(call):
    ctypes.set_errno(0)
    result = call()
    return errno.errorcode.get(ctypes.get_errno(), "OK") if result < 0 else "OK"
def clone_newuser():
    pid = libc.syscall(NR["clone"], 0x10000000 | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    return pid
attr = ctypes.create_string_buffer(128)
outcomes = {
    "unshare(NEWUSER|NEWNET)": attempt(lambda: libc.unshare(0x10000000 | 0x40000000)),
    "unshare(NEWNS)": attempt(lambda: libc.unshare(0x00020000)),
    "unshare(NEWIPC)": attempt(lambda: libc.unshare(0x08000000)),
    "clone(NEWUSER)": attempt(clone_newuser),
    "clone3": attempt(lambda: libc.syscall(NR["clone3"], 0, 0)),
    "setns": attempt(lambda: libc.syscall(NR["setns"], 0, 0)),
    "mount": attempt(lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
    "umount2": attempt(lambda: libc.umount2(b"/tmp", 0)),
    "bpf": attempt(lambda: libc.syscall(NR["bpf"], 0, attr, 128)),
    "keyctl": attempt(lambda: libc.syscall(NR["keyctl"], 0, -3, 0)),
    "perf_event_open": attempt(lambda: libc.syscall(NR["perf_event_open"], attr, 0, -1, -1, 0)),
    "ptrace": attempt(lambda: libc.ptrace(16, 1, 0, 0)),
    "process_vm_readv": attempt(lambda: libc.syscall(NR["process_vm_readv"], 1, 0, 0, 0, 0, 0)),
    "pidfd_getfd": attempt(lambda: libc.syscall(NR["pidfd_getfd"], 0, 0, 0)),
}
outcomes
"""

# Each call with arguments that work without the filter (name_to_handle_at with a zero-sized
# handle fails with EOVERFLOW, asking for a bigger one); personality(0xffffffff) only reads.
KERNEL_SURFACE = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 323,
      "personality": 135, "modify_ldt": 154, "memfd_secret": 447, "name_to_handle_at": 303,
      "open_by_handle_at": 304}
READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, UFFD_USER_MODE_ONLY = 0x0400000, 0x0040000, 1
def attempt(call):
    ctypes.set_errno(0)
    result = call()
    return errno.errorcode.get(ctypes.get_errno(), "OK") if result < 0 else "OK"
params = ctypes.create_string_buffer(120)
table = ctypes.create_string_buffer(64)
handle = ctypes.create_string_buffer(128)
mount_id = ctypes.c_int()
outcomes = {
    "io_uring_setup": attempt(lambda: libc.syscall(NR["io_uring_setup"], 1, params)),
    "io_uring_enter": attempt(lambda: libc.syscall(NR["io_uring_enter"], 0, 0, 0, 0, 0, 0)),
    "io_uring_register": attempt(lambda: libc.syscall(NR["io_uring_register"], 0, 0, 0, 0)),
    "userfaultfd": attempt(lambda: libc.syscall(NR["userfaultfd"], UFFD_USER_MODE_ONLY | os.O_CLOEXEC)),
    "personality(READ_IMPLIES_EXEC)": attempt(lambda: libc.syscall(NR["personality"], READ_IMPLIES_EXEC)),
    "personality(ADDR_NO_RANDOMIZE)": attempt(lambda: libc.syscall(NR["personality"], ADDR_NO_RANDOMIZE)),
    "personality(high bits + READ_IMPLIES_EXEC)": attempt(
        lambda: libc.syscall(NR["personality"], ctypes.c_long((1 << 32) | READ_IMPLIES_EXEC))),
    "modify_ldt": attempt(lambda: libc.syscall(NR["modify_ldt"], 0, table, 64)),
    "memfd_secret": attempt(lambda: libc.syscall(NR["memfd_secret"], 0)),
    "name_to_handle_at": attempt(
        lambda: libc.syscall(NR["name_to_handle_at"], -100, b"/", handle, ctypes.byref(mount_id), 0)),
    "open_by_handle_at": attempt(lambda: libc.syscall(NR["open_by_handle_at"], -100, handle, 0)),
}
outcomes, libc.syscall(NR["personality"], 0xFFFFFFFF)
"""

SOCKETS = r"""
import errno, socket
AF_NETLINK, AF_PACKET, AF_ALG = 16, 17, 38
outcomes = {}
for name, family, kind in [("AF_INET", socket.AF_INET, socket.SOCK_STREAM),
                           ("AF_INET udp", socket.AF_INET, socket.SOCK_DGRAM),
                           ("AF_INET6", socket.AF_INET6, socket.SOCK_STREAM),
                           ("AF_NETLINK", AF_NETLINK, socket.SOCK_RAW),
                           ("AF_PACKET", AF_PACKET, socket.SOCK_RAW),
                           ("AF_ALG", AF_ALG, socket.SOCK_SEQPACKET),
                           ("AF_UNIX", socket.AF_UNIX, socket.SOCK_STREAM)]:
    try:
        socket.socket(family, kind).close()
        outcomes[name] = "OK"
    except OSError as exc:
        outcomes[name] = errno.errorcode[exc.errno]
"""

ORDINARY_PYTHON = r"""
import asyncio, multiprocessing, socket, subprocess, sys, threading
def square(x):
    return x * x
seen = []
threads = [threading.Thread(target=seen.append, args=(i,)) for i in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
child = subprocess.run([sys.executable, "-c", "print('child')"], capture_output=True, text=True)
with multiprocessing.Pool(2) as pool:
    squares = pool.map(square, range(5))
with multiprocessing.Manager() as manager:  # a server process on an AF_UNIX socket
    shared = manager.list([1, 2])
    shared.append(3)
    managed = list(shared)
async def pause():
    await asyncio.sleep(0)  # the event loop wakes itself through a socketpair
    return "awaited"
left, right = socket.socketpair()
left.sendall(b"pair")
sorted(seen), child.stdout.strip(), squares, managed, asyncio.run(pause()), right.recv(4)
"""

BRING_UP_LOOPBACK = r"""
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
unshared = libc.unshare(0x10000000 | 0x40000000)
unshared, ctypes.get_errno()
"""


def test_every_refused_call_fails_from_agent_code(target: Target) -> None:
    observation: Any = target.run(ATTEMPTS)
    outcomes = eval(observation.result)
    expected = {name: "EPERM" for name in outcomes}
    expected["clone3"] = "ENOSYS"  # so that the C library falls back to clone, which is filtered
    assert outcomes == expected
    target.assert_serves()


def test_a_nested_user_and_network_namespace_cannot_be_made(target: Target) -> None:
    """The attack this filter was made for: CAP_NET_ADMIN in a namespace of the agent's own."""
    observation: Any = target.run(BRING_UP_LOOPBACK)
    assert observation.result == "(-1, 1)", observation  # EPERM


def test_a_system_call_of_another_architecture_ends_the_interpreter(target: Target) -> None:
    """x32's unshare (x86-64's number with bit 30 set) would slip past a filter of x86-64
    numbers; the filter kills the process instead."""
    with target.client().sync() as env:
        env.reset()
        code = "import ctypes\nctypes.CDLL(None).syscall(0x40000000 | 272, 0x10000000)"
        killed = env.step(CodeAction(code=code)).observation
        assert killed.context_lost and "SIGSYS" in killed.message, killed
        assert env.step(CodeAction(code="1 + 1")).observation.result == "2"


def test_threads_subprocess_and_multiprocessing_still_work(target: Target) -> None:
    """And asyncio and multiprocessing's managers, which use AF_UNIX sockets."""
    observation: Any = target.run(ORDINARY_PYTHON)
    expected = (list(range(8)), "child", [0, 1, 4, 9, 16], [1, 2, 3], "awaited", b"pair")
    assert eval(observation.result) == expected, observation


def test_kernel_surface_python_never_needs_is_refused(target: Target) -> None:
    """io_uring, userfaultfd, modify_ldt, memfd_secret, file handles, and personality flags that
    make memory executable or turn address randomisation off: each worked from agent code, each
    is now refused; reading the persona still works."""
    observation: Any = target.run(KERNEL_SURFACE)
    outcomes, persona = eval(observation.result)
    assert outcomes == {name: "EPERM" for name in outcomes}, outcomes
    assert persona == 0, observation  # PER_LINUX
    target.assert_serves()


def test_sockets_are_unix_sockets_only(target: Target) -> None:
    """TCP and UDP buffers escape cgroup v1's memory bound, and the sandbox has no network to
    reach: every family but AF_UNIX is refused (test_memory_bound.py measures the buffers)."""
    observation: Any = target.run(SOCKETS + "outcomes")
    outcomes = eval(observation.result)
    assert outcomes.pop("AF_UNIX") == "OK", observation
    assert outcomes == {name: "EAFNOSUPPORT" for name in outcomes}, observation


def test_without_libseccomp_bindings_the_server_refuses_to_start() -> None:
    """The server never runs sandboxes without the filter: it stops and says what to install."""
    code = (
        "import sys\n"
        "sys.modules['pyseccomp'] = None\n"  # as if neither binding were installed
        "sys.modules['seccomp'] = None\n"
        "import coding_env.server.app\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ENV_DIR,
        check=False,
    )
    assert done.returncode != 0
    assert "The coding environment cannot sandbox code here" in done.stderr
    assert "pip install pyseccomp" in done.stderr and "libseccomp2" in done.stderr
