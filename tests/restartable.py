"""Servers in child processes that a test kills and starts again on the same port: the fault
model server (tests/fault_model.py) and the word game (examples/word_game.py)."""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from child_processes import end_child, start_child
from serving import free_port

TESTS = Path(__file__).resolve().parent
EXAMPLES = TESTS.parent / "examples"


class ChildServer:
    """A server started by ``command(port)``, healthy when ``health`` answers 200.

    Every start happens in one thread of its own, which lives until :meth:`kill`: a child is
    killed when the thread that started it ends (``die_with_parent`` is per thread), so a
    restart from a short-lived thread would not outlive it.
    """

    def __init__(self, command: Callable[[int], list[str]], health: str) -> None:
        self.command, self.health, self.port = command, health, free_port()
        self.process: Any = None
        self.starts = 0
        self._orders: queue.Queue[list[str] | None] = queue.Queue()
        self._started: queue.Queue[Any] = queue.Queue()
        self._spawner = threading.Thread(target=self._spawn, daemon=True)
        self._spawner.start()

    def _spawn(self) -> None:
        while (command := self._orders.get()) is not None:
            try:
                self._started.put(start_child(command))
            except Exception as exc:  # handed to the caller of start()
                self._started.put(exc)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ChildServer:
        self._orders.put(self.command(self.port))
        started = self._started.get(timeout=60)
        if isinstance(started, Exception):
            raise started
        self.process = started
        self.starts += 1
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + self.health, timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, f"{self.command(self.port)} ended at start"
            assert time.monotonic() < deadline, f"{self.url} did not start in 60 s"
            time.sleep(0.1)

    def kill(self) -> None:
        if self.process is not None:
            end_child(self.process, timeout_s=5)

    def close(self) -> None:
        """Kill the server and end the thread that starts it."""
        self.kill()
        self._orders.put(None)
        self._spawner.join(timeout=10)

    def restart_when_dead(
        self,
        then: Callable[[int], list[str]] | None = None,
        *,
        after_s: float = 1.0,
        within_s: float = 120,
    ) -> threading.Thread:
        """A thread that waits for the process to end (it exits at a scheduled fault), then
        starts it again ``after_s`` later, with the command ``then`` when given."""

        def watch() -> None:
            deadline = time.monotonic() + within_s
            while self.process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.process.poll() is not None:
                time.sleep(after_s)
                self.command = then or self.command
                self.start()

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        return thread


def fault_command(faults: str = "{}", *more: str) -> Callable[[int], list[str]]:
    script = str(TESTS / "fault_model.py")
    return lambda port: [sys.executable, script, "--port", str(port), "--faults", faults, *more]


def game_command(port: int) -> list[str]:
    return [sys.executable, str(EXAMPLES / "word_game.py"), "--port", str(port)]


@pytest.fixture
def child_server() -> Iterator[Callable[..., ChildServer]]:
    """``child_server(command, health)`` starts a :class:`ChildServer`; all end with the test."""
    started: list[ChildServer] = []

    def make(command: Callable[[int], list[str]], health: str) -> ChildServer:
        server = ChildServer(command, health)
        started.append(server)
        return server.start()

    yield make
    for server in started:
        server.close()
