"""Tasks for a harness: what it is asked, the files its work folder starts with, and the hidden
tests that grade it.

A task is a folder (the layout of a Harbor task, less its Docker image)::

    write-hello/
      instruction.md     what the harness is asked (the first turn's message)
      workspace/         the work folder's first files (optional)
      tests/test.sh      the hidden test: it never enters the harness's sandbox (optional)

:func:`read_tasks` reads a folder of such folders.

Layer: client.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from openenv_hub.errors import ConfigurationError

__all__ = ["HarnessTask", "read_task", "read_tasks"]

_MAX_INSTRUCTION_BYTES = 256 * 1024


@dataclass(frozen=True)
class HarnessTask:
    """One task.

    Attributes:
        task_id: Its name (the folder's).
        instruction: What the harness is asked.
        files: The folder copied into the work folder at reset (None: it starts empty).
        tests: The folder of its hidden test (``test.sh``), or None.
    """

    task_id: str
    instruction: str
    files: Path | None = None
    tests: Path | None = None

    def copy_files(self, workspace: Path) -> None:
        """Copy :attr:`files` into ``workspace`` (links are copied as links, never followed)."""
        if self.files is not None:
            shutil.copytree(self.files, workspace, symlinks=True, dirs_exist_ok=True)


def read_task(folder: Path | str) -> HarnessTask:
    """The task in ``folder``.

    Raises:
        ConfigurationError: no ``instruction.md``, or one too large.
    """
    folder = Path(folder)
    instruction = folder / "instruction.md"
    if not instruction.is_file():
        raise ConfigurationError(f"{folder} is not a harness task: it has no instruction.md")
    if os.path.getsize(instruction) > _MAX_INSTRUCTION_BYTES:
        raise ConfigurationError(f"{instruction} is larger than {_MAX_INSTRUCTION_BYTES} bytes")
    files, tests = folder / "workspace", folder / "tests"
    return HarnessTask(
        task_id=folder.name,
        instruction=instruction.read_text().strip(),
        files=files if files.is_dir() else None,
        tests=tests if (tests / "test.sh").is_file() else None,
    )


def read_tasks(root: Path | str) -> dict[str, HarnessTask]:
    """Every task folder under ``root``, by name.

    Raises:
        ConfigurationError: ``root`` holds no task.
    """
    root = Path(root)
    found = {
        p.name: read_task(p) for p in sorted(root.iterdir()) if (p / "instruction.md").is_file()
    }
    if not found:
        raise ConfigurationError(f"{root} holds no task folder (one with an instruction.md)")
    return found
