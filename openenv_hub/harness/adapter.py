"""Adapters: how one harness is started, given its tools, sent a turn and stopped (OpenEnv's
RFC 005 ``HarnessAdapter``), and :class:`SandboxedCLIAdapter`, the base of every adapter here:
a command-line harness run, unmodified, inside a :class:`~openenv_hub.harness.sandbox.HarnessSandbox`.

An adapter for another command-line harness says four things (see docs/harnesses.md):

- ``BUILTIN_TOOL_NAMES``: its own tools (an environment tool of the same name is offered as
  ``env_NAME``);
- :meth:`~SandboxedCLIAdapter.installation`: the host paths of its installation (bound
  read-only into the sandbox);
- :meth:`~SandboxedCLIAdapter.write_settings`: its settings files in its home (the model
  endpoint, and the tool bridge as an MCP server);
- :meth:`~SandboxedCLIAdapter.command` and :meth:`~SandboxedCLIAdapter.variables`: the
  command of a turn (the first, and the ones that continue the conversation), and the
  variables that carry the session's key.

Where this differs from RFC 005: the environment gives the adapter its episode
(:class:`HarnessRun`: the sandbox's launcher, folders, ways out, the model's address inside the
sandbox and the capture session's key) with :meth:`HarnessAdapter.attach` before ``start``;
``inject_tools`` takes the bridge's URL as the brief says; and the model-call events come from
the capture proxy's records, not from the harness's own output.

Layer: client.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from openenv_hub.capture import CaptureSession
from openenv_hub.harness.capture_events import call_events
from openenv_hub.harness.events import (
    HarnessConfig,
    HarnessEvent,
    HarnessEventType,
    HarnessResponse,
)
from openenv_hub.harness.sandbox import HarnessLimits, HarnessSandbox, Relay, RunResult
from openenv_hub.sandbox.bwrap import Launcher
from openenv_hub.types import Tool

__all__ = ["HarnessAdapter", "HarnessRun", "SandboxedCLIAdapter"]

_POLL_S = 0.2


@dataclass
class HarnessRun:
    """One episode, as the environment gives it to an adapter.

    Attributes:
        launcher: How sandboxes are made here.
        workspace: The task's work folder on the host (``/workspace`` inside).
        home: The harness's home on the host (``/home/agent`` inside).
        relays: The ways out of the sandbox (the capture proxy's, the tool bridge's).
        model_url: The capture proxy as the harness reaches it, ``http://127.0.0.1:PORT``.
        api_key: The capture session's key (the harness's API key; never on a command line).
        capture: The capture session the harness's calls are recorded in.
        limits: The sandbox's bounds.
    """

    launcher: Launcher
    workspace: Path
    home: Path
    relays: list[Relay]
    model_url: str
    api_key: str
    capture: CaptureSession | None = None
    limits: HarnessLimits | None = None


class HarnessAdapter(abc.ABC):
    """One harness's lifecycle (RFC 005). ``send_message`` collects ``send_message_streaming``."""

    #: The harness's own tool names: an environment tool with one of these names is offered to
    #: it as ``env_NAME``.
    BUILTIN_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, config: HarnessConfig) -> None:
        self.config = config
        self.run: HarnessRun | None = None

    def attach(self, run: HarnessRun) -> None:
        """Give the adapter its episode (before :meth:`inject_tools` and :meth:`start`)."""
        self.run = run

    @abc.abstractmethod
    async def start(self, working_directory: str) -> None:
        """Start the harness (its sandbox) for a fresh conversation in ``working_directory``."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """Stop the harness and everything it runs (idempotent)."""

    @abc.abstractmethod
    async def inject_tools(self, tools: list[Tool], bridge_url: str) -> None:
        """Offer ``tools`` (already renamed where they clash) from the MCP server at
        ``bridge_url``; called before :meth:`start`."""

    @abc.abstractmethod
    def send_message_streaming(self, message: str) -> AsyncIterator[HarnessEvent]:
        """Run one turn, yielding its events as they happen; the last is ``TURN_COMPLETE``."""

    @abc.abstractmethod
    async def is_alive(self) -> bool:
        """Whether the harness (its sandbox) is running."""

    async def send_message(self, message: str) -> HarnessResponse:
        """Run one turn and return its response with all its events."""
        events = [event async for event in self.send_message_streaming(message)]
        final = events[-1].data if events else {}
        return HarnessResponse(
            response=str(final.get("response", "")),
            events=events,
            done=bool(final.get("done", False)),
        )


class SandboxedCLIAdapter(HarnessAdapter):
    """A command-line harness, unmodified, one command per turn inside a sandbox.

    Subclasses give :meth:`installation`, :meth:`write_settings`, :meth:`command`,
    :meth:`variables` and :meth:`final_response`; ``ONE_SHOT`` harnesses end the task with
    their first turn.
    """

    ONE_SHOT: ClassVar[bool] = False

    def __init__(self, config: HarnessConfig) -> None:
        super().__init__(config)
        self.sandbox: HarnessSandbox | None = None
        self.tools: list[Tool] = []
        self.bridge_url: str | None = None
        self.turns = 0

    # -- what a harness says about itself --------------------------------------------------

    @abc.abstractmethod
    def installation(self) -> list[str]:
        """Host paths of the harness's installation (bound read-only into the sandbox)."""

    @abc.abstractmethod
    def write_settings(self, home: Path) -> None:
        """Write the harness's settings in its home (``self.run``, ``self.tools`` and
        ``self.bridge_url`` are set)."""

    @abc.abstractmethod
    def command(self, message: str, turn: int) -> list[str]:
        """The command of turn ``turn`` (0 first), as the sandbox runs it."""

    @abc.abstractmethod
    def variables(self) -> dict[str, str]:
        """The variables of every command: the model endpoint and the session's key."""

    def final_response(self, result: RunResult) -> str:
        """The harness's answer of a turn, from what it wrote (default: its standard output)."""
        return result.stdout.strip()

    # -- the RFC's lifecycle ---------------------------------------------------------------

    def _episode(self) -> HarnessRun:
        if self.run is None:
            raise RuntimeError(f"{type(self).__name__}: attach() an episode before start()")
        return self.run

    async def inject_tools(self, tools: list[Tool], bridge_url: str) -> None:
        self.tools, self.bridge_url = list(tools), bridge_url

    async def start(self, working_directory: str) -> None:
        await asyncio.to_thread(self._start_sync)

    def _start_sync(self) -> None:
        run = self._episode()
        self._stop_sync()
        self.turns = 0
        run.home.mkdir(parents=True, exist_ok=True)
        self.write_settings(run.home)
        limits = run.limits or HarnessLimits(start_timeout_s=self.config.startup_timeout_s)
        self.sandbox = HarnessSandbox(
            run.launcher,
            workspace=run.workspace,
            home=run.home,
            read_only=self.installation(),
            relays=run.relays,
            environment=dict(self.config.env_vars),
            limits=limits,
        )
        self.sandbox.start()

    async def stop(self) -> None:
        await asyncio.to_thread(self._stop_sync)

    def _stop_sync(self) -> None:
        if self.sandbox is not None:
            self.sandbox.stop()
            self.sandbox = None

    async def is_alive(self) -> bool:
        return self.sandbox is not None and self.sandbox.alive

    async def send_message_streaming(self, message: str) -> AsyncIterator[HarnessEvent]:
        sandbox, run = self.sandbox, self._episode()
        if sandbox is None or not sandbox.alive:
            raise RuntimeError("the harness is not started: reset the environment first")
        if self.ONE_SHOT and self.turns > 0:
            error = f"{self.config.name} runs a task to its end in one turn: reset for another"
            yield HarnessEvent(type=HarnessEventType.ERROR, data={"message": error})
            yield HarnessEvent(type=HarnessEventType.TURN_COMPLETE, data={"done": True})
            return
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[HarnessEvent | RunResult | BaseException] = asyncio.Queue()
        argv, turn = self.command(message, self.turns), self.turns
        self.turns += 1

        def on_event(event: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, _sandbox_event(event))

        def work() -> None:
            try:
                result: RunResult | BaseException = sandbox.run(
                    argv,
                    env=self.variables(),
                    timeout_s=self.config.session_timeout_s,
                    on_event=on_event,
                )
            except BaseException as exc:  # told to the caller below
                result = exc
            loop.call_soon_threadsafe(queue.put_nowait, result)

        seen = {c.index for c in run.capture.calls} if run.capture is not None else set()
        names: dict[str, str] = {}
        threading.Thread(target=work, daemon=True, name=f"harness-turn-{turn}").start()
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                item = await asyncio.wait_for(queue.get(), _POLL_S)
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, RunResult):
                    break
                yield item
            for event in self._new_calls(seen, names):
                yield event
        for event in self._new_calls(seen, names):
            yield event
        yield self._turn_complete(item)

    def _new_calls(self, seen: set[int], names: dict[str, str]) -> list[HarnessEvent]:
        """The events of the calls recorded since ``seen`` (which they are added to)."""
        capture = self.run.capture if self.run is not None else None
        if capture is None:
            return []
        fresh = [call for call in capture.calls if call.index not in seen]
        seen.update(call.index for call in fresh)
        return [event for call in fresh for event in call_events(call, names)]

    def _turn_complete(self, result: RunResult) -> HarnessEvent:
        data: dict[str, Any] = {
            "response": self.final_response(result),
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "done": self.ONE_SHOT,
        }
        if result.error:
            data["error"] = result.error
        return HarnessEvent(type=HarnessEventType.TURN_COMPLETE, data=data, timestamp=time.time())


def _sandbox_event(event: dict[str, Any]) -> HarnessEvent:
    if event.get("event") == "refused":
        name = str(event.get("name", ""))
        message = f"the sandbox refused to resolve {name!r}: it reaches only its model and tools"
        data = {"message": message, "recoverable": True, "refused": name}
        return HarnessEvent(type=HarnessEventType.ERROR, data=data)
    data = {"stream": event.get("stream", "stdout"), "text": str(event.get("text", ""))}
    return HarnessEvent(type=HarnessEventType.TEXT_OUTPUT, data=data)
