"""EnvPool against real servers: results in slot order, sessions spread by load, one slot's
failure kept to that slot, replacement on the next reset, the error policies, the sync twin."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from sample_envs import Echoed, Message, Typed

from openenv_hub import EnvClient, EnvPool, State, create_app
from openenv_hub.errors import (
    ConfigurationError,
    ConnectError,
    EnvironmentExecutionError,
    PoolError,
    SessionCapacityError,
    SessionLostError,
    SlotError,
    TransportError,
)
from openenv_hub.types import StepResult


class TypedEnv(EnvClient[Message, Echoed, State]):
    action_type, observation_type, state_type = Message, Echoed, State


@pytest.fixture
def two_servers(serve: Any) -> list[Any]:
    return [serve(create_app(Typed, Message, Echoed)) for _ in range(2)]


def _messages(n: int, prefix: str = "m") -> list[Message]:
    return [Message(message=f"{prefix}{i}") for i in range(n)]


def _held(server: Any) -> int:
    return int(server.pool.active_sessions)


def _holds(server: Any, count: int) -> bool:
    """Whether ``server`` comes to hold ``count`` sessions (it opens them just after accepting)."""
    try:
        server.wait_for(lambda: _held(server) == count, timeout_s=30)
    except AssertionError:
        raise AssertionError(f"{server.url} holds {_held(server)} sessions, not {count}") from None
    return True


async def test_a_single_server_steps_every_slot_in_order(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    async with EnvPool(server.url, size=8, client=TypedEnv) as pool:
        assert _holds(server, 8)
        resets = await pool.reset_all(seeds=list(range(8)))
        assert all(isinstance(r, StepResult) for r in resets)
        results = await pool.step_all(_messages(8))
        echoed = [r.observation.echoed_message for r in results if isinstance(r, StepResult)]
        assert echoed == [f"m{i}" for i in range(8)]
    assert _holds(server, 0)


async def test_sessions_spread_over_replicas_by_load(two_servers: list[Any]) -> None:
    urls = [s.url for s in two_servers]
    async with EnvPool(urls, size=7, client=TypedEnv) as pool:
        per_url = pool.sessions_per_url()
        assert sorted(per_url.values()) == [3, 4]
        assert all(_holds(server, per_url[server.url]) for server in two_servers)
        await pool.reset_all()
        results = await pool.step_all(_messages(7))
        assert [r.observation.message_length for r in results] == [2] * 7  # type: ignore[union-attr]


async def test_a_dead_replica_fails_its_slots_only_and_reset_replaces_them(
    two_servers: list[Any],
) -> None:
    first, second = two_servers
    async with EnvPool([first.url, second.url], size=8, client=TypedEnv) as pool:
        await pool.reset_all()
        on_second = [slot.index for slot in pool.slots if slot.url == second.url]
        assert len(on_second) == 4
        second.stop()

        results = await pool.step_all(_messages(8))
        failed = [i for i, r in enumerate(results) if isinstance(r, SlotError)]
        assert failed == on_second
        for i in failed:
            error = results[i]
            assert isinstance(error, SlotError) and error.slot == i and error.url == second.url
            assert (
                isinstance(error.cause, (SessionLostError, TransportError)) and error.session_lost
            )
        assert all(isinstance(results[i], StepResult) for i in range(8) if i not in failed)

        again = await pool.step_all(_messages(8))  # a failed slot answers with its error
        assert [i for i, r in enumerate(again) if isinstance(r, SlotError)] == failed

        resets = await pool.reset_all()
        assert all(isinstance(r, StepResult) for r in resets)
        assert pool.sessions_per_url() == {first.url: 8}
        assert all(isinstance(r, StepResult) for r in await pool.step_all(_messages(8)))


async def test_an_environment_error_is_reported_and_the_session_kept(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    async with EnvPool(server.url, size=3, client=TypedEnv) as pool:
        await pool.reset_all()
        actions = [Message(message="a"), Message(message="b", fail=True), None]
        results = await pool.step_all(actions)
        assert isinstance(results[0], StepResult) and results[2] is None
        error = results[1]
        assert isinstance(error, SlotError) and isinstance(error.cause, EnvironmentExecutionError)
        assert not error.session_lost
        assert pool.replacements == []  # nothing was replaced
        after = await pool.step_all(_messages(3))
        assert all(isinstance(r, StepResult) for r in after)


async def test_raise_policy_keeps_the_results_of_the_other_slots(two_servers: list[Any]) -> None:
    first, second = two_servers
    async with EnvPool([first.url, second.url], size=4, on_error="raise") as pool:
        await pool.reset_all()
        second.stop()
        with pytest.raises(PoolError) as info:
            await pool.step_all([{"message": "x"}] * 4)
        assert len(info.value.results) == 4 and len(info.value.failures) == 2
        assert sum(isinstance(r, StepResult) for r in info.value.results) == 2
        assert "reset_all" in info.value.hint


async def test_replace_policy_opens_a_new_session_at_once(two_servers: list[Any]) -> None:
    first, second = two_servers
    async with EnvPool([first.url, second.url], size=4, on_error="replace") as pool:
        await pool.reset_all()
        second.stop()
        results = await pool.step_all([{"message": "x"}] * 4)
        replaced = [r for r in results if isinstance(r, SlotError)]
        assert len(replaced) == 2 and all(r.replaced_by == first.url for r in replaced)
        assert pool.replacements == replaced
        after = await pool.step_all([{"message": "y"}] * 4)
        assert all(isinstance(r, StepResult) for r in after)
        assert pool.sessions_per_url() == {first.url: 4}


async def test_a_full_replica_passes_sessions_to_another(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    small = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=1))
    big = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=10))
    with caplog.at_level(logging.WARNING, logger="openenv_hub.pool"):
        async with EnvPool([small.url, big.url], size=4, client=TypedEnv) as pool:
            results = await pool.reset_all()
            assert all(isinstance(r, StepResult) for r in results)
            assert pool.sessions_per_url() == {small.url: 1, big.url: 3}
    _assert_refusals_logged(caplog, small.url, big.url)


def test_the_sync_twin_says_where_a_full_replica_sent_sessions(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    small = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=1))
    big = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=10))
    pool = EnvPool([small.url, big.url], size=3, client=TypedEnv).sync()
    with caplog.at_level(logging.WARNING, logger="openenv_hub.pool"), pool:
        assert all(isinstance(r, StepResult) for r in pool.reset_all())
        assert pool.sessions_per_url() == {small.url: 1, big.url: 2}
    _assert_refusals_logged(caplog, small.url, big.url)


def _assert_refusals_logged(caplog: pytest.LogCaptureFixture, full: str, other: str) -> None:
    """Every session that went elsewhere is logged once, with the replica that refused it."""
    moved = [r.getMessage() for r in caplog.records if "refused a session" in r.getMessage()]
    assert moved, "no refusal was logged"
    assert all(f"{full} refused a session" in m and m.endswith(f"opened on {other}") for m in moved)
    assert all("capacity" in m.lower() or "sessions" in m.lower() for m in moved), moved


async def test_no_room_anywhere_is_a_typed_slot_error(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=2))
    async with EnvPool(server.url, size=3) as pool:
        results = await pool.reset_all()
        errors = [r for r in results if isinstance(r, SlotError)]
        assert len(errors) == 1 and isinstance(errors[0].cause, SessionCapacityError)


async def test_a_provider_is_asked_for_its_replicas_on_each_reset(two_servers: list[Any]) -> None:
    first, second = two_servers

    class Replicas:  # what a provider whose replica moved reports
        runtime = "test"
        base_urls = [first.url]

        @property
        def base_url(self) -> str:
            return self.base_urls[0]

        def logs(self, tail_lines: int = 200) -> str:
            return ""

        def stop(self) -> None:
            pass

    provider = Replicas()
    async with EnvPool(provider, size=2) as pool:
        assert pool.sessions_per_url() == {first.url: 2}
        first.stop()
        provider.base_urls = [second.url]
        assert all(isinstance(r, StepResult) for r in await pool.reset_all())
        assert pool.sessions_per_url() == {second.url: 2}


async def test_sessions_refused_a_connection_go_elsewhere_and_it_is_logged(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    live, dead = serve(create_app(Typed, Message, Echoed)), "http://127.0.0.1:9"
    with caplog.at_level(logging.WARNING, logger="openenv_hub.pool"):
        async with EnvPool([dead, live.url], size=2) as pool:
            assert pool.sessions_per_url() == {live.url: 2}
        with EnvPool([dead, live.url], size=2).sync() as sync_pool:
            assert sync_pool.sessions_per_url() == {live.url: 2}
    moved = [r.getMessage() for r in caplog.records if "refused a session" in r.getMessage()]
    assert len(moved) == 2, moved  # one slot per pool was placed on the dead URL first
    assert all(f"{dead} refused a session (Failed to connect" in m for m in moved), moved
    assert all(m.endswith(f"so it was opened on {live.url}") for m in moved), moved


async def test_a_url_where_nothing_listens_fails_to_open() -> None:
    with pytest.raises(ConnectError):
        async with EnvPool("http://127.0.0.1:9", size=2):
            pass


@pytest.mark.parametrize(
    ("options", "message"),
    [({"size": 0}, "at least 1"), ({"on_error": "ignore"}, "not a policy")],
)
def test_bad_options_say_what_is_allowed(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        EnvPool("http://127.0.0.1:8000", **options)


async def test_one_action_per_slot(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    async with EnvPool(server.url, size=2) as pool:
        with pytest.raises(ConfigurationError, match="2 slots"):
            await pool.step_all([{"message": "only one"}])
        with pytest.raises(ConfigurationError, match="seeds"):
            await pool.reset_all(seeds=[1])


async def test_one_slot_steps_without_waiting_for_the_others(two_servers: list[Any]) -> None:
    first, second = two_servers
    async with EnvPool([first.url, second.url], size=4, client=TypedEnv) as pool:
        assert isinstance(await pool.reset(0, seed=1), StepResult)
        for i in range(1, 4):
            assert isinstance(await pool.reset(i), StepResult)
        slow = asyncio.ensure_future(pool.step(0, Message(message="slow", delay_s=2.0)))
        started = time.monotonic()
        for _ in range(3):  # slot 1 takes three steps while slot 0's first one runs
            result = await pool.step(1, Message(message="quick"))
            assert isinstance(result, StepResult) and result.observation.echoed_message == "quick"
        assert time.monotonic() - started < 1.5 and not slow.done()
        assert (await slow).observation.echoed_message == "slow"  # type: ignore[union-attr]

        on_second = next(slot.index for slot in pool.slots if slot.url == second.url)
        second.stop()
        failed = await pool.step(on_second, Message(message="lost"))
        assert isinstance(failed, SlotError) and failed.slot == on_second and failed.session_lost
        on_first = next(slot.index for slot in pool.slots if slot.url == first.url)
        assert isinstance(await pool.step(on_first, Message(message="kept")), StepResult)
        assert isinstance(await pool.reset(on_second), StepResult)  # a new session, on first
        assert pool.slots[on_second].url == first.url
        with pytest.raises(ConfigurationError, match="slots are 0 to 3"):
            await pool.step(4, Message(message="nowhere"))


def test_the_sync_twin_reads_like_the_async_pool(two_servers: list[Any]) -> None:
    first, second = two_servers
    with EnvPool([first.url, second.url], size=6, client=TypedEnv).sync() as pool:
        assert pool.sessions_per_url() == {first.url: 3, second.url: 3}
        pool.reset_all(seeds=range(6))
        results = pool.step_all(_messages(6, "s"))
        assert [r.observation.echoed_message for r in results] == [f"s{i}" for i in range(6)]  # type: ignore[union-attr]
        on_second = [slot.index for slot in pool.slots if slot.url == second.url]
        second.stop()
        results = pool.step_all(_messages(6))
        assert [i for i, r in enumerate(results) if isinstance(r, SlotError)] == on_second
        assert all(isinstance(r, StepResult) for r in pool.reset_all())
        assert pool.sessions_per_url() == {first.url: 6}
        assert pool.reset(2, seed=7).observation.echoed_message == "ready"  # type: ignore[union-attr]
        assert pool.step(2, Message(message="one")).observation.echoed_message == "one"  # type: ignore[union-attr]
    assert _holds(first, 0)


async def test_both_pools_open_a_refused_slot_on_the_replica_with_fewest_sessions_now(
    two_servers: list[Any],
) -> None:
    """One slot state machine for both drivers: a slot refused by a dead replica goes to the
    replica that holds the fewest sessions when it is placed again, not the one that did when
    its opening began."""
    first, second = two_servers
    urls = ["http://127.0.0.1:9", first.url, second.url]
    async with EnvPool(urls, size=2) as pool:
        assert pool.sessions_per_url() == {first.url: 1, second.url: 1}
    with EnvPool(urls, size=2).sync() as sync_pool:
        assert sync_pool.sessions_per_url() == {first.url: 1, second.url: 1}
