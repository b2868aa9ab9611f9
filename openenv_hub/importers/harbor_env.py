"""A Harbor task set served as an environment: each episode is one task, in a container of its
own, graded by the task's hidden test after the episode.

``reset(task_id=NAME)`` builds the task's image from ``environment/Dockerfile`` (once per
content of ``environment/``; or takes its ``docker_image``) and starts a container of it
(:class:`~openenv_hub.runtimes.sandbox.DockerSandbox`): no network unless the task allows it,
its memory and CPUs, and the agent's time from ``[agent] timeout_sec``. The agent acts with two
tools:

- ``bash(command)``: run a command in the task's container (bounded by the time left);
- ``submit()``: end the episode and be graded.

Grading (:mod:`openenv_hub.importers.harbor_grading`) runs after the episode, driven from the
host: the agent's container is saved as an image and removed, then a new container of that
image, with the verifier's network, runs ``tests/test.sh`` as its only process, with the task's
``tests/`` at ``/tests`` and ``/logs/verifier`` both fresh (what the agent left at those paths
is hidden); the time bound is the host's. The test writes ``/logs/verifier/reward.txt`` (a
number) or ``reward.json`` (named numbers; ``reward`` or their mean is the reward), read only
when it is one regular file. Neither ``tests/`` nor ``solution/`` ever enters the agent's
container or an observation. The reward is kept within :attr:`HarborEnvironment.reward_range`
(0 to 1 unless configured), flagged when the test wrote one outside it; a test that wrote none,
failed to run, ran out of time, or whose grading the agent's files broke gives the lowest, with
``reward_error`` saying why.

What grading cannot take from the agent: as in Harbor, ``test.sh`` runs on the agent's final
file system, so a test relying on a program the agent can replace (its interpreter, ``python3``,
``grep``) can be fooled. Only a task whose test depends on nothing the agent could change is
graded beyond the agent's reach.

Layer: client.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

from openenv_hub.docker import build_context, docker_client, sdk_errors
from openenv_hub.errors import ConfigurationError
from openenv_hub.importers.harbor_grading import REWARD_FILES, GradingRun, run_test
from openenv_hub.importers.harbor_tasks import HarborTask, environment_digest, read_task_set
from openenv_hub.model.tools import MCPEnvironment, tool
from openenv_hub.runtimes.sandbox import DockerSandbox, RunResult, SandboxLimits
from openenv_hub.support.settings import base_image, build_args
from openenv_hub.types import Action, EnvironmentMetadata, Observation

__all__ = ["HarborEnvironment", "HarborObservation", "task_image"]

#: The longest one command may run when the task does not bound the agent's time.
DEFAULT_COMMAND_TIMEOUT_S = 600.0


class HarborObservation(Observation):
    """What the agent sees when a task starts."""

    task_id: str = ""
    instruction: str = ""
    time_limit_s: float | None = None
    message: str = ""


class HarborEnvironment(MCPEnvironment):
    """One Harbor task per episode; configure the task set with :meth:`configured`."""

    tasks: ClassVar[dict[str, HarborTask]] = {}
    reward_range: tuple[float, float] | None = (0.0, 1.0)
    command_timeout_s: ClassVar[float] = DEFAULT_COMMAND_TIMEOUT_S

    @classmethod
    def configured(
        cls,
        tasks_dir: Path | str,
        *,
        reward_range: tuple[float, float] = (0.0, 1.0),
        command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S,
    ) -> type[HarborEnvironment]:
        """A subclass serving the tasks of ``tasks_dir`` (read now, once)."""
        found = {task.name: task for task in read_task_set(Path(tasks_dir))}
        attributes = {
            "tasks": found,
            "reward_range": reward_range,
            "command_timeout_s": command_timeout_s,
            "__module__": cls.__module__,
        }
        return type(cls.__name__, (cls,), attributes)

    @classmethod
    def longest_step_s(cls) -> float:
        """The longest a step may take: a build, a command, or a grading (the server's bound
        on a step is set above it)."""
        longest = [cls.command_timeout_s]
        for task in cls.tasks.values():
            longest += [task.build_timeout_s + 60, task.verifier_timeout_s + 120]
        return max(longest) + 60

    def __init__(self) -> None:
        super().__init__()
        self._task: HarborTask | None = None
        self._box: DockerSandbox | None = None
        self._deadline = math.inf
        self._ended = False
        self._graded = False

    # -- episode ---------------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        **kwargs: Any,
    ) -> HarborObservation:
        """Start the task ``task_id`` (default: the first) in a container of its own."""
        super().reset(seed=seed, episode_id=episode_id)
        self._stop_box()
        task = self._chosen(task_id)
        box = DockerSandbox.start(
            task_image(task),
            limits=SandboxLimits(
                memory_mb=task.memory_mb, cpus=task.cpus, network=task.agent_network
            ),
            workdir=task.workdir,
            env=task.env,
            runtime="harbor",
            extra_labels={"openenv-hub.task": task.name},
        )
        self._task, self._box, self._ended, self._graded = task, box, False, False
        limit = task.agent_timeout_s
        self._deadline = time.monotonic() + limit if limit else math.inf
        return HarborObservation(
            task_id=task.name,
            instruction=task.instruction,
            time_limit_s=limit,
            message="Run shell commands with the bash tool; call submit when the task is done.",
            reward=0.0,
        )

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        observation = super().step(action, timeout_s=timeout_s, **kwargs)
        if self._ended and not self._graded:
            self._graded = True
            reward, details = self._grade()
            observation.reward, observation.done = reward, True
            observation.metadata.update(details)
        elif not self._graded:
            observation.reward = 0.0
        return observation

    def close(self) -> None:
        self._stop_box()

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="harbor",
            description=f"{len(self.tasks)} Harbor tasks, each in a container of its own",
            version="1.0.0",
        )

    # -- tasks (the task routes) -----------------------------------------------------------

    def list_splits(self) -> list[str]:
        return ["test"]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        if split != "test":
            raise IndexError(split)
        return [{"key": name} for name in self.tasks]

    def num_tasks(self, split: str) -> int:
        return len(self.list_tasks(split))

    # -- tools -----------------------------------------------------------------------------

    @tool
    def bash(self, command: str) -> str:
        """Run a shell command in the task's container; returns what it printed and its exit
        code. Each command starts in the task's working directory; files persist."""
        box = self._running_box()
        left = self._deadline - time.monotonic()
        if left <= 0:
            self._ended = True
            return "The agent's time for this task is up; the episode ends and is graded."
        done = box.run(command, timeout_s=min(left, self.command_timeout_s))
        return _shown(done)

    @tool
    def submit(self) -> str:
        """End the episode: the task's hidden test grades the container as it is now."""
        self._running_box()
        self._ended = True
        return "Submitted; the task's test is grading the result."

    # -- grading ---------------------------------------------------------------------------

    def _grade(self) -> tuple[float, dict[str, Any]]:
        task, box = self._task, self._box
        assert task is not None and box is not None
        low, high = self.reward_range or (0.0, 1.0)
        snapshot = box.snapshot(f"openenv-harbor-graded-{uuid.uuid4().hex[:12]}")
        self._stop_box()
        try:
            outcome = run_test(task, snapshot)
        finally:
            with contextlib.suppress(*sdk_errors()):
                docker_client().images.remove(snapshot, force=True)
        raw, details = _reward_of(outcome)
        reward = min(max(raw, low), high) if raw is not None else low
        if raw is not None and raw != reward:
            details["reward_out_of_range"] = True
            details["reward_as_written"] = raw
        return reward, details

    # -- helpers ---------------------------------------------------------------------------

    def _chosen(self, task_id: str | None) -> HarborTask:
        if not self.tasks:
            raise ConfigurationError("This Harbor environment has no tasks.")
        if task_id is None:
            return next(iter(self.tasks.values()))
        if task_id not in self.tasks:
            raise ValueError(
                f"No task {task_id!r}; the tasks are {', '.join(sorted(self.tasks)[:20])}"
            )
        return self.tasks[task_id]

    def _running_box(self) -> DockerSandbox:
        if self._box is None or self._ended:
            raise RuntimeError("The episode has ended: reset to start a task.")
        return self._box

    def _stop_box(self) -> None:
        box, self._box = self._box, None
        if box is not None:
            box.stop()


def task_image(task: HarborTask) -> str:
    """The image of ``task``: its ``docker_image``, or the one built from ``environment/``
    (built now unless the engine has it), named after the folder's content."""
    if task.docker_image:
        return task.docker_image
    slug = "".join(c if c.isalnum() else "-" for c in task.name.lower()).strip("-")[:40]
    tag = f"openenv-harbor-{slug or 'task'}:{environment_digest(task)}"
    if not docker_client().images.list(name=tag):
        build_context(
            task.path / "environment",
            tag,
            build_args=_build_args(),
            timeout_s=task.build_timeout_s,
        )
    return tag


def _build_args() -> list[str]:
    """``BASE_IMAGE`` from ``$OPENENV_BASE_IMAGE`` and ``$OPENENV_BUILD_ARGS``, as the Docker
    runtime builds environments (for engines that reach no registry)."""
    base = base_image()
    return ([f"BASE_IMAGE={base}"] if base else []) + build_args()


def _reward_of(outcome: GradingRun) -> tuple[float | None, dict[str, Any]]:
    """The reward the test wrote (None: none could be read) and what to say about it."""
    details: dict[str, Any] = {
        "test_exit_code": outcome.exit_code,
        "test_timed_out": outcome.timed_out,
    }
    if outcome.error is not None:
        details["reward_error"] = outcome.error
        return None, details
    if outcome.timed_out:
        details["reward_error"] = "the test ran out of time and was killed"
        return None, details
    as_json, as_text = (outcome.files.get(path) for path in REWARD_FILES)
    try:
        if as_json is not None:
            values = json.loads(as_json)
            if not isinstance(values, dict):
                values = {"reward": values}
            breakdown = {str(k): _finite(v) for k, v in values.items()}
            details["reward_breakdown"] = breakdown
            if "reward" in breakdown:
                return breakdown["reward"], details
            return sum(breakdown.values()) / len(breakdown), details
        if as_text is not None:
            return _finite(float(as_text.decode().strip())), details
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        details["reward_error"] = f"the reward file is not a finite number: {exc}"[:300]
        return None, details
    details["reward_error"] = "the test wrote no reward file"
    return None, details


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not finite")
    return number


def _shown(done: RunResult) -> str:
    """A command's result as the agent reads it."""
    text = done.output
    if done.truncated:
        text += "\n[output cut: the command printed more than was kept]"
    if done.timed_out:
        return text + "\n[the command ran out of time and was killed]"
    return text + f"\n[exit code {done.exit_code}]"
