"""Which sandbox this machine can make, checked once by making one; or why it cannot.

The server refuses to start when no sandbox can be made, unless the operator sets
``unsafe_no_sandbox`` (``CODING_ENV_UNSAFE_NO_SANDBOX=1``), in which case ``/metadata`` and the
web UI say so.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading

from coding_env.server.sandbox import Launcher, Mechanism, Sandbox, SandboxError
from coding_env.server.settings import SandboxSettings
from openenv_hub.errors import ConfigurationError

__all__ = ["SandboxUnavailableError", "detect"]

_HINT = (
    "Install bubblewrap ('apt-get install bubblewrap', 'dnf install bubblewrap'); on Ubuntu 24.04 "
    "also allow unprivileged user namespaces ('sysctl kernel.apparmor_restrict_unprivileged_userns=0'). "
    "In Docker, run the image as a non-root user with "
    "'--security-opt seccomp=unconfined --security-opt apparmor=unconfined' "
    "(see the coding environment's README, 'Where the sandbox works'). "
    "To run agent code with no sandbox at all, set CODING_ENV_UNSAFE_NO_SANDBOX=1 "
    "(only for code you trust)."
)


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
        SandboxUnavailableError: bubblewrap is missing or cannot create namespaces here.
    """
    if settings.unsafe_no_sandbox:
        return Launcher(Mechanism.NONE)
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailableError(
            f"the sandbox needs Linux namespaces, and this is {sys.platform}; run the "
            "environment's Docker image instead"
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailableError("bubblewrap (the 'bwrap' command) is not installed")
    mechanism = Mechanism.ROOT if os.geteuid() == 0 else Mechanism.USER_NAMESPACES
    key = (settings, bwrap)
    with _lock:
        if key not in _checked:
            _checked[key] = _first_that_works(settings, mechanism, bwrap)
    return _checked[key]


def _first_that_works(settings: SandboxSettings, mechanism: Mechanism, bwrap: str) -> Launcher:
    """With ``--disable-userns`` where the kernel lets bwrap set it, else without."""
    strict = Launcher(mechanism, bwrap, disable_userns=mechanism is Mechanism.USER_NAMESPACES)
    try:
        _probe(settings, strict)
        return strict
    except SandboxUnavailableError:
        if not strict.disable_userns:
            raise
    relaxed = Launcher(mechanism, bwrap, disable_userns=False)
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
