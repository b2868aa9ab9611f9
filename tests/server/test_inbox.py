"""The calls waiting for a session thread: first in, first out; the thread sleeps on a pipe that
is written only while it sleeps, and gives the pipe back when it is done."""

from __future__ import annotations

import os
import select
import threading
import time
from pathlib import Path

import pytest

from openenv_hub.server.inbox import Inbox


def readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


def test_items_come_out_in_order_and_a_sleeping_reader_wakes_for_the_next() -> None:
    inbox = Inbox()
    got: list[int] = []
    done = threading.Event()

    def read() -> None:
        while (item := inbox.get()) is not None:
            got.append(item)
        done.set()

    inbox.put_all(range(100))
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(100, 200):
            inbox.put(i)
        inbox.put(None)
        assert done.wait(10)
    finally:
        inbox.put(None)
        reader.join(10)
    assert got == list(range(200))


def test_the_pipe_is_written_only_while_the_reader_sleeps() -> None:
    """A reader that is busy costs no write a call; one that sleeps is woken by one byte."""
    inbox = Inbox()
    inbox.put_all(range(1000))
    assert not readable(inbox._read_fd)
    assert [inbox.get() for _ in range(1000)] == list(range(1000))
    asleep = threading.Event()
    got: list[str] = []

    def read() -> None:
        asleep.set()
        got.append(inbox.get())

    reader = threading.Thread(target=read)
    reader.start()
    assert asleep.wait(10)
    deadline = time.monotonic() + 10
    while not inbox._asleep:  # it found nothing, and reads the pipe
        assert time.monotonic() < deadline
        reader.join(0.001)
    inbox.put("woken")
    reader.join(10)
    assert got == ["woken"]
    assert not readable(inbox._read_fd)  # its byte was read


def test_take_all_empties_it() -> None:
    inbox = Inbox()
    inbox.put_all(["a", "b"])
    inbox.put("c")
    assert len(inbox) == 3
    assert inbox.take_all() == ["a", "b", "c"]
    assert len(inbox) == 0


def pipe_of(fd: int) -> str | None:
    """What ``fd`` refers to if it is a pipe (``pipe:[inode]``, the same for both ends)."""
    try:
        link = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # closed
        return None
    return link if link.startswith("pipe:") else None


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")
def test_close_gives_back_the_pipe() -> None:
    # the inbox's own descriptors, not a count of the process's, which other threads change
    inbox = Inbox()
    fds = (inbox._read_fd, inbox._write_fd)
    pipe = pipe_of(fds[0])
    assert pipe is not None and pipe_of(fds[1]) == pipe
    inbox.close()
    inbox.close()  # once is enough; twice does no harm
    # closed, or since taken by another thread for something else
    assert all(pipe_of(fd) != pipe for fd in fds)
