"""What a harness's sandbox needs from this machine: bubblewrap, the seccomp filter that takes
loopback TCP, a cgroup hierarchy, and an unprivileged user id per sandbox (root mode).

Layer: client.
"""

from __future__ import annotations

import collections
import functools
import os
import shutil
import sys
import threading

from openenv_hub.errors import ConfigurationError
from openenv_hub.sandbox.bwrap import Launcher, Mechanism
from openenv_hub.sandbox.cgroups import CgroupUnavailable, find_hierarchy
from openenv_hub.sandbox.syscall_filter import SeccompUnavailable, bpf_program

__all__ = ["SandboxUnavailable", "find_launcher", "give_back_uid", "take_uid"]

_HINT = (
    "a harness runs only inside a sandbox: install bubblewrap ('apt-get install bubblewrap') "
    "and libseccomp with pyseccomp ('apt-get install libseccomp2', 'pip install "
    "openenv-hub[harness]'), on Linux"
)


class SandboxUnavailable(ConfigurationError):
    """No harness sandbox can be made here, or one could not start."""


@functools.lru_cache(maxsize=1)
def find_launcher() -> Launcher:
    """How harness sandboxes are made here (found once per process).

    Raises:
        SandboxUnavailable: not Linux, no bubblewrap, or no seccomp filter.
    """
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(f"{_HINT} (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(f"{_HINT} (bwrap is not installed)")
    try:
        program = bpf_program(inet=True)
    except SeccompUnavailable as exc:
        raise SandboxUnavailable(f"{_HINT} ({exc})") from None
    mechanism = Mechanism.ROOT if os.geteuid() == 0 else Mechanism.USER_NAMESPACES
    try:
        hierarchy, reason = find_hierarchy(), ""
    except (CgroupUnavailable, OSError) as exc:
        hierarchy, reason = None, str(exc)
    return Launcher(
        mechanism,
        bwrap,
        disable_userns=False,  # the seccomp filter refuses new user namespaces in every mode
        seccomp=program,
        cgroups=hierarchy,
        no_cgroup_reason=reason,
    )


class _UserIds:
    """Unprivileged user ids for root mode, one per live sandbox of this process (a range
    apart from the coding environment's)."""

    def __init__(self) -> None:
        self._base = 1_700_000_000 + (os.getpid() % 60_000) * 4096
        self._free = collections.deque(range(4096))
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            if not self._free:
                raise SandboxUnavailable("no free sandbox user ids (4096 sandboxes are running)")
            return self._base + self._free.popleft()

    def give_back(self, uid: int) -> None:
        with self._lock:
            self._free.append(uid - self._base)


_USER_IDS = _UserIds()
take_uid = _USER_IDS.take
give_back_uid = _USER_IDS.give_back
