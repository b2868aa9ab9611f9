"""Which sandbox this machine can make, checked once by making one; or why it cannot.

The server refuses to start when no sandbox can be made, unless the operator sets
``unsafe_no_sandbox`` (``CODING_ENV_UNSAFE_NO_SANDBOX=1``), in which case ``/metadata`` and the
web UI say so. It also refuses when the seccomp filter cannot be built. Where no cgroup can be
made, it starts, logs a warning, and ``/metadata`` says that memory is bounded per process only.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import sys
import threading

from coding_env.server.bwrap import Launcher, Mechanism
from coding_env.server.sandbox import Sandbox, SandboxError
from coding_env.server.settings import SandboxSettings
from openenv_hub.errors import ConfigurationError
from openenv_hub.sandbox.cgroups import CgroupUnavailable, find_hierarchy
from openenv_hub.sandbox.syscall_filter import SeccompUnavailable, bpf_program

__all__ = ["SandboxUnavailableError", "detect", "memory_bound"]

logger = logging.getLogger("coding_env")
_HINT = (
    "Install bubblewrap ('apt-get install bubblewrap', 'dnf install bubblewrap'); on Ubuntu 24.04 "
    "also allow unprivileged user namespaces ('sysctl kernel.apparmor_restrict_unprivileged_userns=0'). "
    "In Docker, run the image as a non-root user with "
    "'--security-opt seccomp=unconfined --security-opt apparmor=unconfined' "
    "(see the coding environment's README, 'Where the sandbox works'). "
    "To run agent code with no sandbox at all, set CODING_ENV_UNSAFE_NO_SANDBOX=1 "
    "(only for code you trust)."
)
_NO_CGROUPS = "none"


class SandboxUnavailableError(ConfigurationError):
    """No sandbox can be made here, and ``unsafe_no_sandbox`` is not set."""

    def __init__(self, reason: str) -> None:
        # The hint is part of the message too: a server that fails at start-up shows only that.
        super().__init__(
            f"The coding environment cannot sandbox code here: {reason.rstrip('.')}. {_HINT}"
        )
        self.reason = reason
        self.hint = _HINT


_lock = threading.Lock()
_checked: dict[tuple[SandboxSettings, str], Launcher] = {}


def detect(settings: SandboxSettings) -> Launcher:
    """How sandboxes will be made, proven by starting one and running code in it.

    Raises:
        SandboxUnavailableError: bubblewrap is missing or cannot create namespaces here, or the
            seccomp filter cannot be built.
    """
    if settings.unsafe_no_sandbox:
        return Launcher(Mechanism.NONE, no_cgroup_reason="unsafe_no_sandbox is set")
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailableError(
            f"the sandbox needs Linux namespaces, and this is {sys.platform}; run the "
            "environment's Docker image instead"
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailableError("bubblewrap (the 'bwrap' command) is not installed")
    try:
        program = bpf_program()
    except SeccompUnavailable as exc:
        raise SandboxUnavailableError(str(exc)) from None
    mechanism = Mechanism.ROOT if os.geteuid() == 0 else Mechanism.USER_NAMESPACES
    key = (settings, bwrap)
    with _lock:
        if key not in _checked:
            base = _with_cgroups(Launcher(mechanism, bwrap, seccomp=program), settings)
            _checked[key] = _first_that_works(settings, base)
            if _checked[key].cgroups is None:
                logger.warning("coding_env: %s", memory_bound(_checked[key], settings))
    return _checked[key]


def memory_bound(launcher: Launcher, settings: SandboxSettings) -> str:
    """What bounds a sandbox's memory, in one sentence (``/metadata`` and the start-up log)."""
    if launcher.cgroups is None:
        return f"Memory bounded per process only (no cgroup: {launcher.no_cgroup_reason})"
    return (
        f"Memory bounded per sandbox by cgroup v{launcher.cgroups.version}: {settings.memory_mb} MB "
        f"and {settings.max_processes} processes per session, shared memory and tmpfs included"
    )


def _with_cgroups(launcher: Launcher, settings: SandboxSettings) -> Launcher:
    if settings.cgroup_parent.strip().lower() == _NO_CGROUPS:
        return dataclasses.replace(launcher, no_cgroup_reason="cgroup_parent is 'none'")
    try:
        hierarchy = find_hierarchy(settings.cgroup_parent)
    except (CgroupUnavailable, OSError) as exc:
        return dataclasses.replace(launcher, no_cgroup_reason=str(exc))
    return dataclasses.replace(launcher, cgroups=hierarchy)


def _first_that_works(settings: SandboxSettings, base: Launcher) -> Launcher:
    """With ``--disable-userns`` where the kernel lets bwrap set it, else without."""
    strict = dataclasses.replace(base, disable_userns=base.mechanism is Mechanism.USER_NAMESPACES)
    try:
        _probe(settings, strict)
        return strict
    except SandboxUnavailableError:
        if not strict.disable_userns:
            raise
    relaxed = dataclasses.replace(base, disable_userns=False)
    _probe(settings, relaxed)
    return relaxed


def _probe(settings: SandboxSettings, launcher: Launcher) -> None:
    sandbox = Sandbox(settings, launcher)
    try:
        sandbox.start()
        reply = sandbox.request({"op": "run", "code": "6 * 7"}, settings.step_timeout_s)
    except SandboxError as exc:
        raise SandboxUnavailableError(
            f"bubblewrap failed ({launcher.mechanism.value}): {exc}"
        ) from None
    finally:
        sandbox.stop()
    if reply.get("value") != "42":
        raise SandboxUnavailableError(f"a test run in the sandbox gave {reply}")
