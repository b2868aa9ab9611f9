"""The address a server is bound to reaches the app as an argument, not through os.environ:
``create_app(bind_host=...)``, and ``serve_app`` tells an app made by ``create_app`` where it
serves. ``$OPENENV_BIND_HOST`` stays the fallback of a server that runs in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from echo_env.server.environment import EchoEnvironment
from serving import free_port

from openenv_hub.server.app import create_app, tell_bind_host
from openenv_hub.types import Action


def test_create_app_takes_the_bind_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENENV_BIND_HOST", raising=False)
    monkeypatch.delenv("OPENENV_WATCH", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    app = create_app(EchoEnvironment, Action, bind_host="127.0.0.1")
    assert app.state.sessions.watch_rule().allowed
    assert not create_app(EchoEnvironment, Action).state.sessions.watch_rule().allowed


def test_tell_bind_host_tells_apps_of_create_app_only() -> None:
    app = create_app(EchoEnvironment, Action)
    assert tell_bind_host(app, "::1") and app.state.sessions.bind_host == "::1"
    assert not tell_bind_host("pkg.app:app", "::1") and not tell_bind_host(object(), "::1")


def test_serve_app_leaves_the_environment_alone() -> None:
    """A server started by serve_app with an app, or an import string, knows its address
    while $OPENENV_BIND_HOST stays unset."""
    port = free_port()
    code = f"""
        import os, threading, time
        import httpx
        from echo_env.server.environment import EchoEnvironment
        from openenv_hub.server.app import create_app, serve_app
        from openenv_hub.types import Action

        app = create_app(EchoEnvironment, Action)

        def check():
            for _ in range(600):
                try:
                    if httpx.get("http://127.0.0.1:{port}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            print("BIND", os.environ.get("OPENENV_BIND_HOST"), app.state.sessions.bind_host, flush=True)
            os._exit(0)

        threading.Thread(target=check, daemon=True).start()
        serve_app(app, host="127.0.0.1", port={port})
    """
    env = {k: v for k, v in os.environ.items() if k != "OPENENV_BIND_HOST"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = [line.split() for line in done.stdout.splitlines() if line.startswith("BIND ")]
    assert said == [["BIND", "None", "127.0.0.1"]], done.stdout + done.stderr


def test_an_import_string_that_does_not_load_is_an_error_not_a_traceback() -> None:
    """serve_app imports an import string itself now (to tell the app its address)."""
    done = subprocess.run(
        [sys.executable, "-m", "openenv_hub.server", "no_such_module:app", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Error: The app 'no_such_module:app' does not load" in done.stderr
    assert "Traceback" not in done.stderr
