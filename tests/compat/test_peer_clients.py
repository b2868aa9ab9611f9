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


def test_before_reset_the_peer_client_gets_an_error_code_it_knows(
    peer_python: Path, our_typed: Any, peer_typed: Any
) -> None:
    """Our server refuses a step or state before reset, where the peer's leaves it to the
    environment (whose constructor, in the typed example, made a state). The peer's client
    raises the refusal as it raises any environment error, and the connection goes on."""
    ours = drive(peer_python, our_typed.url, "before-reset")
    theirs = drive(peer_python, peer_typed.url, "before-reset")
    for name in ("step_error", "state_error"):
        assert ours[name].startswith("Server error: ") and "call reset() first" in ours[name]
        assert ours[name].endswith("(code: EXECUTION_ERROR)")
        assert "answered" in theirs[name]
    assert normalized(ours["steps"]) == normalized(theirs["steps"])
    assert ours["reset"] == theirs["reset"]
