"""The server's end of /ws without I/O: requests answered one at a time in arrival order, a
bounded number waiting, and nothing answered after a request that ends the connection."""

from __future__ import annotations

import json

import pytest

from openenv_hub.protocol import CLOSE_POLICY_VIOLATION, MAX_PIPELINED
from openenv_hub.protocol.connection import (
    BINARY_FRAME_REFUSAL,
    PipeliningRefused,
    ServerConnection,
)


def test_a_request_is_answered_at_once_when_nothing_is_being_answered() -> None:
    end = ServerConnection()
    for i in range(3):
        assert end.receive(f"r{i}") == f"r{i}"
        assert end.answered() is None


def test_requests_behind_one_being_answered_come_next_in_arrival_order() -> None:
    end = ServerConnection()
    assert end.receive("first") == "first"
    assert [end.receive(f"r{i}") for i in range(3)] == [None, None, None]
    assert [end.answered(), end.answered(), end.answered()] == ["r0", "r1", "r2"]
    assert end.answered() is None and not end.answering
    assert end.receive("next") == "next"


def test_one_request_more_than_may_wait_refuses_the_client() -> None:
    end = ServerConnection()
    end.receive("slow")
    for i in range(MAX_PIPELINED):
        assert end.receive(f"r{i}") is None
    with pytest.raises(PipeliningRefused, match=f"more than {MAX_PIPELINED} requests"):
        end.receive("one too many")
    assert PipeliningRefused.close_code == CLOSE_POLICY_VIOLATION == 1008
    assert end.ended and end.answered() is None
    assert end.receive("after") is None


def test_a_request_that_ends_the_connection_drops_what_waits_behind_it() -> None:
    end = ServerConnection(max_pipelined=2)
    end.receive("close")
    end.receive("never answered")
    assert end.answered(goes_on=False) is None
    assert end.ended and end.receive("later") is None


def test_a_binary_frame_is_refused_with_a_session_error() -> None:
    refusal = json.loads(BINARY_FRAME_REFUSAL)
    assert refusal["type"] == "error" and refusal["data"]["code"] == "SESSION_ERROR"
    assert "text frame" in refusal["data"]["message"]
