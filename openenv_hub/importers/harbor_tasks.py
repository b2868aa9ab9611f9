"""Harbor task folders, read: ``task.toml``, ``instruction.md``, ``environment/Dockerfile``,
``tests/test.sh`` (the hidden test that writes the reward) and ``solution/solve.sh`` (the
oracle).

A task set is a folder of task folders (each with a ``task.toml``), or one task folder. What
is read of ``task.toml`` (Harbor's schema 1.x):

- ``[agent] timeout_sec``: the agent's time for the whole episode;
- ``[verifier] timeout_sec`` (default 600) and ``env``: the test's time and variables;
- ``[environment]``: ``build_timeout_sec`` (600), ``docker_image`` (an image instead of the
  Dockerfile), ``cpus``, ``memory_mb`` (or the older ``memory = "2G"``), ``workdir``, ``env``;
- network: ``network_mode = "public"`` (or the older ``allow_internet = true``) in
  ``[environment]``, or in ``[agent]`` / ``[verifier]`` for that phase alone. **Unlike Harbor,
  whose default is the public network, a task gets no network unless it says so**;
  ``allowlist`` cannot be enforced here and runs with no network.

Variables written ``${NAME}`` or ``${NAME:-default}`` take the value of ``NAME`` in the server's
environment, as Harbor resolves them. Multi-step tasks (``[[steps]]``), Windows tasks and tasks
built with Docker Compose are refused with a message that says so. The ``harbor`` package itself
needs Python 3.12 and pins the main install cannot take, so this reader is written against its
schema; a test holds it to ``harbor``'s own reading of the same folders.

Layer: client.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.support.settings import named_variable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["HarborTask", "environment_digest", "read_task", "read_task_set"]

DEFAULT_VERIFIER_TIMEOUT_S = 600.0
DEFAULT_BUILD_TIMEOUT_S = 600.0
DEFAULT_MEMORY_MB = 2048
_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")
_CANARY = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)
_OPEN = {"public"}
_KNOWN_MODES = {"public", "no-network", "allowlist"}


@dataclass(frozen=True)
class HarborTask:
    """One Harbor task folder, as read.

    Attributes:
        name: The folder's name: the task's key in its set.
        path: The folder.
        instruction: What the agent is asked (``instruction.md``, canary lines removed).
        agent_timeout_s: The agent's time for the episode (None: not bounded by the task).
        verifier_timeout_s: The hidden test's time.
        build_timeout_s: The image build's time.
        agent_network: Whether the agent's container has a network.
        verifier_network: Whether the test's container has a network.
        memory_mb: Memory of each container.
        cpus: CPUs of each container (None: no bound of its own).
        docker_image: An image to use instead of building ``environment/Dockerfile``.
        workdir: The working directory commands start in (None: the image's).
        env: Variables of the agent's container.
        verifier_env: Variables of the test's run.
        package: The task's ``[task] name`` (``org/name``), when it declares one.
    """

    name: str
    path: Path
    instruction: str
    agent_timeout_s: float | None = None
    verifier_timeout_s: float = DEFAULT_VERIFIER_TIMEOUT_S
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    agent_network: bool = False
    verifier_network: bool = False
    memory_mb: int = DEFAULT_MEMORY_MB
    cpus: float | None = None
    docker_image: str | None = None
    workdir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    verifier_env: dict[str, str] = field(default_factory=dict)
    package: str | None = None

    @property
    def test_script(self) -> Path:
        return self.path / "tests" / "test.sh"

    @property
    def solve_script(self) -> Path:
        return self.path / "solution" / "solve.sh"

    @property
    def has_oracle(self) -> bool:
        return self.solve_script.is_file()


def read_task_set(root: Path) -> list[HarborTask]:
    """The tasks of ``root``: a task folder, or a folder of them (sorted by name).

    Raises:
        ConfigurationError: No task is there, or one cannot be read (the message names it).
    """
    root = Path(root)
    if (root / "task.toml").is_file():
        return [read_task(root)]
    folders = sorted(p.parent for p in root.glob("*/task.toml"))
    if not folders:
        raise ConfigurationError(
            f"No Harbor task in {root}: no task.toml in it or in its folders.",
            hint="Pass a task folder (with task.toml, instruction.md, environment/, tests/) "
            "or a folder of them.",
        )
    return [read_task(folder) for folder in folders]


def read_task(folder: Path) -> HarborTask:
    """The task in ``folder``.

    Raises:
        ConfigurationError: ``task.toml`` is not valid TOML, names what is not supported here,
            or a file the task needs is missing.
    """
    folder = Path(folder)
    _refuse_links(folder)
    config = _config(folder)
    _refuse_unsupported(folder, config)
    environment = _table(config, "environment", folder)
    agent, verifier = _table(config, "agent", folder), _table(config, "verifier", folder)
    image = environment.get("docker_image")
    _require_files(folder, prebuilt=bool(image))
    instruction = (folder / "instruction.md").read_text(encoding="utf-8")
    return HarborTask(
        name=folder.name,
        path=folder.resolve(),
        instruction=_strip_canary(instruction),
        agent_timeout_s=_number(agent, "timeout_sec", None, folder),
        verifier_timeout_s=_number(verifier, "timeout_sec", DEFAULT_VERIFIER_TIMEOUT_S, folder),
        build_timeout_s=_number(environment, "build_timeout_sec", DEFAULT_BUILD_TIMEOUT_S, folder),
        agent_network=_network(agent, environment, folder),
        verifier_network=_network(verifier, environment, folder),
        memory_mb=_memory_mb(environment, folder),
        cpus=_number(environment, "cpus", None, folder),
        docker_image=str(image) if image else None,
        workdir=environment.get("workdir"),
        env=_variables(environment.get("env") or {}, folder),
        verifier_env=_variables(verifier.get("env") or {}, folder),
        package=(config.get("task") or {}).get("name"),
    )


def environment_digest(task: HarborTask) -> str:
    """A digest of the task's ``environment/`` files (names, modes and contents): the image
    built from it is named after it, so a changed Dockerfile gets a new image."""
    digest = hashlib.sha256()
    folder = task.path / "environment"
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            digest.update(oct(path.stat().st_mode & 0o777).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _refuse_links(folder: Path) -> None:
    """A task's own files are read only as files of its folder, never through a link (which
    could name any file of the machine reading it)."""
    linked = [name for name in ("task.toml", "instruction.md") if (folder / name).is_symlink()]
    if linked:
        raise ConfigurationError(
            f"The task {folder.name}'s {' and '.join(linked)} is a link, which is not read.",
            hint="Replace the link with the file itself.",
        )


def _config(folder: Path) -> dict[str, Any]:
    path = folder / "task.toml"
    if not path.is_file():
        raise ConfigurationError(f"{folder} is not a Harbor task: it has no task.toml.")
    try:
        config: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path} is not valid TOML: {exc}") from None
    return config


def _refuse_unsupported(folder: Path, config: dict[str, Any]) -> None:
    if config.get("steps"):
        raise ConfigurationError(
            f"The task {folder.name} has [[steps]]: multi-step Harbor tasks are not supported.",
            hint="Import its steps as tasks of their own.",
        )
    system = str((config.get("environment") or {}).get("os", "linux")).lower()
    if system != "linux":
        raise ConfigurationError(f"The task {folder.name} targets {system}; only linux runs here.")


def _require_files(folder: Path, *, prebuilt: bool) -> None:
    needed = ["instruction.md", "tests/test.sh"]
    if not prebuilt:
        needed.append("environment/Dockerfile")
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing == ["environment/Dockerfile"] and any((folder / "environment").glob("*compose*")):
        raise ConfigurationError(
            f"The task {folder.name} is built with Docker Compose, which is not supported.",
            hint="Give it an environment/Dockerfile, or a docker_image in [environment].",
        )
    if missing:
        raise ConfigurationError(
            f"The task {folder.name} lacks {', '.join(missing)}.",
            hint="A Harbor task has task.toml, instruction.md, environment/Dockerfile (or "
            "[environment] docker_image) and tests/test.sh.",
        )


def _table(config: dict[str, Any], name: str, folder: Path) -> dict[str, Any]:
    table = config.get(name) or {}
    if not isinstance(table, dict):
        raise ConfigurationError(f"[{name}] of {folder}/task.toml is not a table.")
    return table


def _number(table: dict[str, Any], key: str, default: Any, folder: Path) -> Any:
    value = table.get(key, default)
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        if value is not None and value <= 0:
            raise ConfigurationError(f"{key} of {folder}/task.toml must be positive: {value}")
        return None if value is None else float(value)
    raise ConfigurationError(f"{key} of {folder}/task.toml is not a number: {value!r}")


def _memory_mb(environment: dict[str, Any], folder: Path) -> int:
    if environment.get("memory_mb") is not None:
        return int(_number(environment, "memory_mb", None, folder))
    legacy = environment.get("memory")
    if isinstance(legacy, str):
        match = re.fullmatch(r"\s*([0-9.]+)\s*([GMK])\s*", legacy.upper())
        if match is None:
            raise ConfigurationError(f"memory of {folder}/task.toml is not like '2G': {legacy!r}")
        size, unit = float(match.group(1)), match.group(2)
        return int(size * 1024 if unit == "G" else size if unit == "M" else size / 1024)
    return DEFAULT_MEMORY_MB


def _network(phase: dict[str, Any], environment: dict[str, Any], folder: Path) -> bool:
    """Whether the phase may use a network: only when the task says so, for the phase or the
    whole environment."""
    for table in (phase, environment):
        mode = table.get("network_mode")
        if mode is not None:
            if mode not in _KNOWN_MODES:
                raise ConfigurationError(
                    f"network_mode of {folder}/task.toml is {mode!r}; "
                    f"expected one of {', '.join(sorted(_KNOWN_MODES))}."
                )
            return mode in _OPEN
    return environment.get("allow_internet") is True


def _variables(table: Any, folder: Path) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ConfigurationError(f"An env table of {folder}/task.toml is not a table.")
    resolved = {}
    for key, value in table.items():
        match = _TEMPLATE.fullmatch(str(value))
        if match is None:
            resolved[str(key)] = str(value)
        elif (found := named_variable(match.group(1))) is not None:
            resolved[str(key)] = found
        elif match.group(2) is not None:
            resolved[str(key)] = match.group(2)
        else:
            raise ConfigurationError(
                f"The task {folder.name} needs the variable {match.group(1)} (for {key}).",
                hint=f"Set {match.group(1)} where the environment's server runs.",
            )
    return resolved


def _strip_canary(text: str) -> str:
    lines = text.split("\n")
    index = 0
    while index < len(lines) and _CANARY.match(lines[index].strip()):
        index += 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    return "\n".join(lines[index:])
