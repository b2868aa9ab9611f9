"""A session's thread hands its results back by ringing a doorbell the event loop watches, which
lets go of the GIL during the write; its descriptors are closed when the thread ends, and a ring
after that writes nowhere."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from call_tally import CallTally

from openenv_hub.server.doorbell import Doorbell
from openenv_hub.server.worker import Worker


def open_descriptors() -> int:
    """The eventfds and pipes this process holds: what a worker opens. Other kinds (the sockets
    an earlier test in this process left to the collector) may close while a test counts."""
    gc.collect()
    kinds = ("anon_inode:[eventfd]", "pipe:")
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            count += os.readlink(f"/proc/self/fd/{fd}").startswith(kinds)
    return count


def descriptors_at_rest() -> int:
    """:func:`open_descriptors` once the session threads an earlier test left behind have ended
    (at most 10 s): each closes its pipe and doorbell as it ends."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
        thread.name.startswith("openenv-") for thread in threading.enumerate()
    ):
        time.sleep(0.02)
    return open_descriptors()


async def settle_loop() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
@pytest.mark.parametrize("kind", ["eventfd", "pipe"])
async def test_results_come_back_by_the_doorbell_and_its_descriptors_close_with_the_thread(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "pipe":
        monkeypatch.delattr(os, "eventfd", raising=False)
    loop = asyncio.get_running_loop()
    before = descriptors_at_rest()
    worker = Worker("test-doorbell")
    woken_the_slow_way = CallTally()
    try:
        with monkeypatch.context() as patched:
            counted = woken_the_slow_way.counting(loop.call_soon_threadsafe)
            patched.setattr(loop, "call_soon_threadsafe", counted)
            for i in range(20):
                assert await worker.run(lambda i=i: i * 2) == i * 2
        assert woken_the_slow_way.count == 0
        # the doorbell (an eventfd, or a pipe's two ends) and the pipe the thread sleeps on
        assert open_descriptors() == before + (1 if kind == "eventfd" else 2) + 2
    finally:
        assert worker.shutdown(timeout_s=5)
    await settle_loop()
    assert open_descriptors() == before


async def test_a_loop_that_cannot_watch_a_descriptor_is_woken_the_usual_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()

    def cannot(*args: Any) -> None:
        raise NotImplementedError("a proactor loop")

    monkeypatch.setattr(loop, "add_reader", cannot)
    worker = Worker("test-doorbell")
    try:
        assert [await worker.run(lambda i=i: i) for i in range(5)] == list(range(5))
        assert worker._outcomes._doorbell is None
    finally:
        worker.shutdown(timeout_s=5)


async def test_a_ring_after_the_doorbell_closed_writes_to_no_descriptor_that_took_its_number() -> (
    None
):
    rung: list[int] = []
    doorbell = Doorbell.open(asyncio.get_running_loop(), lambda: rung.append(1))
    assert doorbell is not None
    doorbell.ring()
    await settle_loop()
    assert rung == [1]
    doorbell.close_soon()
    await settle_loop()
    read_fd, write_fd = os.pipe()  # likely the number the doorbell's descriptor had
    try:
        os.set_blocking(read_fd, False)
        doorbell.ring()
        with pytest.raises(BlockingIOError):
            os.read(read_fd, 16)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert rung == [1, 1]  # closing answered once more, for a ring that came just before
