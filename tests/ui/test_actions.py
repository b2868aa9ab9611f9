"""What the UI's buttons do, without a browser: the session core driven per browser tab."""

from __future__ import annotations

import asyncio

import pytest
from ui_envs import AllFieldsAction, AllFieldsEnvironment, TypedEchoAction, TypedEchoEnvironment

from openenv_hub.server.sessions import SessionPool
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.schema import FieldError
from openenv_hub.ui.tabs import TabSessions


@pytest.fixture
async def make_actions():
    pools: list[SessionPool] = []

    def make(env=TypedEchoEnvironment, action=TypedEchoAction, **options) -> Actions:
        pool = SessionPool(env, action_cls=action, **options)
        pools.append(pool)
        return Actions(TabSessions(pool))

    yield make
    for pool in pools:
        await pool.aclose()


async def test_each_tab_has_its_own_session_until_released(make_actions):
    actions = make_actions()
    await actions.open("a")
    await actions.open("b")
    assert actions.pool.active_sessions == 2
    await actions.reset("a", "")
    await actions.step("a", {"message": "hi"}, [])
    assert sorted(s.step_count for s in actions.pool.sessions()) == [0, 1]
    assert [s.kind for s in actions.pool.sessions()] == ["ui", "ui"]
    await actions.close("a")
    await actions.close("a")  # twice is fine
    assert actions.pool.active_sessions == 1


async def test_step_and_reset_record_history(make_actions):
    actions = make_actions()
    reset = await actions.reset("a", " 5 ")
    step = await actions.step("a", {"message": "four"}, [])
    assert (reset.status, step.status, step.message) == ("ok", "ok", "Step 1 done.")
    assert step.payload is not None
    assert step.payload["observation"]["echoed_message"] == "four"
    assert (step.payload["reward"], step.payload["done"]) == (0.4, False)
    assert step.state is not None and step.state["step_count"] == 1
    assert [(e.kind, e.action) for e in step.tab.history] == [
        ("reset", {"seed": 5}),
        ("step", {"message": "four"}),
    ]
    assert actions.session_line(step.tab).endswith("· 1 step · 1/64 sessions open")


@pytest.mark.parametrize(
    ("data", "errors", "details"),
    [
        ({}, [], ["message: Field required"]),
        ({"message": "x", "extra": 1}, [], ["extra: Extra inputs are not permitted"]),
        (
            {"message": "x"},
            [FieldError("items", "not valid JSON")],
            ["items: not valid JSON"],
        ),
    ],
)
async def test_invalid_actions_name_the_field(make_actions, data, errors, details):
    actions = make_actions()
    outcome = await actions.step("a", data, errors)
    assert (outcome.status, outcome.message, outcome.details) == (
        "error",
        "Invalid action",
        details,
    )
    assert outcome.payload is None


async def test_environment_errors_and_bad_seeds_are_outcomes(make_actions):
    actions = make_actions(AllFieldsEnvironment, AllFieldsAction)
    early = await actions.step("a", {"text": "x"}, [])
    assert (early.message, early.details) == (
        "Call reset() first",
        [
            "step() before reset(): the session has no episode in progress; call reset() "
            "first to start one",
            "Call reset() to start an episode, then step.",
        ],
    )
    await actions.reset("a", "")
    boom = await actions.step("a", {"text": "boom"}, [])
    assert boom.message == "The environment raised an error"
    assert boom.details == ["RuntimeError: boom went the environment"]
    seed = await actions.reset("a", "x1")
    assert seed.details == ["seed: 'x1' is not a whole number"]


async def test_a_reaped_session_is_replaced_with_a_notice(make_actions):
    actions = make_actions(idle_timeout_s=0.05)
    await actions.open("a")
    for _ in range(100):  # the pool's reaper closes the idle session
        if actions.pool.active_sessions == 0:
            break
        await asyncio.sleep(0.02)
    assert actions.pool.active_sessions == 0
    outcome = await actions.reset("a", "")
    assert outcome.status == "ok"
    assert outcome.notice == (
        "The previous session of this tab was closed (session idle for over 0.05 s); "
        "a fresh one was opened."
    )
    assert actions.pool.active_sessions == 1
    assert (await actions.step("a", {"message": "x"}, [])).notice is None


async def test_a_full_pool_is_an_error_and_the_tab_retries_later(make_actions):
    actions = make_actions(max_concurrent_envs=1)
    await actions.open("a")
    full = await actions.open("b")
    assert (full.status, full.message) == ("error", "The server is at capacity")
    assert (
        full.details[0] == "Server at capacity: 1/1 sessions active. Cannot accept new connections."
    )
    assert actions.session_line(full.tab) == "No session · 1/1 sessions open"
    await actions.close("a")
    assert (await actions.reset("b", "")).status == "ok"


async def test_a_tab_closed_while_its_session_opens_leaks_nothing(make_actions):
    actions = make_actions()
    opening = asyncio.ensure_future(actions.open("a"))
    await asyncio.sleep(0)  # the open is under way
    await actions.close("a")
    outcome = await opening
    assert outcome.message == "The session ended"
    assert actions.pool.active_sessions == 0


async def test_unreadable_fields_and_model_errors_are_reported_together(make_actions):
    actions = make_actions(AllFieldsEnvironment, AllFieldsAction)
    outcome = await actions.step(
        "a", {"text": "x", "count": 99}, [FieldError("items", "not valid JSON")]
    )
    assert outcome.details == [
        "items: not valid JSON",
        "count: Input should be less than or equal to 10",
    ]
    assert outcome.source == "action"


async def test_history_files_live_as_long_as_their_tab(make_actions):
    actions = make_actions()
    await actions.reset("a", "")
    await actions.reset("b", "")
    tab_a, tab_b = actions.tabs.get("a"), actions.tabs.get("b")
    file_a, file_b = actions.tabs.history_file(tab_a), actions.tabs.history_file(tab_b)
    assert file_a.read_text().count("\n") == 1 and file_a.name == "env-history.jsonl"
    await actions.close("a")
    assert not file_a.exists() and file_b.exists()
    actions.tabs.cleanup()
    assert not file_b.parent.parent.exists()


async def test_a_fork_by_replay_leaves_out_what_the_observation_says_it_may_differ_in() -> None:
    """An observation with a timing (``replay_ignores``, as the coding environment's has) forks
    in the UI as it does in Python; another field that differs is still a mismatch."""
    import itertools
    import json
    from typing import Any, ClassVar

    from openenv_hub import Action, Environment, Observation, State
    from openenv_hub.ui.replay import fork_into_tab

    class Run(Action):
        code: str

    class Ran(Observation):
        replay_ignores: ClassVar[frozenset[str]] = frozenset({"took_s"})
        output: str = ""
        took_s: float = 0.0

    clock = itertools.count(1)

    class Timed(Environment[Run, Ran, State]):
        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Ran:
            return Ran(took_s=next(clock))

        def step(self, action: Run, timeout_s: float | None = None, **kw: Any) -> Ran:
            return Ran(output=action.code.upper(), took_s=next(clock))

        @property
        def state(self) -> State:
            return State()

    def record(step: int, action: dict[str, Any], output: str) -> dict[str, Any]:
        observation = {"output": output, "took_s": 0.5, "metadata": {}}
        return {"episode_id": "e", "episode": 0, "step": step, "action": json.dumps(action),
                "observation": json.dumps(observation), "reward": None, "done": False}  # fmt: skip

    records = [record(0, {}, ""), record(1, {"code": "x"}, "X")]
    pool = SessionPool(Timed, action_cls=Run)
    try:
        actions = Actions(TabSessions(pool), replay_ignores=Ran.replay_ignores)
        forked = await fork_into_tab(actions, "a", records, 1)
        assert forked.status == "ok", forked.message
        assert forked.message.startswith("Forked at step 1 by replay (reset and 1 recorded action")
        records[1] = record(1, {"code": "x"}, "something else")
        differs = await fork_into_tab(actions, "a", records, 1)
        assert (differs.status, differs.message) == ("error", "Replay differs from the recording")
    finally:
        await pool.aclose()
