"""A server's URL may carry ``user:password@`` (the client sends it as basic auth); no error
message and no log line shows it, while the URL still works and the rest of it is shown."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from sample_envs import Echoed, Message, Typed

from openenv_hub import EnvClient, EnvPool, State, create_app
from openenv_hub.errors import ConfigurationError, ConnectError, EnvTimeoutError, SlotError

PASSWORD = "s3cret-pw"


class TypedEnv(EnvClient[Message, Echoed, State]):
    action_type, observation_type, state_type = Message, Echoed, State


def with_credentials(url: str) -> str:
    return url.replace("://", f"://alice:{PASSWORD}@", 1)


async def test_a_refused_connection_names_the_server_without_the_password() -> None:
    with pytest.raises(ConnectError) as refused:
        async with TypedEnv(base_url=with_credentials("http://127.0.0.1:9")):
            pass
    message = str(refused.value)
    assert PASSWORD not in message and "alice" not in message, message
    assert "Failed to connect to ws://***@127.0.0.1:9/ws" in message, message


def test_a_bad_scheme_is_named_without_the_password() -> None:
    with pytest.raises(ConfigurationError) as bad:
        TypedEnv(base_url=with_credentials("ftp://127.0.0.1:9")).sync().connect()
    assert PASSWORD not in str(bad.value) and "'ftp://***@127.0.0.1:9'" in str(bad.value)


async def test_a_timeout_names_the_server_without_the_password(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    url = with_credentials(server.url)
    async with TypedEnv(base_url=url, message_timeout_s=0.3) as env:
        await env.reset()  # the credentials do not stop the client from connecting
        with pytest.raises(EnvTimeoutError) as timed_out:
            await env.step(Message(message="slow", delay_s=1.0))
    message = str(timed_out.value)
    assert (
        PASSWORD not in message and f"No reply from ws://***@127.0.0.1:{server.port}/ws" in message
    )


async def test_a_pool_logs_and_reports_replicas_without_their_passwords(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    live, dead = with_credentials(server.url), with_credentials("http://127.0.0.1:9")
    with caplog.at_level(logging.WARNING, logger="openenv_hub.pool"):
        async with EnvPool([dead, live], size=2, client=TypedEnv) as pool:
            assert pool.sessions_per_url() == {live: 2}
            await pool.reset_all()
            server.stop()
            results = await pool.step_all([Message(message="a"), Message(message="b")])
    failures = [str(r) for r in results if isinstance(r, SlotError)]
    logged = [record.getMessage() for record in caplog.records]
    # The pool's own lines each name their replica; other warnings may come with them (a
    # loaded machine makes the server warn of a slow call), and hold no password either.
    by_pool = [r.getMessage() for r in caplog.records if r.name == "openenv_hub.pool"]
    assert len(failures) == 2 and any("refused a session" in line for line in by_pool), logged
    for text in failures + logged:
        assert PASSWORD not in text and "alice" not in text, text
    for text in failures + by_pool:
        assert "***@127.0.0.1:" in text, text
