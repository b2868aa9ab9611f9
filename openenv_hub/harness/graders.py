"""Grading a harness's work folder after a turn, where the harness cannot reach.

A grader is anything with ``grade(workspace) -> Grade`` (:class:`WorkspaceGrader`), such as
:class:`TestScriptGrader`, which runs a task's ``tests/test.sh`` in a sandbox of its own, made
after the harness's turn ended and every process of the harness was killed:

- the work folder is there read-only at ``/workspace``, the task's tests at ``/tests`` (they
  exist in no sandbox the harness ran in), and ``/logs/verifier`` is a fresh folder for the
  test's reward;
- the reward is the number the test wrote to ``/logs/verifier/reward.txt`` (Harbor's rule),
  else 1.0 when ``test.sh`` exits 0 and 0.0 otherwise; a reward file that holds no finite
  number in ``[0, 1]`` (``nan``, ``inf``, ``5``, a word) is a grading error: reward 0, not
  passed, and the error named in :attr:`Grade.error` (the environment's observation carries it
  in ``metadata["reward_error"]``), never the exit code's reward or a clamped number;
- it has no network at all (no relay), its own cgroup, user and limits, and a time bound.

A test that runs the harness's code (imports its module) gives that code the grading
sandbox's ``/logs/verifier``: such a test must not trust what it finds there. The coding
environment's grader never runs the candidate's code where it reads the result.

Layer: client.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from openenv_hub.harness.installs import read_regular_file
from openenv_hub.harness.launch import find_launcher
from openenv_hub.harness.sandbox import WORKSPACE, HarnessLimits, HarnessSandbox
from openenv_hub.sandbox.bwrap import Launcher

__all__ = ["Grade", "TestScriptGrader", "WorkspaceGrader"]

_TESTS = "/tests"


@dataclass(frozen=True)
class Grade:
    """A grading's result: ``reward`` in [0, 1], whether the task counts as solved, a short
    note for people (never the hidden tests' content), and ``error`` when the grading itself
    failed (the reward is then the bottom of the range)."""

    reward: float
    passed: bool
    detail: str = ""
    error: str | None = None


class WorkspaceGrader(Protocol):
    """Grades a work folder (on the host) where the harness cannot reach."""

    def grade(self, workspace: Path) -> Grade: ...


class TestScriptGrader:
    """Runs ``tests/test.sh`` of a task against the work folder, in a sandbox of its own.

    Args:
        tests: The task's tests folder (holding ``test.sh``).
        timeout_s: The test's wall time.
        launcher: How sandboxes are made (default: found on this machine).
        limits: The grading sandbox's bounds.
    """

    __test__ = False  # a grader, not a pytest class

    def __init__(
        self,
        tests: Path | str,
        *,
        timeout_s: float = 120.0,
        launcher: Launcher | None = None,
        limits: HarnessLimits | None = None,
    ) -> None:
        self.tests = Path(tests).resolve()
        if not (self.tests / "test.sh").is_file():
            raise FileNotFoundError(f"{self.tests} has no test.sh")
        self.timeout_s = timeout_s
        self.launcher = launcher
        self.limits = limits or HarnessLimits(memory_mb=1024, max_processes=128)

    def grade(self, workspace: Path) -> Grade:
        scratch = Path(tempfile.mkdtemp(prefix="openenv-grading-"))
        (scratch / "logs" / "verifier").mkdir(parents=True)
        sandbox = HarnessSandbox(
            self.launcher or find_launcher(),
            workspace=workspace,
            home=scratch / "home",
            read_only=[],
            relays=[],
            limits=self.limits,
            workspace_writable=False,
            mounts={_TESTS: str(self.tests)},
            writable_mounts={"/logs": str(scratch / "logs")},
        )
        try:
            sandbox.start()
            result = sandbox.run(
                ["/bin/bash", f"{_TESTS}/test.sh"], cwd=WORKSPACE, timeout_s=self.timeout_s
            )
            written = read_regular_file(scratch / "logs" / "verifier" / "reward.txt", 64)
        finally:
            sandbox.stop()
            shutil.rmtree(scratch, ignore_errors=True)
        if result.timed_out:
            return Grade(0.0, False, f"the test ran out of its {self.timeout_s:g} s")
        exited = f"test.sh exited {result.exit_code}"
        if written is None:
            reward = 1.0 if result.exit_code == 0 else 0.0
            return Grade(reward, reward >= 1.0, f"{exited}; reward {reward:g}")
        number = _reward(written)
        if number is None:
            error = f"reward.txt holds {written.strip()[:40]!r}, not a number in [0, 1]"
            return Grade(0.0, False, f"{exited}; {error}", error=error)
        return Grade(number, number >= 1.0, f"{exited}; reward {number:g}")


def _reward(text: str) -> float | None:
    """The number ``text`` holds, if it is a finite one in [0, 1]."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and 0.0 <= value <= 1.0 else None
