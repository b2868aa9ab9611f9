"""Where a server's wire is: base URLs in every accepted form, and bad ones refused by name."""

from __future__ import annotations

import doctest

import pytest

from openenv_hub.errors import ConfigurationError
from openenv_hub.protocol import urls
from openenv_hub.protocol.urls import http_url, is_loopback, ws_url


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("https://example.org/", "wss://example.org/ws"),
        ("127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("ws://host:1/ws", "ws://host:1/ws"),
    ],
)
def test_every_form_of_a_base_url_gives_its_socket(base: str, expected: str) -> None:
    assert ws_url(base) == expected
    assert http_url(base) == expected.replace("ws", "http", 1).removesuffix("/ws")


@pytest.mark.parametrize(
    ("base", "message"),
    [
        ("", "empty"),
        ("ftp://host", "scheme 'ftp'"),
        ("http://:80", "no host"),
        ("http://h:99999", "not a valid URL"),
    ],
)
def test_a_bad_base_url_is_refused_saying_why(base: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ws_url(base)


def test_loopback_hosts() -> None:
    assert is_loopback("ws://127.0.0.5:1/ws") and is_loopback("http://localhost")
    assert not is_loopback("https://example.org")


def test_the_module_example_holds() -> None:
    assert doctest.testmod(urls).failed == 0
