"""The clients against a real server: typed parsing, timeouts, reconnects, lost episodes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from polling import eventually
from sample_envs import Echoed, Message, Typed
from websockets.protocol import State as WsState

from openenv_hub import EnvClient, GenericEnvClient, State, create_app
from openenv_hub.errors import (
    ActionValidationError,
    ConfigurationError,
    ConnectError,
    EnvironmentExecutionError,
    EnvTimeoutError,
    SessionCapacityError,
    SessionLostError,
)


class TypedEnv(EnvClient[Message, Echoed, State]):
    action_type, observation_type, state_type = Message, Echoed, State


@pytest.fixture
def typed_server(serve: Any) -> Any:
    return serve(create_app(Typed, Message, Echoed))


async def test_typed_round_trip(typed_server: Any) -> None:
    async with TypedEnv(base_url=typed_server.url) as env:
        first = await env.reset(episode_id="ep-1", seed=3)
        assert isinstance(first.observation, Echoed) and first.observation.echoed_message == "ready"
        result = await env.step(Message(message="hello"))
        assert result.observation.message_length == 5 and result.reward == pytest.approx(0.5)
        assert result.done is False and (await env.step(Message(message="bye"))).done is True
        state = await env.state()
        assert isinstance(state, State) and state.episode_id == "ep-1" and state.step_count == 2


@pytest.mark.parametrize("form", ["http://{}", "ws://{}", "{}", "http://{}/", "ws://{}/ws"])
async def test_base_url_forms(typed_server: Any, form: str) -> None:
    async with GenericEnvClient(form.format(typed_server.url.removeprefix("http://"))) as env:
        assert (await env.reset()).observation["echoed_message"] == "ready"


def test_sync_twin_reads_like_the_async_client(typed_server: Any) -> None:
    with TypedEnv(base_url=typed_server.url).sync() as env:
        env.reset(episode_id="sync")
        result = env.step(Message(message="abc"))
        assert isinstance(result.observation, Echoed) and result.observation.echoed_message == "abc"
        assert env.state().episode_id == "sync"


def test_plain_with_on_the_async_client_explains_itself(typed_server: Any) -> None:
    with pytest.raises(TypeError, match=r"\.sync\(\)"), TypedEnv(base_url=typed_server.url):
        pass


async def test_server_errors_are_typed(typed_server: Any) -> None:
    async with GenericEnvClient(typed_server.url) as env:
        await env.reset()
        with pytest.raises(ActionValidationError) as invalid:
            await env.step({"message": 5})
        assert invalid.value.code == "VALIDATION_ERROR" and invalid.value.errors[0]["loc"] == [
            "message"
        ]
        with pytest.raises(EnvironmentExecutionError, match="asked to fail"):
            await env.step({"message": "x", "fail": True})
        assert (await env.step({"message": "ok"})).observation["echoed_message"] == "ok"


async def test_timeout_never_desynchronises(typed_server: Any) -> None:
    async with TypedEnv(base_url=typed_server.url, message_timeout_s=0.3) as env:
        await env.reset()
        with pytest.raises(EnvTimeoutError) as timed_out:
            await env.step(Message(message="slow", delay_s=1.0))
        assert timed_out.value.timeout_s == 0.3
        # The late reply to "slow" must never be read as the answer to a later call.
        with pytest.raises(SessionLostError):
            await env.step(Message(message="next"))
        await env.reset()
        result = await env.step(Message(message="next"))
        assert result.observation.echoed_message == "next"
        # Once the slow step has ended (its late reply went to the dropped socket) ...
        typed_server.wait_for(lambda: typed_server.pool.active_sessions == 1)
        assert (await env.step(Message(message="after"))).observation.echoed_message == "after"


def test_sync_timeout_never_desynchronises(typed_server: Any) -> None:
    with TypedEnv(base_url=typed_server.url, message_timeout_s=0.3).sync() as env:
        env.reset()
        with pytest.raises(EnvTimeoutError):
            env.step(Message(message="slow", delay_s=1.0))
        assert env.reset().observation.echoed_message == "ready"
        typed_server.wait_for(lambda: typed_server.pool.active_sessions == 1)  # slow step over
        assert env.step(Message(message="own answer")).observation.echoed_message == "own answer"


async def test_server_closed_socket_is_reopened_and_the_lost_episode_reported(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, session_idle_timeout_s=0.3))
    async with TypedEnv(base_url=server.url) as env:
        await env.reset(episode_id="doomed")
        await env.step(Message(message="a"))
        server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=5)  # reaped
        # Whether or not the close frame has arrived yet, the episode is reported lost.
        with pytest.raises(SessionLostError, match="call reset"):
            await env.step(Message(message="b"))
        with pytest.raises(SessionLostError):
            await env.state()  # still lost until reset: never a silent new episode
        assert (await env.reset(episode_id="fresh")).observation.echoed_message == "ready"
        assert (await env.state()).episode_id == "fresh"


async def test_reset_after_server_close_needs_no_error(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, session_idle_timeout_s=0.3))
    async with TypedEnv(base_url=server.url) as env:
        await env.connect()
        server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=5)
        await eventually(lambda: env._ws is None or env._ws.state is not WsState.OPEN)
        assert (await env.reset()).observation.echoed_message == "ready"


async def test_connect_error_names_the_url() -> None:
    from serving import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectError, match=r"ws://127\.0\.0\.1:\d+/ws"):
        await GenericEnvClient(url, connect_timeout_s=2).reset()


@pytest.mark.parametrize(
    ("base_url", "options", "message"),
    [
        ("http://127.0.0.1:70000", {}, "'http://127.0.0.1:70000' is not a valid URL"),
        ("http://127.0.0.1:port", {}, "'http://127.0.0.1:port' is not a valid URL"),
        ("http://:8000", {}, "'http://:8000' names no host"),
        ("http://127.0.0.1:8000", {"message_timeout_s": -1}, "message_timeout_s must be"),
        ("http://127.0.0.1:8000", {"connect_timeout_s": 0}, "connect_timeout_s must be"),
        ("http://127.0.0.1:8000", {"ping_interval_s": 0}, "ping_interval_s must be"),
        ("http://127.0.0.1:8000", {"max_message_size_mb": 0}, "max_message_size_mb must be"),
    ],
)
@pytest.mark.parametrize(
    "client", [GenericEnvClient, lambda *a, **k: GenericEnvClient(*a, **k).sync()]
)
def test_a_bad_url_or_option_is_refused_when_the_client_is_made(
    client: Any, base_url: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        client(base_url, **options)


async def test_capacity_error_is_typed(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=1))
    async with GenericEnvClient(server.url) as first, GenericEnvClient(server.url) as second:
        await first.reset()
        with pytest.raises(SessionCapacityError) as full:
            await second.reset()
        assert (full.value.active_sessions, full.value.max_sessions) == (1, 1)


async def test_keepalive_options_reach_the_socket(typed_server: Any) -> None:
    async with TypedEnv(
        base_url=typed_server.url, ping_interval_s=None, ping_timeout_s=None
    ) as env:
        assert (
            env._ws is not None and env._ws.ping_interval is None and env._ws.ping_timeout is None
        )
    async with TypedEnv(base_url=typed_server.url, ping_interval_s=3, ping_timeout_s=4) as env:
        assert env._ws is not None and (env._ws.ping_interval, env._ws.ping_timeout) == (3, 4)


class StepsWithoutReset(Typed):
    """No episode to lose when the connection closes: the error is about the reply alone."""

    ALLOWS_STEP_BEFORE_RESET = True


@pytest.mark.parametrize("sync", [False, True])
async def test_reply_over_the_size_limit_is_typed(serve: Any, sync: bool) -> None:
    from openenv_hub.errors import MessageTooLargeError

    server = serve(create_app(StepsWithoutReset, Message, Echoed))
    env = TypedEnv(base_url=server.url, max_message_size_mb=0.5)
    big = Message(message="x" * 600_000)
    if sync:
        with env.sync() as client, pytest.raises(MessageTooLargeError, match="max_message_size_mb"):
            client.step(big)
        return
    async with env:
        with pytest.raises(MessageTooLargeError, match="1009"):
            await env.step(big)
        assert (await env.reset()).observation.echoed_message == "ready"


@pytest.mark.parametrize("sync", [False, True])
async def test_factory_failure_is_typed(serve: Any, sync: bool) -> None:
    from sample_envs import failing_factory

    from openenv_hub.errors import EnvironmentFactoryError

    server = serve(create_app(failing_factory, Message, Echoed))
    env = TypedEnv(base_url=server.url)
    with pytest.raises(EnvironmentFactoryError, match="no GPU today") as failed:
        if sync:
            with env.sync() as client:
                client.reset()
        else:
            async with env:
                await env.reset()
    assert failed.value.factory_name == "failing_factory"


async def test_a_refused_handshake_reports_the_status_and_the_body() -> None:
    """A Space whose app is not running answers the handshake with an HTTP error and a reason."""
    reason = b"Space alice/echo_env is not running (stage BUILD_ERROR)"

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(reason), reason)
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(refuse, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(ConnectError) as refused:
            await GenericEnvClient(f"http://127.0.0.1:{port}").reset()
    finally:
        server.close()
        await server.wait_closed()
    assert refused.value.status_code == 503 and refused.value.body == reason.decode()
    assert "HTTP 503" in str(refused.value) and "BUILD_ERROR" in str(refused.value)
