"""The client's end of /ws without I/O: one request at a time, replies read as the answer to it,
and an episode lost with a socket never silently replaced."""

from __future__ import annotations

import doctest
import json

import pytest

from openenv_hub.errors import (
    ActionValidationError,
    ServerReplyError,
    SessionCapacityError,
    SessionLostError,
)
from openenv_hub.protocol import connection
from openenv_hub.protocol.connection import ClientConnection, request_frame

OBSERVATION = '{"type":"observation","data":{"observation":{},"reward":0.0,"done":false}}'


def test_requests_are_compact_json_with_data_only_when_given() -> None:
    assert request_frame("state") == '{"type":"state"}'
    assert json.loads(request_frame("step", {"message": "hi"})) == {
        "type": "step",
        "data": {"message": "hi"},
    }


def test_a_reset_starts_an_episode_that_a_lost_socket_takes_with_it() -> None:
    end = ClientConnection()
    end.send("reset")
    assert end.receive(OBSERVATION)["reward"] == 0.0
    assert end.episode_active and not end.episode_lost
    end.connection_lost()
    assert end.episode_lost and not end.episode_active
    for kind in ("step", "state", "mcp"):
        with pytest.raises(SessionLostError, match="call reset"):
            end.send(kind, {})
    assert end.awaiting is None  # a refused request owes nothing
    end.send("reset")
    end.receive(OBSERVATION)
    assert not end.episode_lost
    end.send("step", {"message": "again"})


def test_a_socket_lost_outside_an_episode_loses_nothing() -> None:
    end = ClientConnection()
    end.connection_lost()
    assert not end.episode_lost
    end.send("state")
    assert end.lost_during("state") is None


def test_one_request_at_a_time_until_its_reply_or_the_socket_is_gone() -> None:
    end = ClientConnection()
    end.send("step", {"a": 1})
    with pytest.raises(RuntimeError, match="still owed"):
        end.send("step", {"a": 2})
    end.connection_lost()
    end.send("step", {"a": 2})
    with pytest.raises(RuntimeError, match="no request waiting"):
        ClientConnection().receive(OBSERVATION)


def test_a_request_that_cannot_be_encoded_owes_no_reply() -> None:
    end = ClientConnection()
    with pytest.raises(Exception):  # noqa: B017 - pydantic_core's serialisation error
        end.send("step", {"action": object()})
    assert end.awaiting is None
    end.send("state")


def test_replies_are_read_as_the_answer_to_the_request_sent() -> None:
    end = ClientConnection()
    end.send("state")
    assert end.receive('{"type":"state","data":{"step_count":3}}') == {"step_count": 3}
    end.send("state")
    with pytest.raises(ServerReplyError, match="Expected a 'state' reply"):
        end.receive(OBSERVATION)
    end.send("step", {})
    with pytest.raises(ServerReplyError, match="not JSON"):
        end.receive("not json")


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"code": "VALIDATION_ERROR", "message": "bad", "errors": []}, ActionValidationError),
        ({"code": "CAPACITY_REACHED", "message": "full"}, SessionCapacityError),
    ],
)
def test_an_error_frame_raises_the_class_its_code_names(
    data: dict[str, object], error: type[Exception]
) -> None:
    end = ClientConnection()
    end.send("step", {})
    with pytest.raises(error):
        end.receive(json.dumps({"type": "error", "data": data}))
    assert end.awaiting is None  # the error was the reply


def test_closing_ends_the_episode_so_nothing_is_lost_after_it() -> None:
    end = ClientConnection()
    end.send("reset")
    end.receive(OBSERVATION)
    assert end.close_frame() == '{"type":"close"}'
    end.connection_lost()
    assert not end.episode_lost


def test_the_module_example_holds() -> None:
    assert doctest.testmod(connection).failed == 0
