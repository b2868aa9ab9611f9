"""The collector's thresholds in a server process: the requests of thousands of sessions in flight
end in the young generation, so full collections do not walk every session's objects at each
turn (benchmarks/README.md, many sessions, run 5)."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from child_processes import end_child, start_child
from polling import wait_until
from sample_envs import Message, Typed
from serving import free_port

from openenv_hub.server.sessions import SessionPool
from openenv_hub.transport import uvicorn_serving as serving
from openenv_hub.transport.uvicorn_serving import (
    YOUNG_GENERATION_PER_SESSION,
    YOUNG_GENERATION_THRESHOLD,
    collector_follows,
    tune_collector,
)

SESSIONS = 4_096
OBJECTS_PER_REQUEST = 10  # tracked objects a request holds while in flight, at the least


@pytest.fixture
def thresholds(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, ...]]:
    """Python's default thresholds for the test, as in a process that never tuned them; the
    process's own put back after it."""
    saved = gc.get_threshold()
    monkeypatch.setattr(serving._Tuning, "base", None)
    monkeypatch.setattr(serving._Tuning, "young", None)
    gc.set_threshold(700, 10, 10)
    try:
        yield saved
    finally:
        gc.set_threshold(*saved)


def test_the_young_generation_is_raised_and_the_older_ones_kept(
    thresholds: tuple[int, ...],
) -> None:
    assert tune_collector() == (YOUNG_GENERATION_THRESHOLD, 10, 10)
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD * 2, 5, 7)
    assert tune_collector() == (YOUNG_GENERATION_THRESHOLD * 2, 5, 7)  # higher: the process's
    gc.set_threshold(0, 10, 10)
    assert tune_collector() == (0, 10, 10)  # automatic collection off: left off


def collections_while_requests_are_in_flight() -> list[int]:
    """The generations collected while every session has a request in flight, each holding a
    few tracked objects (a burst: all arrive before the first is answered)."""
    collected: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    gc.collect()  # counts start from zero
    gc.callbacks.append(note)
    try:
        in_flight = [
            [{"request": i, "part": j} for j in range(OBJECTS_PER_REQUEST)] for i in range(SESSIONS)
        ]
        del in_flight
    finally:
        gc.callbacks.remove(note)
    return collected


def test_requests_of_thousands_of_sessions_end_in_the_young_generation(
    thresholds: tuple[int, ...],
) -> None:
    assert max(collections_while_requests_are_in_flight()) >= 1  # Python's: promoted, twice
    tune_collector()
    assert collections_while_requests_are_in_flight() == []


def test_the_young_generation_follows_the_sessions_open(thresholds: tuple[int, ...]) -> None:
    assert collector_follows(5_000) == 700  # a process that did not tune it: left alone
    tune_collector()
    per_step = YOUNG_GENERATION_PER_SESSION * serving.SESSIONS_PER_STEP
    assert collector_follows(serving.SESSIONS_PER_STEP - 1) == YOUNG_GENERATION_THRESHOLD
    assert collector_follows(4_096) == 4 * per_step == gc.get_threshold()[0]
    assert collector_follows(10_000) == 9 * per_step
    assert gc.get_threshold() == (9 * per_step, 10, 10)  # the older generations kept
    assert collector_follows(3) == YOUNG_GENERATION_THRESHOLD  # back down as sessions end
    gc.set_threshold(123_456, 10, 10)  # set by the process since: its own, left alone
    assert collector_follows(4_096) == 123_456


async def test_a_pool_tells_the_collector_as_sessions_open_and_end(
    thresholds: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serving, "SESSIONS_PER_STEP", 2)
    monkeypatch.setattr(serving, "YOUNG_GENERATION_PER_SESSION", YOUNG_GENERATION_THRESHOLD)
    tune_collector()
    pool = SessionPool(Typed, action_cls=Message)
    try:
        sessions = [await pool.open() for _ in range(5)]  # two whole steps of two sessions
        assert gc.get_threshold()[0] == 2 * 2 * YOUNG_GENERATION_THRESHOLD
        for session in sessions[:4]:
            await pool.close(session)
        assert gc.get_threshold()[0] == YOUNG_GENERATION_THRESHOLD
    finally:
        await pool.aclose()
    assert gc.get_threshold()[0] == YOUNG_GENERATION_THRESHOLD


PROBE = Path(__file__).resolve().parents[1] / "gc_probe.py"


def test_run_serves_with_the_raised_young_generation() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start_child(
        [sys.executable, str(PROBE), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )

    def healthy() -> bool:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(healthy, timeout_s=30)
        reply = httpx.post(f"{url}/reset", json={}, timeout=10)
        assert reply.json()["observation"]["young"] == YOUNG_GENERATION_THRESHOLD
    finally:
        end_child(process)
