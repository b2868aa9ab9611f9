"""The parts of a kernel-enforced sandbox, shared by the coding environment's interpreter and
a harness's sandbox: bubblewrap's namespaces and read-only system (:mod:`.bwrap`), one cgroup
per sandbox bounding its memory and processes as a whole (:mod:`.cgroups`), System V IPC limits
in its IPC namespace (:mod:`.ipc_limits`) and the seccomp filter (:mod:`.syscall_filter`).

Layer: services.
"""

from openenv_hub.sandbox.bwrap import (
    BwrapPipes,
    Launcher,
    Mechanism,
    child_pid,
    namespace_arguments,
    python_roots,
    system_arguments,
)
from openenv_hub.sandbox.cgroups import (
    CgroupUnavailable,
    Group,
    Hierarchy,
    find_hierarchy,
    tcp_bytes,
)
from openenv_hub.sandbox.ipc_limits import limit_ipc
from openenv_hub.sandbox.syscall_filter import SeccompUnavailable, bpf_program

__all__ = [
    "BwrapPipes",
    "CgroupUnavailable",
    "Group",
    "Hierarchy",
    "Launcher",
    "Mechanism",
    "SeccompUnavailable",
    "bpf_program",
    "child_pid",
    "find_hierarchy",
    "limit_ipc",
    "namespace_arguments",
    "python_roots",
    "system_arguments",
    "tcp_bytes",
]
