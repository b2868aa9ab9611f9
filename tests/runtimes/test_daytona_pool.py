"""An EnvPool over two Daytona sandboxes of the local Daytona: sessions spread over both, each
client sending its own sandbox's token; a sandbox deleted mid-episode fails only its own slots,
whose next reset_all() moves them to the live sandbox, or, when asked, to sandboxes that
replace the ones that went away."""

from __future__ import annotations

from typing import Any

import pytest
from daytona_support import local_daytona, sandbox_containers
from echo_env import CallToolAction, EchoEnv

from openenv_hub import EnvPool
from openenv_hub.errors import SlotError
from openenv_hub.localdaytona import LocalDaytona
from openenv_hub.runtimes.daytona import DaytonaProvider

__all__ = ["local_daytona"]  # the fixture, imported to be registered here

SIZE = 16


def _echo(text: str) -> CallToolAction:
    return CallToolAction(tool_name="echo_message", arguments={"message": text})


def _delete(daytona: LocalDaytona, sandbox_id: str) -> None:
    """Delete a sandbox as someone else would: with the SDK, from outside the provider."""
    from daytona import Daytona, DaytonaConfig

    sdk: Any = Daytona(DaytonaConfig(api_key=daytona.api_key, api_url=daytona.api_url))
    sdk.delete(sdk.get(sandbox_id))


@pytest.mark.docker
@pytest.mark.slow
async def test_a_pool_over_two_sandboxes_survives_one_deleted(
    local_daytona: LocalDaytona, echo_image: str
) -> None:
    with DaytonaProvider.start(echo_image, replicas=2) as sandboxes:
        first, second = sandboxes.sandbox_ids
        first_url, second_url = sandboxes.base_urls
        assert sandboxes.headers_for(first_url) != sandboxes.headers_for(second_url)
        async with EnvPool(sandboxes, size=SIZE, client=EchoEnv) as pool:
            await pool.reset_all()
            assert pool.sessions_per_url() == {first_url: SIZE // 2, second_url: SIZE // 2}
            on_first = [slot.index for slot in pool.slots if slot.url == first_url]

            _delete(local_daytona, first)
            results = await pool.step_all([_echo(f"{i}") for i in range(SIZE)])
            failed = [i for i, result in enumerate(results) if isinstance(result, SlotError)]
            assert failed == on_first
            assert all(
                results[i].observation.result["data"] == f"{i}"  # type: ignore[union-attr]
                for i in range(SIZE)
                if i not in failed
            )
            (gone,) = sandboxes.failures()
            assert (gone.sandbox_id, gone.state) == (first, "destroyed") and first in str(gone)

            results = await pool.reset_all()
            assert not any(isinstance(result, SlotError) for result in results)
            assert pool.sessions_per_url() == {second_url: SIZE}

            sandboxes.replace_failed = True  # from now on, a sandbox that goes is replaced
            _delete(local_daytona, second)
            results = await pool.step_all([_echo("x")] * SIZE)
            assert all(isinstance(result, SlotError) for result in results)
            results = await pool.reset_all()
            assert not any(isinstance(result, SlotError) for result in results), results
            assert first not in sandboxes.sandbox_ids and second not in sandboxes.sandbox_ids
            assert sorted(pool.sessions_per_url().values()) == [SIZE // 2, SIZE // 2]
            assert set(pool.sessions_per_url()) == set(sandboxes.base_urls)
    for sandbox_id in [first, second, *sandboxes.sandbox_ids]:
        assert sandbox_containers(sandbox_id) == []
