"""One table from exceptions to wire codes: every server error class, through every transport.

An environment raises each :class:`ServerReplyError` class; HTTP answers the class's status and
code, ``/ws`` sends a frame the client turns back into that very class, JSON-RPC answers the
class's code, and the web UI shows the class's title.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from openenv_hub import Action, GenericEnvClient, create_app
from openenv_hub import errors as errors_module
from openenv_hub.errors import ServerReplyError, SessionError, error_from_wire
from openenv_hub.model.tools import MCPEnvironment
from openenv_hub.types import Observation, Tool
from openenv_hub.ui.actions import _error_outcome


def reply_classes() -> list[type[ServerReplyError]]:
    found = [
        cls
        for cls in vars(errors_module).values()
        if isinstance(cls, type) and issubclass(cls, ServerReplyError)
    ]
    return sorted(found, key=lambda cls: cls.__name__)


SPECIAL: dict[str, Any] = {
    "SessionCapacityError": lambda cls: cls(3, 3),
    "EnvironmentFactoryError": lambda cls: cls("make_env"),
    "ToolCallError": lambda cls: cls("dig", "execution_error", "no shovel"),
    "SessionNotFoundError": lambda cls: cls("s-1"),
}


def sample(cls: type[ServerReplyError]) -> ServerReplyError:
    make = SPECIAL.get(cls.__name__)
    return make(cls) if make else cls(f"{cls.__name__} raised on purpose")


class Raises(MCPEnvironment):
    """Raises the error it is told to, from step and from its tool listing."""

    error: ServerReplyError | None = None

    def step_other(self, action: Action, timeout_s: float | None = None, **kw: Any) -> Observation:
        assert self.error is not None
        raise self.error

    def list_tools(self) -> list[Tool]:  # type: ignore[override]
        assert self.error is not None
        raise self.error


@pytest.fixture(params=reply_classes(), ids=lambda cls: cls.__name__)
def raised(request: pytest.FixtureRequest) -> ServerReplyError:
    error = sample(request.param)
    Raises.error = error
    return error


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Any:
    from serving import ServerThread

    server = ServerThread(create_app(Raises, Action))
    server.start()
    request.addfinalizer(server.stop)
    return server


def test_every_server_error_class_declares_its_codes() -> None:
    for cls in reply_classes():
        assert cls.code and 400 <= cls.http_status < 600 and cls.jsonrpc_code < 0 and cls.title


def test_http_answers_the_class_status_and_code(server: Any, raised: ServerReplyError) -> None:
    reply = httpx.post(f"{server.url}/step", json={"action": {}})
    assert reply.status_code == raised.http_status
    body = reply.json()
    assert body["code"] == raised.code and body.get("reason") == raised.reason


async def test_the_websocket_client_rebuilds_the_class(
    server: Any, raised: ServerReplyError
) -> None:
    async with GenericEnvClient(server.url) as env:
        await env.reset()
        with pytest.raises(ServerReplyError) as caught:
            await env.step({})
    assert type(caught.value) is type(raised)
    assert caught.value.message == raised.message and caught.value.data == raised.data


def test_json_rpc_answers_the_class_code(server: Any, raised: ServerReplyError) -> None:
    reply = httpx.post(
        f"{server.url}/mcp", json={"jsonrpc": "2.0", "method": "tools/list", "id": 7}
    ).json()
    assert reply["id"] == 7 and reply["error"]["code"] == raised.jsonrpc_code
    assert reply["error"]["message"] == raised.message


def test_the_ui_shows_the_class_title(raised: ServerReplyError) -> None:
    assert _error_outcome(raised).message == raised.title


def test_a_subclass_of_its_own_travels_as_its_parent(server: Any) -> None:
    class QuotaExceeded(SessionError):
        """An environment's own error, derived from a server error class."""

    Raises.error = QuotaExceeded("daily quota used up")
    reply = httpx.post(f"{server.url}/step", json={"action": {}})
    assert reply.status_code == 409 and reply.json()["code"] == "SESSION_ERROR"
    rebuilt = error_from_wire({"message": "daily quota used up", "code": "SESSION_ERROR"})
    assert type(rebuilt) is SessionError
