"""``openenv serve NS/NAME --jobs``: the Space as Hugging Face Jobs, each replica's URL, stage
and hourly cost printed; cancelled on Ctrl-C or SIGTERM (or, with ``--detach``, left running
until its timeout, with the command that stops it)."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table

from openenv_hub_cli._utils import CommandError, console, serving_until_stopped

__all__ = ["serve_jobs"]


def serve_jobs(repo_id: str, options: dict[str, Any], *, detach: bool) -> None:
    """Run ``repo_id`` as Jobs with ``options`` (replicas, flavor, timeout, public), started by
    the registry's ``jobs`` runtime."""
    from openenv_hub.runtimes import SpaceRef, starter
    from openenv_hub.runtimes.jobs import timeout_seconds

    timeout_s = timeout_seconds(options.get("timeout"))
    replicas = options.get("replicas", 1)
    console.print(
        f"Starting {replicas} Job(s) of {repo_id} on {options.get('flavor', 'cpu-basic')} "
        f"(each for at most {_duration(timeout_s)})..."
    )
    start = starter(
        "jobs", "space", SpaceRef(repo_id), {**options, "detached": detach}, what="--runtime jobs"
    )
    if detach:
        provider: Any = start()  # the jobs runtime's: its Jobs' ids, flavor and cost
        _print_jobs(provider)
        console.print(
            f"Left running for at most {_duration(timeout_s)}. Stop them with: "
            f"openenv stop --jobs {' '.join(provider.job_ids)}"
        )
        return
    with serving_until_stopped(start) as started:
        provider = started
        _print_jobs(provider)
        console.print("Press Ctrl+C to stop (the Jobs are cancelled).")
        while provider.base_urls:
            time.sleep(2)
        ended = "\n".join(str(failure) for failure in provider.failures())
        raise CommandError(f"Every Job ended:\n{ended}", hint="Read their logs above.")


def _print_jobs(provider: Any) -> None:
    hourly = provider.client.hourly_cost_usd(provider.flavor)
    cost = "?" if hourly is None else f"${hourly:.2f}/hour"
    table = Table(box=None, pad_edge=False)
    for column in ("JOB", "STAGE", "URL", "COST"):
        table.add_column(column, overflow="fold")
    urls = dict(zip(provider.job_ids, provider.base_urls, strict=False))
    for job_id in provider.job_ids:
        table.add_row(job_id, "RUNNING", urls.get(job_id, ""), cost)
    console.print(table)
    if hourly is not None:
        total = hourly * len(provider.job_ids)
        console.print(f"{len(provider.job_ids)} x {provider.flavor}: ${total:.2f}/hour in all.")
    if not provider.public:
        console.print(
            "The ports need your token: clients send 'Authorization: Bearer <HF token>' "
            "(from_hub(runtime='jobs') and EnvPool over JobsProvider do)."
        )


def _duration(seconds: float) -> str:
    """``90`` -> ``1m30s``; ``3600`` -> ``1h``."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
        f"{secs}s" if secs else "",
    ]
    return "".join(parts) or "0s"
