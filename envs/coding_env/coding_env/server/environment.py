"""The coding environment: an agent's Python, run in a sandbox that keeps its names between steps.

Agents act with :class:`~coding_env.models.CodeAction` or with the MCP tools ``run_python``,
``reset_context``, ``list_files`` and ``list_tasks``; all of them drive the session's one
interpreter. ``reset(task_id=...)`` loads a task: every later step is graded by the task's
hidden tests, and ``reward`` is ``reward_fn`` of the result (by default 1.0 when every test
passes, else 0.0: see :mod:`coding_env.server.rewards`), always in [0, 1]. An observation says
whether all passed (``passed``), never how many. The tests never enter the session's
interpreter: each grading re-runs the session's cells in a sandbox of its own (see
:mod:`coding_env.server.grader`).
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from pydantic import ValidationError

from coding_env.models import CodeAction, CodeObservation, CodingState, ExecutionError
from coding_env.server.grader import Grader
from coding_env.server.mechanism import detect, memory_bound
from coding_env.server.rewards import (
    REWARD_RANGE,
    GradeResult,
    RewardFn,
    all_passed,
    checked_reward,
)
from coding_env.server.sandbox import Mechanism, Sandbox, SandboxDied, SandboxTimeout
from coding_env.server.settings import SandboxSettings
from coding_env.server.tasks import Task, TaskSet
from openenv_hub import MCPEnvironment, tool
from openenv_hub.types import Action, EnvironmentMetadata, Observation

__all__ = ["CodingEnvironment"]

_LOST = "The interpreter was restarted: names and files from earlier steps are gone."
# The cells a grading re-runs, in all; a session past it is asked to start afresh.
MAX_GRADED_CODE_CHARS = 8_000_000
_UNSAFE = (
    "UNSAFE: no sandbox (unsafe_no_sandbox is set): agent code runs with the server's "
    "privileges, network and files. "
)


class CodingEnvironment(MCPEnvironment):
    """Runs Python in a per-session sandbox (see ``coding_env.server.sandbox``).

    Configure a server's sessions with :meth:`configured`, which returns a subclass to pass to
    ``create_app`` (the session pool creates one instance per session).
    """

    settings: ClassVar[SandboxSettings | None] = None
    tasks: ClassVar[TaskSet | None] = None
    reward_fn: ClassVar[RewardFn] = staticmethod(all_passed)
    reward_range = REWARD_RANGE  # whatever reward_fn is: checked_reward refuses a step outside it

    @classmethod
    def configured(
        cls,
        settings: SandboxSettings | None = None,
        *,
        tasks: TaskSet | None = None,
        reward_fn: RewardFn = all_passed,
    ) -> type[CodingEnvironment]:
        """A subclass whose sessions use these settings, tasks and reward function.

        Raises:
            SandboxUnavailableError: no sandbox can be made here (checked now, once).
        """
        settings = settings or SandboxSettings.from_env()
        detect(settings)
        attributes = {
            "settings": settings,
            "tasks": tasks,
            "reward_fn": staticmethod(reward_fn),
            "__module__": cls.__module__,
        }
        return type(cls.__name__, (cls,), attributes)

    def __init__(self) -> None:
        super().__init__()
        self._settings = self.settings or SandboxSettings.from_env()
        self._launcher = detect(self._settings)
        self._mechanism = self._launcher.mechanism
        self._sandbox = Sandbox(self._settings, self._launcher)
        self._grader = Grader(self._settings, self._launcher)
        self._cells: list[str] = []  # what the session's interpreter ran, for the grader
        self._task: Task | None = None
        self._state = CodingState(sandbox=self._mechanism.value)

    # -- episode ---------------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        **kwargs: Any,
    ) -> CodeObservation:
        """Start a fresh interpreter; with ``task_id``, load that task (see ``list_tasks``)."""
        if task_id is not None and not isinstance(task_id, str):
            raise TypeError(f"task_id must be a string such as 'HumanEval/0', not {task_id!r}")
        task = self._task_set().get(task_id) if task_id else None
        self._sandbox.stop()
        self._task = task
        self._state = CodingState(
            episode_id=episode_id or self._state.episode_id,
            task_id=task_id,
            sandbox=self._mechanism.value,
        )
        self._start_interpreter()
        if task is None:
            return CodeObservation(message="A fresh interpreter is ready.", reward=0.0)
        return CodeObservation(
            message=f"Task {task.task_id}: define {task.entry_point}() as the prompt asks.",
            task_id=task.task_id,
            prompt=task.prompt,
            tests_total=task.num_tests,
            reward=0.0,
        )

    def _start_interpreter(self) -> None:
        """A fresh interpreter, with no cells; with a task, the next grader starts too."""
        self._sandbox.stop()
        self._cells = []
        self._sandbox.start()
        if self._task is not None:
            self._grader.prepare()

    @property
    def state(self) -> CodingState:
        return self._state

    def state_digest(self) -> str | None:
        """A hash of the task and of the cells the interpreter ran (its state follows from
        them), with the context's restarts."""
        facts = (self._state.task_id, self._cells, self._state.context_restarts)
        return hashlib.blake2b(repr(facts).encode(), digest_size=12).hexdigest()

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        if not isinstance(action, CodeAction):
            raise TypeError(
                f"The coding environment accepts CodeAction and MCP tool calls, "
                f"not {type(action).__name__}"
            )
        return self.execute(action.code, timeout_s=timeout_s)

    def close(self) -> None:
        self._grader.close()
        self._sandbox.stop()

    # -- running code ----------------------------------------------------------------------

    def execute(self, code: str, *, timeout_s: float | None = None) -> CodeObservation:
        """Run ``code`` in the session's interpreter, then grade it when a task is loaded."""
        wall_s = min(timeout_s or self._settings.step_timeout_s, self._settings.step_timeout_s)
        request = {
            "op": "run",
            "code": code,
            "cpu_time_s": self._settings.cpu_time_s,
            "max_output_bytes": self._settings.max_output_bytes,
        }
        try:
            self._ensure_started()
            killed_before = self._sandbox.oom_kills()
            reply = self._sandbox.request(request, wall_s)
        except SandboxDied as exc:
            observation = self._lost(exc, wall_s)
        else:
            try:
                observation = _observation(reply, self._settings.max_output_bytes)
            except ValueError:
                self._sandbox.stop()
                died = SandboxDied("the interpreter sent a malformed reply; it was killed")
                observation = self._lost(died, wall_s)
            else:
                self._cells.append(code)
            if self._sandbox.oom_kills() > killed_before:
                observation.memory_exceeded = True
                observation.message = (
                    f"A process of the step was killed: the sandbox reached its memory bound "
                    f"({self._settings.memory_mb} MB). The interpreter is still running."
                )
        if self._task is not None:
            self._grade(observation)
        return observation

    def _ensure_started(self) -> None:
        if not self._sandbox.alive:
            self._start_interpreter()

    def _lost(self, exc: SandboxDied, wall_s: float) -> CodeObservation:
        self._sandbox.stop()
        self._state.context_restarts += 1
        timed_out = isinstance(exc, SandboxTimeout) or exc.signal_number == 24  # SIGXCPU
        if isinstance(exc, SandboxTimeout):
            reason = f"The step ran out of its {wall_s:g} s of wall time."
        elif exc.memory_exceeded:
            reason = (
                f"The step reached the sandbox's memory bound ({self._settings.memory_mb} MB, "
                "shared memory and files in /workspace, /tmp and /dev/shm included)."
            )
        elif timed_out:
            reason = f"The step used up its {self._settings.cpu_time_s:g} s of CPU time."
        else:
            reason = f"The step ended the interpreter ({exc})."
        return CodeObservation(
            exit_code=-(exc.signal_number or 9),
            error=ExecutionError(type="SandboxLimitExceeded", message=f"{reason} {_LOST}"),
            duration_s=wall_s if isinstance(exc, SandboxTimeout) else 0.0,
            timed_out=timed_out,
            memory_exceeded=exc.memory_exceeded,
            context_lost=True,
            message=f"{reason} {_LOST}",
        )

    def _grade(self, observation: CodeObservation) -> None:
        task = self._task
        assert task is not None
        observation.task_id = task.task_id
        observation.tests_total = task.num_tests
        too_long = sum(map(len, self._cells)) > MAX_GRADED_CODE_CHARS
        if observation.context_lost or too_long:
            result = GradeResult(task.task_id, 0, task.num_tests, timed_out=observation.timed_out)
        else:
            result = self._grader.grade(task, self._cells)
        observation.reward = checked_reward(self.reward_fn, result)
        observation.passed = all_passed(result) == 1.0
        observation.done = observation.passed
        if result.timed_out:
            observation.timed_out = True
            observation.message = (
                f"The hidden tests ran out of their {self._settings.grading_timeout_s:g} s; "
                "reward 0. Does the function loop forever on some input?"
            )
        elif too_long:
            observation.message = (
                f"The session has run more than {MAX_GRADED_CODE_CHARS} characters of code, more "
                "than a grading re-runs: call reset_context() and define the function again."
            )
        elif result.missing_entry_point:
            observation.message = f"Define {task.entry_point}() to be graded."
        elif result.error:
            observation.message = "The grader could not run the tests; reward 0."

    # -- MCP tools -------------------------------------------------------------------------

    @tool
    def run_python(self, code: str) -> dict[str, Any]:
        """Run Python code in this session's sandboxed interpreter (names persist until reset).

        Args:
            code: Python source; a trailing expression's repr is returned as ``result``.

        Returns:
            stdout, stderr, exit_code, result, error, duration_s and the limit flags; with a
            task loaded, also passed (every hidden test passed), tests_total and reward.
        """
        return self.execute(code).model_dump(mode="json", exclude={"metadata"})

    @tool
    def reset_context(self) -> dict[str, Any]:
        """Forget every name and file: start a fresh interpreter (the task stays loaded)."""
        self._state.context_restarts += 1
        self._start_interpreter()
        return {"context_lost": True, "message": "A fresh interpreter is ready."}

    @tool
    def list_files(self) -> dict[str, Any]:
        """List the files in the session's working directory (/workspace) with their sizes."""
        try:
            self._ensure_started()
            reply = self._sandbox.request({"op": "list_files"}, self._settings.step_timeout_s)
        except SandboxDied as exc:
            self._sandbox.stop()
            return {"files": [], "truncated": False, "context_lost": True, "message": str(exc)}
        files = reply.get("files")
        if not isinstance(files, list) or not all(_is_file_entry(f) for f in files):
            return {
                "files": [],
                "truncated": False,
                "message": "The interpreter's list was malformed.",
            }
        return {"files": files, "truncated": reply.get("truncated") is True}

    @tool(name="list_tasks")
    def list_task_ids(self, offset: int = 0, limit: int = 200) -> dict[str, Any]:
        """List graded tasks; load one with reset(task_id=...).

        Args:
            offset: Index of the first task to list.
            limit: Most tasks to list.
        """
        tasks = list(self._task_set())
        chosen = tasks[max(offset, 0) : max(offset, 0) + max(limit, 0)]
        return {
            "source": self._task_set().source,
            "total": len(tasks),
            "tasks": [{"task_id": t.task_id, "entry_point": t.entry_point} for t in chosen],
        }

    # -- the task API (/{env}/tasks ...): prompts only, never the tests ----------------------

    def list_splits(self) -> list[str]:
        return ["test"]

    def num_tasks(self, split: str) -> int:
        return len(self._task_set())

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [_public(task) for task in self._task_set()]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        tasks = list(self._task_set())
        if not 0 <= index < len(tasks):
            raise IndexError(index)
        return _public(tasks[index])

    def _task_set(self) -> TaskSet:
        cls = type(self)
        if cls.tasks is None:
            cls.tasks = TaskSet.humaneval()
        return cls.tasks

    def get_metadata(self) -> EnvironmentMetadata:
        unsafe = _UNSAFE if self._mechanism is Mechanism.NONE else ""
        bound = memory_bound(self._launcher, self._settings)
        return EnvironmentMetadata(
            name="coding_env",
            description=f"{unsafe}{bound}. Runs Python in a sandbox ({self._mechanism.value}), "
            "with persistent context and graded tasks, rewards in [0, 1].",
            version="0.1.0",
        )


def _public(task: Task) -> dict[str, Any]:
    return {"task_id": task.task_id, "prompt": task.prompt, "entry_point": task.entry_point}


def _is_file_entry(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"path", "size"}
        and isinstance(entry["path"], str)
        and type(entry["size"]) is int
    )


def _field(reply: dict[str, Any], name: str, kinds: tuple[type, ...], default: Any) -> Any:
    """A field of the interpreter's reply, which the agent's code may have written itself."""
    value = reply.get(name, default)
    if type(value) not in kinds:
        raise ValueError(f"the interpreter's reply has a malformed {name!r}")
    return value


def _observation(reply: dict[str, Any], max_output_bytes: int) -> CodeObservation:
    """The observation of a ``run`` reply.

    Raises:
        ValueError: a field has the wrong type.
    """
    error = _field(reply, "error", (dict, type(None)), None)
    truncated = _field(reply, "output_truncated", (bool,), False)
    memory_exceeded = _field(reply, "memory_exceeded", (bool,), False)
    message = ""
    if memory_exceeded:
        message = "The step ran out of memory (MemoryError); the interpreter is still running."
    elif truncated:
        message = f"Output beyond {max_output_bytes} bytes per stream was dropped."
    try:
        return CodeObservation(
            stdout=_field(reply, "stdout", (str,), ""),
            stderr=_field(reply, "stderr", (str,), ""),
            exit_code=_field(reply, "exit_code", (int,), 0),
            result=_field(reply, "value", (str, type(None)), None),
            error=ExecutionError.model_validate(error, strict=True) if error else None,
            duration_s=float(_field(reply, "duration_s", (int, float), 0.0)),
            memory_exceeded=memory_exceeded,
            output_truncated=truncated,
            message=message,
        )
    except ValidationError as exc:
        raise ValueError(f"the interpreter's reply is malformed: {exc}") from None
