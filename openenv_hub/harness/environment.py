"""``HarnessEnvironment``: an agent harness, run unmodified in a fresh sandbox, as an environment
(OpenEnv's RFC 005) whose every model call is captured token for token.

- ``reset(task_id=...)`` stops the last episode's harness, makes a work folder with the task's
  files, opens a capture session (its key is the harness's API key), offers the environment's
  own MCP tools through the tool bridge (renamed ``env_NAME`` where they clash with the
  harness's built-ins) and starts the harness in its sandbox.
- ``step(HarnessAction(message=...))`` is one conversational turn (a one-shot harness runs the
  task to its end): the observation holds the turn's events (from the capture proxy's records
  and the harness's output), its answer, and the capture's grades.
- After each turn the grader (:mod:`openenv_hub.harness.graders`) grades the work folder where
  the harness cannot reach, and any ``rubric`` scores the observation on the server as usual.
  A rollout in which the harness never called the model (no call the engine answered) is a
  failure: its reward is 0, whatever the work folder holds.
- A turn in which the model engine failed a call (unreachable, 5xx, too slow) has no result:
  ``step`` raises :class:`~openenv_hub.errors.ModelEngineError` (an infrastructure error,
  which ``openenv eval`` retries and never scores), and the work folder is not graded.

For a trainer: after a step, :attr:`HarnessEnvironment.capture` is the episode's
:class:`~openenv_hub.capture.CaptureSession` (``sequences()``: ``input_ids``, ``loss_mask`` over
sampled tokens only, ``logprobs``; ``report()``), and the observation's ``reward`` the episode's.

Layer: client.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from openenv_hub.capture import CallRecord, CaptureProxy, CaptureSession
from openenv_hub.errors import ConfigurationError, ModelEngineError
from openenv_hub.harness.adapter import HarnessAdapter, HarnessRun
from openenv_hub.harness.bridge import ToolBridge
from openenv_hub.harness.events import HarnessEvent, HarnessEventType
from openenv_hub.harness.graders import Grade, TestScriptGrader, WorkspaceGrader
from openenv_hub.harness.launch import find_launcher
from openenv_hub.harness.relay import UnixRelay
from openenv_hub.harness.sandbox import WORKSPACE, HarnessLimits, Relay
from openenv_hub.harness.tasks import HarnessTask
from openenv_hub.model.tools import MCPEnvironment
from openenv_hub.rubrics import Gate, Rubric, rubric
from openenv_hub.support.sync_bridge import run_to_end
from openenv_hub.types import Action, EnvironmentMetadata, Observation, State

__all__ = ["HarnessAction", "HarnessEnvironment", "HarnessObservation", "HarnessState"]

PROXY_PORT = 8100  # the capture proxy, inside the sandbox
BRIDGE_PORT = 8200  # the tool bridge, inside the sandbox
NEVER_CALLED = "the harness never called the model: the rollout is a failure, whatever it left"


class HarnessAction(Action):
    """One user turn for the harness."""

    message: str = Field(min_length=1, max_length=256 * 1024)


class HarnessObservation(Observation):
    """A turn's outcome (or, after reset, the task). ``model_calls`` and
    ``total_model_calls`` count the calls the engine answered (in the turn, in the episode)."""

    task_id: str | None = None
    instruction: str = ""
    response: str = ""
    turn: int = 0
    turn_events: list[dict[str, Any]] = Field(default_factory=list)
    model_calls: int = 0
    total_model_calls: int = 0
    passed: bool | None = None
    grade: str = ""
    capture: dict[str, Any] = Field(default_factory=dict)
    refused: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    message: str = ""


class HarnessState(State):
    harness: str = ""
    task_id: str | None = None


def _model_was_called(observation: Observation) -> float:
    """1.0 once the harness has called the model in the episode, else 0.0."""
    return 1.0 if getattr(observation, "total_model_calls", 0) > 0 else 0.0


model_was_called: Rubric = rubric(_model_was_called, name="model_was_called", range=(0.0, 1.0))


class HarnessEnvironment(MCPEnvironment):
    """A harness in a sandbox as an environment.

    Args:
        adapter: The harness (:class:`~openenv_hub.harness.MiniSweAgentAdapter`, ...), one per
            environment instance.
        proxy: A started capture proxy in front of the engine (shared by instances).
        tasks: The tasks ``reset(task_id=...)`` picks from.
        grader: Grades the work folder after each turn; default: the task's ``tests/test.sh``
            when it has one (:class:`~openenv_hub.harness.TestScriptGrader`).
        rubric: A rubric the server scores each turn with (gated: 0 until the model was called).
        limits: The harness sandbox's bounds.
        keep_folders: Keep each episode's folder after it ends (for a look afterwards).
    """

    reward_range = (0.0, 1.0)

    def __init__(
        self,
        adapter: HarnessAdapter,
        *,
        proxy: CaptureProxy,
        tasks: dict[str, HarnessTask] | None = None,
        grader: WorkspaceGrader | None = None,
        rubric: Rubric | None = None,
        limits: HarnessLimits | None = None,
        keep_folders: bool = False,
    ) -> None:
        super().__init__()
        if not proxy.running:
            raise ConfigurationError("HarnessEnvironment needs a started CaptureProxy (.start())")
        self.adapter, self.proxy = adapter, proxy
        self.tasks = dict(tasks or {})
        self.grader, self.limits, self.keep_folders = grader, limits, keep_folders
        if rubric is not None:
            self.rubric = Gate(model_was_called, rubric, name="harness")
        self.capture: CaptureSession | None = None
        self.bridge: ToolBridge | None = None
        self.task: HarnessTask | None = None
        self.folder: Path | None = None
        self._relay: UnixRelay | None = None
        self._trajectory: list[HarnessEvent] = []
        self._harness_state = HarnessState(harness=adapter.config.name)
        self._state = self._harness_state  # the step count MCPEnvironment keeps

    @classmethod
    def factory(cls, adapter: Callable[[], HarnessAdapter], **options: Any) -> Callable[[], Any]:
        """A function making one environment per session (for ``create_app``), each with a
        new adapter from ``adapter()`` and these keyword arguments. It is named as the
        environment's metadata is (``harness-NAME``): the task routes are served under it."""

        def make() -> HarnessEnvironment:
            return cls(adapter(), **options)

        make.__name__ = make.__qualname__ = f"harness-{adapter().config.name}"
        make.action_cls = HarnessAction  # type: ignore[attr-defined]
        make.observation_cls = HarnessObservation  # type: ignore[attr-defined]
        make.state_cls = HarnessState  # type: ignore[attr-defined]
        return make

    # -- episode ---------------------------------------------------------------------------

    @property
    def state(self) -> HarnessState:
        return self._harness_state

    @property
    def trajectory(self) -> list[HarnessEvent]:
        """Every event of the episode, across its turns."""
        return list(self._trajectory)

    @property
    def workspace(self) -> Path | None:
        """The episode's work folder on the host."""
        return None if self.folder is None else self.folder / "workspace"

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        **kwargs: Any,
    ) -> HarnessObservation:
        """A fresh sandbox, work folder and capture session; with ``task_id``, that task."""
        if task_id is not None and task_id not in self.tasks:
            known = ", ".join(sorted(self.tasks)) or "none"
            raise ValueError(f"unknown task_id {task_id!r}; the tasks are: {known}")
        self._end_episode()
        self.task = self.tasks[task_id] if task_id else None
        self.folder = Path(tempfile.mkdtemp(prefix="openenv-harness-"))
        os.chmod(self.folder, 0o700)
        for name in ("workspace", "home", "run"):
            (self.folder / name).mkdir()
        if self.task is not None:
            self.task.copy_files(self.folder / "workspace")
        self.capture = self.proxy.open_session()
        self._trajectory = []
        self._harness_state = HarnessState(
            episode_id=episode_id or str(uuid.uuid4()),
            harness=self.adapter.config.name,
            task_id=task_id,
        )
        self._state = self._harness_state
        try:
            run_to_end(self._start(), thread_name="harness-start")
        except BaseException:
            self._end_episode()
            raise
        instruction = self.task.instruction if self.task else ""
        return HarnessObservation(task_id=task_id, instruction=instruction, reward=0.0)

    async def _start(self) -> None:
        assert self.folder is not None and self.capture is not None
        run = self.folder / "run"
        self._relay = UnixRelay(run / "proxy.sock", ("127.0.0.1", self.proxy.port))
        os.chmod(self._relay.path, 0o666)  # its folder is the server's alone
        relays = [Relay("proxy", PROXY_PORT, str(self._relay.path))]
        tools = self.list_tools()
        if tools:
            builtins = self.adapter.BUILTIN_TOOL_NAMES
            self.bridge = ToolBridge(tools, builtins, self.call_tool, run / "bridge.sock").start()
            os.chmod(self.bridge.path, 0o666)
            relays.append(Relay("bridge", BRIDGE_PORT, str(self.bridge.path)))
        self.adapter.attach(
            HarnessRun(
                launcher=find_launcher(),
                workspace=self.folder / "workspace",
                home=self.folder / "home",
                relays=relays,
                model_url=f"http://127.0.0.1:{PROXY_PORT}",
                api_key=self.capture.key,
                capture=self.capture,
                limits=self.limits,
            )
        )
        if self.bridge is not None:
            url = f"http://127.0.0.1:{BRIDGE_PORT}/mcp"
            await self.adapter.inject_tools(self.bridge.tools, url)
        await self.adapter.start(WORKSPACE)

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        if not isinstance(action, HarnessAction):
            raise TypeError(
                f"HarnessEnvironment takes HarnessAction(message=...) and MCP tool calls, "
                f"not {type(action).__name__}"
            )
        if self.capture is None:
            raise RuntimeError("reset the environment before sending a turn")
        before = len(_answered(self.capture))
        response = run_to_end(self.adapter.send_message(action.message), thread_name="harness-turn")
        self._trajectory.extend(response.events)
        _raise_for_engine_failures(self.capture)
        calls = _answered(self.capture)
        observation = HarnessObservation(
            task_id=self._harness_state.task_id,
            response=response.response,
            turn=self._harness_state.step_count,
            turn_events=[e.model_dump(mode="json") for e in response.events],
            model_calls=len(calls) - before,
            total_model_calls=len(calls),
            capture=_capture_summary(self.capture),
            refused=[e.data["refused"] for e in response.events if "refused" in e.data],
            exit_code=_exit_code(response.events),
            done=response.done,
        )
        self._grade(observation)
        return observation

    def _grade(self, observation: HarnessObservation) -> None:
        """The grader's reward, or 0 for a rollout that never called the model."""
        grade: Grade | None = None
        grader = self.grader
        if grader is None and self.task is not None and self.task.tests is not None:
            grader = TestScriptGrader(self.task.tests)
        if grader is not None and self.workspace is not None:
            grade = grader.grade(self.workspace)
        if observation.total_model_calls == 0:
            observation.reward, observation.passed, observation.message = 0.0, False, NEVER_CALLED
            observation.grade = grade.detail if grade else ""
            return
        if grade is not None:
            observation.reward, observation.passed, observation.grade = (
                grade.reward,
                grade.passed,
                grade.detail,
            )
            if grade.error is not None:
                observation.metadata["reward_error"] = grade.error
        else:
            observation.reward = 0.0

    # -- the task API (/{env}/tasks ...): instructions only, never the tests ----------------

    def list_splits(self) -> list[str]:
        return ["test"]

    def num_tasks(self, split: str) -> int:
        return len(self.tasks)

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [{"task_id": t.task_id, "prompt": t.instruction} for t in self.tasks.values()]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return self.list_tasks(split)[index]

    # -- end -------------------------------------------------------------------------------

    def _end_episode(self) -> None:
        with contextlib.suppress(Exception):
            run_to_end(self.adapter.stop(), thread_name="harness-stop")
        if self.bridge is not None:
            self.bridge.stop()
            self.bridge = None
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self.capture is not None:
            self.proxy.close_session(self.capture)  # its records stay readable
        if self.folder is not None and not self.keep_folders:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None

    def close(self) -> None:
        self._end_episode()

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=f"harness-{self.adapter.config.name}",
            description=(
                f"{self.adapter.config.name} run unmodified in a sandbox (its network: the "
                "capture proxy and the tool bridge only); one step is one turn; every model "
                "call captured as token ids; rewards in [0, 1]."
            ),
            version="0.1.0",
        )


def _capture_summary(session: CaptureSession) -> dict[str, Any]:
    report = session.report()
    return {
        "rollout": session.display_id,
        "calls": report.calls,
        "sequences": report.sequences,
        "sampled_tokens": report.sampled_tokens,
        "ok": report.ok,
        "fatal": report.codes("fatal"),
        "warnings": report.codes("warn"),
    }


def _answered(session: CaptureSession) -> list[CallRecord]:
    """The session's calls the engine answered."""
    return [call for call in session.calls if call.error is None]


def _raise_for_engine_failures(session: CaptureSession) -> None:
    """:class:`ModelEngineError` when the engine failed a call of the episode: what the
    harness left is then no result of the model's, and must not be scored as one."""
    calls = session.calls
    failed = [call for call in calls if call.engine_failed]
    if failed:
        raise ModelEngineError(
            f"the model engine failed {len(failed)} of the rollout's {len(calls)} model calls "
            f"(call {failed[0].index}: {failed[0].error}); the rollout has no result to score"
        )


def _exit_code(events: list[HarnessEvent]) -> int | None:
    for event in reversed(events):
        if event.type is HarnessEventType.TURN_COMPLETE:
            code = event.data.get("exit_code")
            return code if isinstance(code, int) else None
    return None
