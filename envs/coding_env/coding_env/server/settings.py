"""The limits every session's sandbox runs under, from keyword arguments or ``CODING_ENV_*``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.errors import ConfigurationError

__all__ = ["ENV_PREFIX", "SandboxSettings"]

ENV_PREFIX = "CODING_ENV_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class SandboxSettings:
    """Per-session limits. Every field can be set with ``CODING_ENV_<FIELD>`` (upper case).

    Attributes:
        step_timeout_s: Wall time of one step; the sandbox is killed when it runs out.
        cpu_time_s: CPU time of one step (all threads of the interpreter).
        memory_mb: Memory of the whole sandbox: its processes, shared memory, memfds and the files
            in its tmpfs mounts (a cgroup's memory bound, where one can be made), and the address
            space of each of its processes (``RLIMIT_AS``).
        max_processes: Processes and threads the sandbox may hold (``RLIMIT_NPROC``, and the
            cgroup's ``pids.max``).
        max_open_files: Open files per process (``RLIMIT_NOFILE``).
        max_file_size_mb: Largest file a process may write (``RLIMIT_FSIZE``); also caps output.
        workdir_size_mb: Size of the private working directory (``/workspace``, a tmpfs).
        tmp_size_mb: Size of the private ``/tmp`` (a tmpfs).
        max_output_bytes: Bytes of stdout and of stderr returned per step; the rest is dropped.
        grading_timeout_s: Wall time for a task's hidden tests.
        start_timeout_s: Wall time for a new sandbox to be ready.
        python: Interpreter run in the sandbox (default: the server's own).
        extra_ro_paths: More host paths made visible, read-only (e.g. a data folder).
        cgroup_parent: The cgroup (a path in the hierarchy, e.g. ``/system.slice/coding.service``)
            under which each sandbox gets its own; by default the hierarchy's root, then the
            server's own cgroup. ``none``: make no cgroups (memory is then bounded per process
            only, and ``/metadata`` says so).
        unsafe_no_sandbox: Run the interpreter without namespaces when no sandbox can be made.
            Only for code you trust: it then sees the filesystem and the network.
    """

    step_timeout_s: float = 30.0
    cpu_time_s: float = 30.0
    memory_mb: int = 1024
    max_processes: int = 64
    max_open_files: int = 256
    max_file_size_mb: int = 16
    workdir_size_mb: int = 256
    tmp_size_mb: int = 64
    max_output_bytes: int = 65536
    grading_timeout_s: float = 20.0
    start_timeout_s: float = 30.0
    python: str = ""
    extra_ro_paths: tuple[str, ...] = field(default_factory=tuple)
    cgroup_parent: str = ""
    unsafe_no_sandbox: bool = False

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
                raise ConfigurationError(
                    f"Coding environment setting {item.name} must be positive, got {value!r} "
                    f"(set it with {ENV_PREFIX}{item.name.upper()} or a keyword argument)."
                )

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, **overrides: Any
    ) -> SandboxSettings:
        """Defaults, then ``CODING_ENV_*`` variables, then ``overrides``."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for item in dataclasses.fields(cls):
            raw = environ.get(ENV_PREFIX + item.name.upper())
            if raw is not None:
                values[item.name] = _parse(item.name, raw, cls.__dataclass_fields__[item.name])
        values.update(overrides)
        if isinstance(values.get("extra_ro_paths"), list):
            values["extra_ro_paths"] = tuple(values["extra_ro_paths"])
        return cls(**values)

    def worker_limits(self) -> dict[str, int]:
        """The kernel limits the interpreter sets on itself before any agent code runs."""
        return {
            "memory_bytes": self.memory_mb * 1024 * 1024,
            "max_processes": self.max_processes,
            "max_open_files": self.max_open_files,
            "max_file_size_bytes": self.max_file_size_mb * 1024 * 1024,
        }


def _parse(name: str, raw: str, item: dataclasses.Field[Any]) -> Any:
    default = item.default if item.default is not dataclasses.MISSING else ()
    variable = ENV_PREFIX + name.upper()
    try:
        if isinstance(default, bool):
            lowered = raw.strip().lower()
            if lowered not in _TRUE | _FALSE:
                raise ValueError(raw)
            return lowered in _TRUE
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        if isinstance(default, tuple):
            return tuple(p for p in raw.split(os.pathsep) if p)
    except ValueError:
        raise ConfigurationError(
            f"{variable}={raw!r} is not a valid {type(default).__name__}."
        ) from None
    return raw
