"""The `openenv` package's client reads our rubric's rewards and breakdowns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from peer_support import drive


@pytest.mark.peer
def test_the_openenv_client_reads_the_breakdown(peer_python: Path, echo_server: Any) -> None:
    result = drive(peer_python, echo_server.url, "generic")
    steps = result["steps"]
    assert steps[0]["reward"] == 0.0  # list_tools: no tool called
    for step in steps[1:]:
        assert step["reward"] > 0.5
        assert set(step["observation"]["metadata"]["reward_breakdown"]) == {
            "tool_succeeded",
            "message_length",
        }
    assert result["state"]["rewards"]["episode_return"] == pytest.approx(
        sum(s["reward"] for s in steps)
    )
