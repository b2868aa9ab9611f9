"""When the open-file limit, not max_concurrent_envs, stops new sessions, the error says so."""

from __future__ import annotations

import logging
import resource

import pytest
from sample_envs import Message, Typed

from openenv_hub.errors import SessionCapacityError
from openenv_hub.server.capacity import FILES_KEPT_FOR_SERVER
from openenv_hub.server.sessions import SessionPool

LOW_LIMIT = FILES_KEPT_FOR_SERVER + 5


def pool_under_low_file_limit(max_concurrent_envs: int) -> SessionPool:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW_LIMIT, hard))
    try:  # the pool reads the limit when it is made
        return SessionPool(
            Typed, action_cls=Message, max_concurrent_envs=max_concurrent_envs, env_name="fd_env"
        )
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_the_open_file_limit_stopping_sessions_is_named_in_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="openenv_hub.server"):
        pool = pool_under_low_file_limit(max_concurrent_envs=1000)
    warned = [r.getMessage() for r in caplog.records if "ulimit -n" in r.getMessage()]
    assert (
        len(warned) == 1 and "'fd_env'" in warned[0] and "max_concurrent_envs is 1000" in warned[0]
    )
    try:
        for _ in range(5):
            await pool.open()
        with pytest.raises(SessionCapacityError) as refused:
            await pool.open()
        message = str(refused.value)
        assert f"may open only {LOW_LIMIT} files (ulimit -n)" in message
        assert "not max_concurrent_envs (1000)" in message and "hard limit" in message
    finally:
        await pool.aclose()


async def test_max_concurrent_envs_below_the_file_limit_gives_the_usual_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="openenv_hub.server"):
        pool = pool_under_low_file_limit(max_concurrent_envs=2)
    assert not [r for r in caplog.records if "ulimit -n" in r.getMessage()]
    try:
        await pool.open()
        await pool.open()
        with pytest.raises(SessionCapacityError, match="2/2 sessions active") as refused:
            await pool.open()
        assert "ulimit" not in str(refused.value)
    finally:
        await pool.aclose()
