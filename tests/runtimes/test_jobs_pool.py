"""An EnvPool over two Jobs: sessions spread over both; a Job cancelled mid-run fails only its
own slots, whose next reset_all() moves them to the live Job, or, when asked, to Jobs that
replace the ones that ended."""

from __future__ import annotations

import pytest
from echo_env import CallToolAction, EchoEnv
from jobs_support import SPACE, jobs_hub

from openenv_hub import EnvPool
from openenv_hub.errors import SlotError
from openenv_hub.localhub import LocalHub
from openenv_hub.runtimes.jobs import JobsProvider

__all__ = ["jobs_hub"]  # the fixture, imported to be registered here

SIZE = 16


def _echo(text: str) -> CallToolAction:
    return CallToolAction(tool_name="echo_message", arguments={"message": text})


@pytest.mark.docker
@pytest.mark.slow
async def test_a_pool_over_two_jobs_survives_one_ending(jobs_hub: LocalHub) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=jobs_hub.endpoint, token=jobs_hub.token_for("alice"))
    with JobsProvider.from_hub(SPACE, replicas=2) as jobs:
        first, second = jobs.job_ids
        first_url, second_url = jobs.base_urls
        async with EnvPool(jobs, size=SIZE, client=EchoEnv) as pool:
            await pool.reset_all()
            assert pool.sessions_per_url() == {first_url: SIZE // 2, second_url: SIZE // 2}
            on_first = [slot.index for slot in pool.slots if slot.url == first_url]

            api.cancel_job(job_id=first, namespace="alice")
            results = await pool.step_all([_echo(f"{i}") for i in range(SIZE)])
            failed = [i for i, result in enumerate(results) if isinstance(result, SlotError)]
            assert failed == on_first
            assert all(
                results[i].observation.result["data"] == f"{i}"
                for i in range(SIZE)
                if i not in failed
            )  # type: ignore[union-attr]
            (ended,) = jobs.failures()
            assert (ended.job_id, ended.stage) == (first, "CANCELED") and first in str(ended)

            results = await pool.reset_all()
            assert not any(isinstance(result, SlotError) for result in results)
            assert pool.sessions_per_url() == {second_url: SIZE}

            jobs.replace_failed = True  # from now on, a Job that ends is replaced
            api.cancel_job(job_id=second, namespace="alice")
            results = await pool.step_all([_echo("x")] * SIZE)
            assert all(isinstance(result, SlotError) for result in results)
            results = await pool.reset_all()
            assert not any(isinstance(result, SlotError) for result in results), results
            assert first not in jobs.job_ids and second not in jobs.job_ids
            assert sorted(pool.sessions_per_url().values()) == [SIZE // 2, SIZE // 2]
            assert set(pool.sessions_per_url()) == set(jobs.base_urls)
    assert all(
        api.inspect_job(job_id=j, namespace="alice").status.stage == "CANCELED"
        for j in jobs.job_ids
    )


@pytest.mark.docker
@pytest.mark.slow
def test_a_warm_job_is_handed_out_at_once_and_another_started_ahead(jobs_hub: LocalHub) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=jobs_hub.endpoint, token=jobs_hub.token_for("alice"))
    with JobsProvider.from_hub(SPACE, replicas=1, warm=1) as jobs:
        (serving,), (warm,) = jobs.job_ids, jobs.warm_ids
        assert len(jobs.base_urls) == 1  # the warm Job serves nobody yet
        url = jobs.take()
        assert jobs.job_ids == [serving, warm] and jobs.warm_ids == []
        assert url.endswith(f"/_localhub/expose/{warm}--8000")
        with EchoEnv(url, headers=jobs.headers).sync() as env:
            assert env.call_tool("echo_message", message="warm") == "warm"
        assert jobs.wait_warm(timeout_s=120)
        (ahead,) = jobs.warm_ids
        assert api.inspect_job(job_id=ahead, namespace="alice").status.stage == "RUNNING"
    everything = [serving, warm, ahead]
    assert all(
        api.inspect_job(job_id=j, namespace="alice").status.stage == "CANCELED" for j in everything
    )
