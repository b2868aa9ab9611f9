"""Progress of a long wait (a Space building, an image building, a server starting): its stage,
the seconds elapsed and the last line of output, for whoever shows it.

Code that waits reports through :func:`report_progress`::

    with report_progress("docker build openenv-echo_env") as progress:
        for line in build_output:
            progress.line(line)
        progress.stage("starting the container")

Each report goes to three places:

- the ``openenv_hub.support.progress`` logger: a new stage at INFO, output lines at DEBUG, each record
  with ``task``, ``stage``, ``elapsed_s`` and ``last_line`` attributes;
- every listener installed with :func:`listening` (the CLI installs one that draws a live
  display at a terminal and prints plain lines otherwise);
- when no listener is installed and stderr is a terminal, a one-line status on stderr, the way
  huggingface_hub shows its progress bars, and off when they are
  (``HF_HUB_DISABLE_PROGRESS_BARS=1``, or ``OPENENV_DISABLE_PROGRESS=1``);
- when no listener is installed and stderr is not a terminal (a script's log, a notebook, CI),
  one line on stderr once a wait has lasted :data:`NOTICE_AFTER_S` seconds, and one when it
  ends, so that a long silence is explained (off as the status line is).

Reports are cheap: call :meth:`Progress.update` from a polling loop as often as it polls; the
status line is redrawn at most a few times a second. A wait that is usually short (a server
answering ``/health``) passes ``show_after_s``: listeners and the status line hear of it only once
it lasted that long (at its next report), and not at all if it ended sooner; the log has it all.

Layer: core.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from openenv_hub.support.settings import DISABLE_PROGRESS_VARIABLE, progress_disabled

__all__ = [
    "DISABLE_ENV",
    "NOTICE_AFTER_S",
    "SHORT_WAIT_S",
    "Progress",
    "ProgressEvent",
    "listening",
    "report_progress",
]

DISABLE_ENV = DISABLE_PROGRESS_VARIABLE
#: ``show_after_s`` of waits that are often short (a server answering ``/health``).
SHORT_WAIT_S = 1.0
#: Outside a terminal, a wait that has lasted this long is told on stderr (see the module).
NOTICE_AFTER_S = 5.0
logger = logging.getLogger("openenv_hub.support.progress")

_listeners: list[Callable[[ProgressEvent], None]] = []
_listeners_lock = threading.Lock()


@dataclass(frozen=True)
class ProgressEvent:
    """One report: which wait, its stage, seconds since it began, the latest output line, and
    whether it is over (``finished``; ``failed`` too when it ended with an error)."""

    task: str
    stage: str
    elapsed_s: float
    last_line: str = ""
    finished: bool = False
    failed: bool = False


@contextmanager
def listening(listener: Callable[[ProgressEvent], None]) -> Iterator[None]:
    """Send every report made in this process (any thread) to ``listener`` inside the block."""
    with _listeners_lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _listeners_lock:
            _listeners.remove(listener)


class Progress:
    """The progress of one wait; made by :func:`report_progress`."""

    def __init__(self, task: str, stage: str, *, show_after_s: float = 0.0) -> None:
        self.task = task
        self._stage = stage
        self._line = ""
        self._finished = False
        self._started = time.monotonic()
        self._show_after_s = show_after_s
        self._shown = show_after_s <= 0
        self._terminal = _StatusLine()
        self._notice = _LongWaitNotice(self, max(NOTICE_AFTER_S, show_after_s))
        self._emit(logging.INFO)

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._started

    def stage(self, stage: str) -> None:
        """Enter ``stage`` (reported at once if it is new)."""
        if stage != self._stage:
            self._stage = stage
            self._emit(logging.INFO)
        else:
            self.update()

    def line(self, text: str) -> None:
        """The latest line of output (a build step, a log line); blank lines are ignored."""
        text = " ".join(text.split())
        if text:
            self._line = text[:500]
            self._emit(logging.DEBUG)

    def update(self) -> None:
        """Nothing new: lets displays show the time that went by."""
        self._emit(None)

    def finish(self, stage: str = "done", *, failed: bool = False) -> None:
        """The wait is over (only the first call counts)."""
        if self._finished:
            return
        self._finished = True
        self._stage = stage
        self._emit(logging.WARNING if failed else logging.INFO, finished=True, failed=failed)
        self._notice.finish(self.event())

    @property
    def finished(self) -> bool:
        return self._finished

    def event(self, *, finished: bool = False, failed: bool = False) -> ProgressEvent:
        """Where the wait is now."""
        return ProgressEvent(
            self.task, self._stage, self.elapsed_s, self._line, finished=finished, failed=failed
        )

    def _emit(self, level: int | None, *, finished: bool = False, failed: bool = False) -> None:
        event = self.event(finished=finished, failed=failed)
        if level is not None and logger.isEnabledFor(level):
            message = f"{event.task}: {event.stage} ({event.elapsed_s:.1f} s)"
            if level == logging.DEBUG:
                message += f": {event.last_line}"
            extra = {"task": event.task, "stage": event.stage, "elapsed_s": event.elapsed_s}
            logger.log(level, message, extra={**extra, "last_line": event.last_line})
        if not self._shown:
            if finished or event.elapsed_s < self._show_after_s:
                return  # a short wait: not worth a line
            self._shown = True
        with _listeners_lock:
            listeners = list(_listeners)
        for listener in listeners:
            listener(event)
        if not listeners:
            self._terminal.show(event)


@contextmanager
def report_progress(
    task: str, stage: str = "starting", *, show_after_s: float = 0.0
) -> Iterator[Progress]:
    """Report the progress of ``task`` inside the block; it finishes when the block ends
    (``failed`` if it raises). Displays hear of it once it lasted ``show_after_s``."""
    progress = Progress(task, stage, show_after_s=show_after_s)
    try:
        yield progress
    except BaseException:
        progress.finish("failed", failed=True)
        raise
    progress.finish()


class _StatusLine:
    """The one-line status on stderr, for the Python API at a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty() and not _disabled()
        self.shown_at = 0.0
        self.width = 0

    def show(self, event: ProgressEvent) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not event.finished and now - self.shown_at < 0.25:
            return
        self.shown_at = now
        text = f"{event.task}: {event.stage} ({event.elapsed_s:.0f} s)"
        if event.last_line and not event.finished:
            text += f"  {event.last_line}"
        text = text[:119]
        sys.stderr.write("\r" + text.ljust(self.width) + ("\n" if event.finished else ""))
        sys.stderr.flush()
        self.width = 0 if event.finished else len(text)


class _LongWaitNotice:
    """Outside a terminal, with no listener: a line on stderr once the wait has lasted
    ``after_s`` (from a timer, since a wait may report nothing for a long time), and a line when
    it ends if the first was written."""

    def __init__(self, progress: Progress, after_s: float) -> None:
        self.progress = progress
        self.told = False
        self.lock = threading.Lock()
        stderr = sys.stderr
        self.timer: threading.Timer | None = None
        if stderr is not None and not stderr.isatty() and not _disabled():
            self.timer = threading.Timer(after_s, self._tell)
            self.timer.daemon = True
            self.timer.start()

    def _tell(self) -> None:
        with _listeners_lock:
            listened = bool(_listeners)
        with self.lock:
            if self.progress.finished or listened:
                return
            event = self.progress.event()
            self.told = True
            _write_line(f"{event.task}: {event.stage} ({event.elapsed_s:.0f} s so far)")

    def finish(self, event: ProgressEvent) -> None:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            if self.told:
                _write_line(f"{event.task}: {event.stage} ({event.elapsed_s:.0f} s)")


def _write_line(text: str) -> None:
    try:
        sys.stderr.write(text[:300] + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass  # stderr closed or gone: nobody to tell


def _disabled() -> bool:
    return progress_disabled()
