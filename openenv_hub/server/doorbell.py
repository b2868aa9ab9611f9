"""A file descriptor an event loop watches, rung from another thread without holding the GIL.

``loop.call_soon_threadsafe`` wakes a loop by writing to its wake-up descriptor while the
calling thread still holds the GIL, so a loop that wakes at once (an idle core answers in
microseconds) finds the GIL taken and waits for the caller to let go of it: one more sleep and
wake-up on each side, at every hand-back from a session's thread. :class:`Doorbell` writes with
``os.eventfd_write`` (``os.write`` to a pipe where there is no eventfd), which lets go of the
GIL around the write, so the woken loop takes it at once; the thread that rang takes it back
once the loop lets go, off the loop's path. Measured on the typed server's stateless
``POST /step`` and ``/ws`` step: 7 to 9% less CPU a call, and about one futex call and 0.7
context switches fewer a step (``benchmarks/README.md``).

Layer: server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable

__all__ = ["Doorbell", "close_descriptors"]


class Doorbell:
    """Calls ``on_ring`` on ``loop`` after :meth:`ring` (from any thread); rings that come
    before the loop answers are answered once.

    Use :meth:`open`, which returns ``None`` where the loop cannot watch a descriptor (the
    proactor loop of Windows): the caller then falls back to ``call_soon_threadsafe``.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_ring: Callable[[], None], fds: tuple[int, int]
    ) -> None:
        self.loop = loop
        self._on_ring = on_ring
        self._read_fd, self._write_fd = fds
        self._lock = threading.Lock()  # no ring writes to a descriptor number closed meanwhile
        # Closed exactly once: by close() on the loop, or when nothing holds the doorbell any
        # more (its loop closed without running close()).
        self._close_fds = weakref.finalize(self, close_descriptors, set(fds))
        loop.add_reader(self._read_fd, self._rung)

    @classmethod
    def open(cls, loop: asyncio.AbstractEventLoop, on_ring: Callable[[], None]) -> Doorbell | None:
        """A doorbell for ``loop`` (call on its thread), or ``None`` where it cannot have one."""
        if sys.platform == "win32":  # its loops watch sockets only
            return None
        try:
            fds = _descriptors()
        except OSError:  # out of file descriptors: the slower wake-up still works
            return None
        try:
            return cls(loop, on_ring, fds)
        except (NotImplementedError, OSError, ValueError):
            close_descriptors(set(fds))
            return None

    def ring(self) -> None:
        """Wake the loop (any thread); the GIL is let go during the write."""
        # BlockingIOError: the pipe is full of rings not yet answered; one more adds nothing.
        with self._lock, contextlib.suppress(BlockingIOError):
            if not self._close_fds.alive:
                return
            if self._read_fd == self._write_fd:
                os.eventfd_write(self._write_fd, 1)
            else:
                os.write(self._write_fd, b"\0")

    def _rung(self) -> None:
        with contextlib.suppress(OSError):  # BlockingIOError: read already
            os.read(self._read_fd, 4096)  # an eventfd's counter, or the pipe's bytes
        self._on_ring()

    def close_soon(self) -> None:
        """Stop watching and close the descriptors (any thread: done on the loop, where the
        ring of a call that returned just before is still answered first)."""
        try:
            self.loop.call_soon_threadsafe(self._close_on_loop)
        except RuntimeError:  # the loop closed: nothing watches the descriptors any more
            with self._lock:
                self._close_fds()

    def _close_on_loop(self) -> None:
        with self._lock:
            if not self._close_fds.alive:
                return
            self.loop.remove_reader(self._read_fd)
            self._close_fds()
        self._on_ring()


def _descriptors() -> tuple[int, int]:
    """(read end, write end): one eventfd for both on Linux, a pipe elsewhere."""
    if hasattr(os, "eventfd"):
        fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        return fd, fd
    read_fd, write_fd = os.pipe()
    for fd in (read_fd, write_fd):
        os.set_blocking(fd, False)
    return read_fd, write_fd


def close_descriptors(fds: Iterable[int]) -> None:
    """Close each of ``fds``, those already closed skipped."""
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
