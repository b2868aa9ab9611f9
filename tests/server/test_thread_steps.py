"""Steps on a session's thread answered from a callback: no task waits for them, the replies
still go out in order, and the hard time limit still ends a stuck one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from typing import Any

import pytest
from sample_envs import Echoed, Message, Typed
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from openenv_hub import create_app
from openenv_hub.server.sessions import SessionPool


def ws(server: Any, **kwargs: Any) -> Any:
    return connect(server.url.replace("http", "ws") + "/ws", open_timeout=5, **kwargs)


def ask(socket: Any, message: dict[str, Any]) -> dict[str, Any]:
    socket.send(json.dumps(message))
    return json.loads(socket.recv(timeout=10))


def step(message: str, delay_s: float = 0.0) -> str:
    return json.dumps({"type": "step", "data": {"message": message, "delay_s": delay_s}})


def tasks_on(server: Any) -> int:
    """How many asyncio tasks the server's event loop has now."""
    loop = server.server.servers[0].get_loop()

    async def count() -> int:
        return len(asyncio.all_tasks())

    return asyncio.run_coroutine_threadsafe(count(), loop).result(timeout=5)


def test_a_step_running_on_its_thread_holds_no_task(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(ws(server)) for _ in range(4)]
        for s in sockets:
            assert ask(s, {"type": "reset"})["type"] == "observation"
        time.sleep(0.2)  # the tasks that answered the resets have ended
        idle = tasks_on(server)
        for i, s in enumerate(sockets):
            s.send(step(f"slow {i}", delay_s=1.0))
        server.wait_for(
            lambda: all(x.thread_call_since is not None for x in server.pool.sessions())
        )
        assert tasks_on(server) <= idle  # each socket's reader, and nothing per step
        replies = [json.loads(s.recv(timeout=10))["data"]["observation"] for s in sockets]
        assert [r["echoed_message"] for r in replies] == [f"slow {i}" for i in range(4)]
        assert all(r["thread"].startswith("openenv-session-") for r in replies)
    server.wait_for(lambda: server.pool.active_sessions == 0)


def test_other_requests_behind_a_step_on_its_thread_are_answered_in_order(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        s.send(step("first", delay_s=0.3))
        s.send(json.dumps({"type": "state"}))
        s.send(step("second"))
        s.send(json.dumps({"type": "reset"}))
        s.send(step("third"))
        replies = [json.loads(s.recv(timeout=10)) for _ in range(5)]
    kinds = [r["type"] for r in replies]
    assert kinds == ["observation", "state", "observation", "observation", "observation"]
    said = [r["data"]["observation"]["echoed_message"] for r in replies if r["type"] != "state"]
    assert said == ["first", "second", "ready", "third"]
    assert replies[1]["data"]["step_count"] == 1


def test_large_replies_sent_while_more_requests_arrive_keep_their_order(serve: Any) -> None:
    """Replies of 4 MB each (milliseconds to send), steps answered from callbacks and states
    from tasks, the client reading none until it has sent every request: all in order."""
    server = serve(create_app(Typed, Message, Echoed))
    big = "x" * 4_000_000
    with ws(server, max_size=None, max_queue=1) as s:
        ask(s, {"type": "reset"})
        for i in range(12):
            s.send(step(f"{i}:{big}"))
            if i % 4 == 3:
                s.send(json.dumps({"type": "state"}))
        replies = [json.loads(s.recv(timeout=30)) for _ in range(15)]
    said = [
        r["data"]["observation"]["echoed_message"].split(":")[0]
        if r["type"] == "observation"
        else f"state {r['data']['step_count']}"
        for r in replies
    ]
    expected: list[str] = []
    for i in range(12):
        expected.append(str(i))
        if i % 4 == 3:
            expected.append(f"state {i + 1}")
    assert said == expected


async def test_a_step_is_started_at_once_only_when_nothing_else_holds_the_session() -> None:
    pool = SessionPool(Typed, action_cls=Message)
    answers: list[tuple[Any, Any]] = []
    returned = asyncio.Event()

    def answer(payload: Any, error: Any) -> None:
        answers.append((payload, error))
        returned.set()

    try:
        session = await pool.open("ws")
        assert not pool.start_step(session, Message(message="early"), answer)  # no reset yet
        await pool.reset(session, {})
        async with pool.use(session):  # another call holds it
            assert not pool.start_step(session, Message(message="busy"), answer)
        assert pool.start_step(session, Message(message="now"), answer)
        assert session.busy == 1 and session.lock.locked()
        assert not pool.start_step(session, Message(message="again"), answer)
        await asyncio.wait_for(returned.wait(), 5)
        assert answers[0][1] is None and answers[0][0]["observation"]["echoed_message"] == "now"
        assert session.busy == 0 and not session.lock.locked() and session.step_count == 1
        returned.clear()
        assert pool.start_step(session, Message(message="x", fail=True), answer)
        await asyncio.wait_for(returned.wait(), 5)
        assert answers[1][0] is None and "asked to fail" in str(answers[1][1])
        assert answers[1][1].code == "EXECUTION_ERROR"
    finally:
        await pool.aclose()


class Stuck(Typed):
    release = threading.Event()

    def step(self, action: Message, **kwargs: Any) -> Echoed:
        if action.message == "stuck":
            self.release.wait(30)
        return super().step(action, **kwargs)


async def test_a_step_queued_behind_a_stuck_call_moves_to_the_new_thread_and_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENENV_SESSION_THREADS", "1")
    pool = SessionPool(Stuck, action_cls=Message, step_hard_timeout_s=0.4)
    answered: asyncio.Queue[tuple[Any, Any]] = asyncio.Queue()

    def answer(payload: Any, error: Any) -> None:
        answered.put_nowait((payload, error))

    try:
        stuck, beside = await pool.open("ws"), await pool.open("ws")
        for session in (stuck, beside):
            await pool.reset(session, {})
        stuck_thread = stuck.worker.thread
        assert pool.start_step(stuck, Message(message="stuck"), answer)
        assert pool.start_step(beside, Message(message="beside"), answer)  # queued behind it
        payload, error = await asyncio.wait_for(answered.get(), 10)  # abandoned at 0.4 s
        assert error is None and payload["observation"]["echoed_message"] == "beside"
        assert payload["observation"]["thread"] == beside.worker.thread.name
        assert beside.worker.thread is not stuck_thread and stuck.closed
        assert pool.abandoned_threads == 1 and not beside.busy and not beside.lock.locked()
    finally:
        Stuck.release.set()
        await asyncio.wait_for(pool.aclose(), 15)
    stuck_thread.join(5)
    assert not stuck_thread.is_alive()
    assert answered.empty()  # the abandoned step, returning late, is answered to nobody


class Hangs(Typed):
    release = threading.Event()

    def step(self, action: Message, **kwargs: Any) -> Echoed:
        self.release.wait(30)
        return super().step(action, **kwargs)


def test_a_client_waiting_on_a_step_past_the_hard_limit_is_told_and_its_slot_freed(
    serve: Any,
) -> None:
    server = serve(create_app(Hangs, Message, Echoed, step_hard_timeout_s=0.5))
    try:
        with ws(server) as s:
            ask(s, {"type": "reset"})
            s.send(step("never"))
            with pytest.raises(ConnectionClosed) as closed:
                s.recv(timeout=10)
        assert closed.value.rcvd is not None
        assert "hard time limit" in closed.value.rcvd.reason
        server.wait_for(lambda: server.pool.active_sessions == 0)
        assert server.pool.abandoned_threads == 1
    finally:
        Hangs.release.set()


def count_tasks_made(server: Any) -> list[str]:
    """The names of the coroutines of every task the server's event loop makes from now on."""
    loop = server.server.servers[0].get_loop()
    made: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        made.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.call_soon_threadsafe(loop.set_task_factory, factory)
    server.wait_for(lambda: loop.get_task_factory() is factory)
    return made


def test_a_step_on_the_event_loop_is_answered_before_the_next_frame_is_read(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, run_on_event_loop=True))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        made = count_tasks_made(server)
        for i in range(3):  # pipelined: the second and third wait in line for the first
            s.send(step(f"inline {i}"))
        s.send(json.dumps({"type": "step", "data": {"message": "boom", "fail": True}}))
        s.send(step("after"))
        replies = [json.loads(s.recv(timeout=10)) for _ in range(5)]
        said = [
            r["data"]["observation"]["echoed_message"]
            for r in replies
            if "observation" in r.get("data", {})
        ]
        assert said == ["inline 0", "inline 1", "inline 2", "after"]
        observations = [r["data"]["observation"] for r in replies if r["type"] == "observation"]
        assert not any(o["thread"].startswith("openenv-session-") for o in observations)
        assert replies[3]["type"] == "error" and "asked to fail on 'boom'" in json.dumps(replies[3])
        assert [r["data"]["reward"] for r in replies[:3]] == pytest.approx([0.8] * 3)
        assert made == []  # no task, no coroutine for a step on the loop
        assert ask(s, {"type": "state"})["data"]["step_count"] == 4
