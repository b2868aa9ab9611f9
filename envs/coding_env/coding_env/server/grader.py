"""Grading where the agent cannot reach: a fresh sandbox per grading, and a reply read defensively.

The session's own interpreter never sees a task's tests and is never asked for a result: the
agent's code runs there, and could answer anything. Each grading gets a sandbox of its own
(same limits, its own namespaces, cgroup, tmpfs and user), which re-runs the session's cells in
a process that holds no tests and is questioned by a judge that never runs the agent's code
(see ``judge.py``). From its reply the server takes only a count, clamped to the task's number
of tests, and flags (the entry point missing, the task's own code failing); ``total`` is the
task's. A grading is bounded by ``grading_timeout_s`` of wall time.

Starting a sandbox takes about a tenth of a second, so the next grading's sandbox is started in
the background when a task is loaded and after each grading: it has run nothing but its own
start-up (and forked the candidate process, which waits for the cells) until it is used.
The background starts run on a few threads that live as long as the server: bubblewrap's
``--die-with-parent`` ends a sandbox when the *thread* that started it ends.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from coding_env.server.rewards import GradeResult
from coding_env.server.sandbox import (
    Launcher,
    Role,
    Sandbox,
    SandboxDied,
    SandboxError,
    SandboxTimeout,
)
from coding_env.server.settings import SandboxSettings
from coding_env.server.tasks import Task

__all__ = ["Grader"]

_STARTERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="grader-start")


class Grader:
    """Grades one session's cells against its task, each time in a fresh sandbox.

    Args:
        settings: The limits (the same as the session's).
        launcher: From :func:`coding_env.server.mechanism.detect`.
    """

    def __init__(self, settings: SandboxSettings, launcher: Launcher) -> None:
        self.settings = settings
        self.launcher = launcher
        self._lock = threading.Lock()
        self._spare: Future[Sandbox] | None = None
        self._closed = False

    def grade(self, task: Task, cells: list[str]) -> GradeResult:
        """Run ``task``'s hidden tests against what ``cells`` define."""
        request = task.grading_request(self.settings.grading_timeout_s)
        request["cells"] = cells
        try:
            sandbox = self._take()
        except SandboxError:
            return GradeResult(task.task_id, 0, task.num_tests, error=True)
        try:
            reply = sandbox.request(request, self.settings.grading_timeout_s)
        except SandboxTimeout:
            return GradeResult(task.task_id, 0, task.num_tests, timed_out=True)
        except SandboxDied as exc:
            timed_out = exc.signal_number == 24  # SIGXCPU
            return GradeResult(task.task_id, 0, task.num_tests, timed_out=timed_out, error=True)
        except SandboxError:
            return GradeResult(task.task_id, 0, task.num_tests, error=True)
        finally:
            threading.Thread(target=sandbox.stop, daemon=True).start()
            self.prepare()  # after the grading, so that it does not compete with it for CPU
        return result_from_reply(task, reply)

    def prepare(self) -> None:
        """Start the next grading's sandbox now, in the background (a task was loaded)."""
        with self._lock:
            if self._spare is None and not self._closed:
                self._spare = _start_in_background(self.settings, self.launcher)

    def close(self) -> None:
        """Stop the spare sandbox; later gradings start none in the background."""
        with self._lock:
            self._closed, spare, self._spare = True, self._spare, None
        if spare is not None:
            _stop_when_started(spare)

    def _take(self) -> Sandbox:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is None:
            sandbox = Sandbox(self.settings, self.launcher, Role.GRADER)
            sandbox.start()
            return sandbox
        exception = spare.exception(timeout=self.settings.start_timeout_s + 5)
        if exception is not None:
            raise SandboxError(str(exception))
        return spare.result()


def result_from_reply(task: Task, reply: dict[str, object]) -> GradeResult:
    """The grade, trusting the reply for nothing but a count that is clamped to the task's."""
    passed = reply.get("passed")
    count = passed if type(passed) is int else 0
    ended = reply.get("ended")
    return GradeResult(
        task.task_id,
        min(max(count, 0), task.num_tests),
        task.num_tests,
        timed_out=ended == "SIGXCPU",
        missing_entry_point=reply.get("missing") is True,
        error=reply.get("task_error") is True,
    )


def _start_in_background(settings: SandboxSettings, launcher: Launcher) -> Future[Sandbox]:
    def start() -> Sandbox:
        sandbox = Sandbox(settings, launcher, Role.GRADER)
        sandbox.start()
        return sandbox

    return _STARTERS.submit(start)


def _stop_when_started(spare: Future[Sandbox]) -> None:
    def stop(done: Future[Sandbox]) -> None:
        if done.exception() is None:
            done.result().stop()

    spare.add_done_callback(stop)
