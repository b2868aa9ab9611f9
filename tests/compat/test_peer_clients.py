"""The `openenv` package's own clients drive our servers, and get what its servers give them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from peer_support import drive

pytestmark = pytest.mark.peer

# Fields that legitimately differ between the two implementations: library branding and
# version strings, docstring wording, ids, ports and timings.
_VOLATILE = {
    "meta",
    "title",
    "icons",
    "annotations",
    "outputSchema",
    "execution",
    "description",
    "session_id",
    "ws_url",
    "url",
    "import_s",
    "run_s",
    "elapsed_s",
    "traceback",
}


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str) and value.startswith("Server error: "):
        return re.sub(r"^Server error: .*\(code: (\w+)\)$", r"(code: \1)", value)
    return value


@pytest.mark.parametrize(
    "mode", ["generic", "generic-sync", "generic-auto", "mcp", "mcp-sync", "mcp-ws"]
)
def test_peer_clients_over_ws_and_mcp(
    peer_python: Path, our_echo: Any, peer_echo: Any, mode: str
) -> None:
    ours = drive(peer_python, our_echo.url, mode)
    theirs = drive(peer_python, peer_echo.url, mode)
    assert normalized(ours) == normalized(theirs)
    assert ours["env"] == "echo"
    if mode.startswith("mcp"):
        assert ours["tool_names"] == ["echo_message", "echo_with_length"]
        assert (
            ours["call_tool"]["echo_with_length"] == {"message": "hello", "length": 5}
            or ours["call_tool"]["echo_with_length"]["length"] > 0
        )
        assert "no_such_tool" in ours["unknown_tool_error"]
    else:
        assert ours["state"] == {"episode_id": "drive-episode", "step_count": 3}


def test_peer_http_requests(peer_python: Path, our_echo: Any, peer_echo: Any) -> None:
    ours = normalized(drive(peer_python, our_echo.url, "http"))
    theirs = normalized(drive(peer_python, peer_echo.url, "http"))
    # Our /metadata names the environment as its author did.
    for side in (ours, theirs):
        side.pop("metadata")
        side["state"].pop("episode_id")
    assert ours == theirs


@pytest.mark.parametrize("mode", ["generic", "generic-sync", "http"])
def test_peer_clients_on_a_typed_environment(
    peer_python: Path, our_typed: Any, peer_typed: Any, mode: str
) -> None:
    ours = normalized(drive(peer_python, our_typed.url, mode))
    theirs = normalized(drive(peer_python, peer_typed.url, mode))
    for side in (ours, theirs):
        side.pop("metadata", None)
        if "state" in side and mode == "http":
            side["state"].pop("episode_id")
    assert ours == theirs
