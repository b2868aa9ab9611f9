"""The Daytona reaper gives up at once on a local Daytona that has stopped, rather than keeping a
process alive for minutes after the process it watched."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from openenv_hub.transport.local_ports import free_port


def test_a_reaper_whose_local_daytona_has_stopped_exits_at_once() -> None:
    pytest.importorskip("daytona")
    place = {"api_url": f"http://127.0.0.1:{free_port()}/api", "api_key": "k", "target": None}
    done = subprocess.run(
        [sys.executable, "-m", "openenv_hub.runtimes._daytona_reaper", "some-owner"],
        input=json.dumps(place) + "\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
