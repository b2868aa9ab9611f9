"""The capture package's public surface: complete, importable, and light to import."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import openenv_hub.capture as capture
import openenv_hub.capture.proxy as proxy_module
from openenv_hub.capture import CaptureProxy, CaptureSession
from openenv_hub.errors import ConfigurationError


def test_all_names_every_public_class_and_function_of_the_package() -> None:
    for name in capture.__all__:
        assert getattr(capture, name) is not None
    public = {
        name
        for name, value in vars(capture).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("openenv_hub.capture")
    }
    assert public - set(capture.__all__) == set()


def test_importing_the_package_loads_neither_transformers_nor_aiohttp() -> None:
    code = (
        "import sys, openenv_hub.capture; "
        "heavy = {'transformers', 'torch', 'aiohttp'} & set(sys.modules); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_what_the_docs_tell_users_to_call_exists() -> None:
    """The module's example and the sessions-limit error name how to close a session: the
    names they give must be the API's (a session has no close())."""
    example = proxy_module.__doc__ or ""
    named = {("proxy", n) for n in re.findall(r"\bproxy\.(\w+)\(", example)}
    named |= {("session", n) for n in re.findall(r"\bsession\.(\w+)\(", example)}
    owners = {"proxy": CaptureProxy, "session": CaptureSession}
    assert ("proxy", "close_session") in named
    assert [(o, n) for o, n in sorted(named) if not hasattr(owners[o], n)] == []
    proxy = CaptureProxy(engine_url="http://127.0.0.1:9/v1", model="m", max_sessions=1)
    session = proxy.open_session()
    with pytest.raises(ConfigurationError) as full:
        proxy.open_session()
    assert "proxy.close_session(session)" in str(full.value)
    proxy.close_session(session)  # what the error says to do frees the slot
    assert proxy.open_session() is not session
