"""``openenv ps --daytona`` and ``openenv stop --daytona`` end to end against the local Daytona:
ps lists this toolkit's sandboxes with state, age, size, auto-stop and owner; stop deletes them.
(``openenv serve NS/NAME --runtime daytona`` is tested with the Space, in
test_daytona_runtime.py, where its image is built once.)"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

import pytest
from cli_runner import CliResult, cli
from daytona_support import local_daytona, sandbox_containers

from openenv_hub.localdaytona import LocalDaytona
from openenv_hub.runtimes.daytona import DaytonaProvider

__all__ = ["cli", "local_daytona"]  # the fixtures, imported to be registered here


def _ids(daytona: LocalDaytona) -> list[str]:
    return [record.id for record in daytona.sandboxes.listed(labels={}, states=[], ids=[])]


@pytest.mark.docker
@pytest.mark.slow
def test_ps_lists_the_sandboxes_and_stop_deletes_them(
    local_daytona: LocalDaytona, echo_image: str, cli: Callable[..., CliResult]
) -> None:
    with DaytonaProvider.start(echo_image) as provider:
        (sandbox_id,) = provider.sandbox_ids
        listed = cli("ps", "--daytona")
        assert listed.code == 0, listed.text
        (row,) = [line for line in listed.out.splitlines() if sandbox_id in line]
        assert "started" in row and "1 CPU, 1 GiB, 3 GiB disk" in row and "15 min" in row
        assert "openenv-test-rt-echo-env-latest" in row and f"pid {os.getpid()}" in row
        assert re.search(r"\b\d+s\b", row), row  # the age
        (mine,) = [
            s for s in json.loads(cli("ps", "--daytona", "--json").out) if s["id"] == sandbox_id
        ]
        assert (
            mine["owner_alive"] and mine["owner_pid"] == os.getpid() and mine["state"] == "started"
        )

        unknown = cli("stop", "--daytona", "ffffffff")
        assert unknown.code == 1 and "nothing was deleted" in unknown.text
        assert sandbox_id in _ids(local_daytona)
        stopped = cli("stop", "--daytona", sandbox_id[:8])
        assert stopped.code == 0 and f"Deleted sandbox {sandbox_id}" in stopped.out
        assert sandbox_id not in _ids(local_daytona) and sandbox_containers(sandbox_id) == []
        (gone,) = provider.failures()
        assert gone.state == "destroyed"
    assert "No sandbox of openenv-hub is on this Daytona." in cli("ps", "--daytona").out
