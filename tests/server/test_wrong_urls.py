"""The URLs a new user tries first get an answer that says where to go: ``GET /`` of a server
without the web UI names its routes (instead of a bare 404), and a client, or ``openenv
validate``, given the web UI's URL (``.../web``) is told to drop ``/web``."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from cli_runner import CliResult
from serving import ServerThread

from openenv_hub import GenericEnvClient, create_app
from openenv_hub.errors import ConnectError

DROP = "Drop /web"


def test_the_root_of_a_server_without_the_web_ui_says_where_things_are(
    echo_server: ServerThread,
) -> None:
    answer = httpx.get(echo_server.url + "/")
    assert answer.status_code == 200
    routes = answer.json()
    assert (routes["health"], routes["docs"], routes["websocket"]) == ("/health", "/docs", "/ws")
    assert "--web" in routes["web"]


async def test_a_client_given_the_web_ui_url_is_told_to_drop_web(
    echo_server: ServerThread,
) -> None:
    with pytest.raises(ConnectError) as refused:
        async with GenericEnvClient(base_url=f"{echo_server.url}/web") as env:
            await env.reset()
    message = str(refused.value)
    assert "HTTP 404" in message and DROP in message, message
    assert f"the environment is at {echo_server.url} " in message


async def test_the_web_ui_does_not_take_the_hint_away(
    serve: Callable[..., ServerThread],
) -> None:
    """With the web UI mounted at /web, a socket opened under it still gets the hint."""
    pytest.importorskip("gradio")
    from echo_env.server.environment import EchoEnvironment

    server = serve(create_app(EchoEnvironment, web=True))
    async with httpx.AsyncClient() as http:
        assert (await http.get(server.url + "/")).status_code == 307  # to /web/
    with pytest.raises(ConnectError) as refused:
        async with GenericEnvClient(base_url=f"{server.url}/web/") as env:
            await env.reset()
    assert "HTTP 404" in str(refused.value) and DROP in str(refused.value)


def test_validate_given_the_web_ui_url_says_to_drop_web(
    echo_server: ServerThread, cli: Callable[..., CliResult]
) -> None:
    result = cli("validate", f"{echo_server.url}/web", "--timeout", "5")
    assert result.code == 1
    assert result.text.count(DROP) == 1, result.text
    assert cli("validate", echo_server.url, "--timeout", "5").code == 0


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("http://127.0.0.1:8000/web", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/web/", "http://127.0.0.1:8000"),
        ("ws://127.0.0.1:8000/web/ws", "http://127.0.0.1:8000"),
        ("https://example.org/proxy/web/mcp", "https://example.org/proxy"),
        ("http://127.0.0.1:8000", None),
        ("http://127.0.0.1:8000/ws", None),
        ("http://127.0.0.1:8000/website", None),
    ],
)
def test_which_urls_name_the_web_ui(url: str, hint: str | None) -> None:
    from openenv_hub.protocol.urls import web_ui_path_hint

    said = web_ui_path_hint(url)
    if hint is None:
        assert said == ""
    else:
        assert said.startswith(DROP) and f"the environment is at {hint} " in said
