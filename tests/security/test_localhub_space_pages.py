"""One Space's page against another Space's app, in chromium, with both Spaces built and run by
LocalHub in Docker: an attacker's Space (a page of its author's choosing) and the echo
environment's Space.

Threat: LocalHub served every Space's app under its one origin, and told each app the caller's
``Host`` in ``Forwarded``; so the attacker's page, opened at the URL ``space_info().host`` gives,
was the same site as the echo app and reset and stepped it as its own page could. Each app now
has its own origin (``NS--NAME.localhost:PORT``, as ``NS-NAME.hf.space`` on the Hub): the
attacker's page lands there, and whatever it sends the echo app, at the echo app's origin or
its path on LocalHub, is refused before a session opens."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hub_support import ECHO_ENV
from localhub_spaces import push_space, tiny_space
from ui.conftest import browser, new_page

from openenv_hub.localhub import LocalHub

__all__ = ["browser", "new_page"]  # the fixtures, imported for pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(1800)]

ECHO, ATTACKER = "alice/echo_env", "bob/attacker"

# What the attacker's page tries against a target (an origin, or a path on LocalHub): a CORS
# POST with JSON (the page would read the answer), a blind POST (mode "no-cors": sent though
# its answer is hidden) and a WebSocket; each says what came of it.
ATTEMPTS = """
async (target) => {
  const post = async (mode, kind) => {
    try {
      const reply = await fetch(target + "/reset", {
        method: "POST", mode, body: "{}", headers: {"content-type": kind},
      });
      return mode === "cors" ? "status " + reply.status + " " + (await reply.text()) : "sent";
    } catch (error) {
      return "failed: " + error;
    }
  };
  const socket = await new Promise((resolve) => {
    const ws = new WebSocket(target.replace("http://", "ws://") + "/ws");
    ws.onopen = () => ws.send(JSON.stringify({type: "reset"}));
    ws.onmessage = (event) => { resolve("answered " + event.data); ws.close(); };
    ws.onerror = () => resolve("error");
    ws.onclose = (event) => resolve("closed " + event.code);
  });
  return {fetched: await post("cors", "application/json"), blind: await post("no-cors", "text/plain"), socket};
}
"""


@pytest.fixture(scope="module")
def spaces_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """A LocalHub running the echo environment's Space (pushed as ``openenv push`` does) and
    the attacker's tiny Space, in Docker."""
    from docker_support.engine import BASE_IMAGE, require_docker
    from docker_support.wheelhouse import wheelhouse

    from openenv_hub.hub import push

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("DOCKER_HOST", require_docker())
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    build_args = {"BASE_IMAGE": BASE_IMAGE, "ENABLE_WEB_INTERFACE": "false"}
    hub = LocalHub(run_spaces=True, space_build_args=build_args, space_wheelhouse=wheelhouse())
    hub.start()
    try:
        echo = tmp_path_factory.mktemp("echo") / "echo_env"
        shutil.copytree(ECHO_ENV, echo, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        subprocess.run(["git", "init", "-q"], cwd=echo, check=True)
        push(echo, ECHO, token=hub.token_for("alice"), endpoint=hub.endpoint)
        push_space(hub, ATTACKER, tiny_space(), wait_for=("BUILDING", "RUNNING"))
        for repo_id in (ECHO, ATTACKER):  # LocalHub builds one at a time: minutes, loaded
            _wait_running(hub, repo_id)
        yield hub
    finally:
        hub.stop()
        monkeypatch.undo()


def _wait_running(hub: LocalHub, repo_id: str, timeout_s: float = 900) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
    deadline = time.monotonic() + timeout_s
    while (runtime := api.get_space_runtime(repo_id).raw)["stage"] != "RUNNING":
        failed = runtime["stage"] in ("BUILD_ERROR", "RUNTIME_ERROR")
        assert not failed and time.monotonic() < deadline, runtime.get("errorMessage")
        time.sleep(0.5)


def _echo_requests(hub: LocalHub) -> list[tuple[str, str, int]]:
    """``(method, path, status)`` of each HTTP request LocalHub passed to the echo app."""
    own = f"alice--echo_env.localhost:{hub.port}"
    return [
        (entry["method"], entry["path"], entry["status"])
        for entry in hub.requests()
        if entry["host"] == own or entry["path"].startswith("/_localhub/apps/alice/echo_env")
    ]


def test_one_spaces_page_cannot_drive_another_spaces_app(
    spaces_hub: LocalHub, new_page: Callable[..., Any]
) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=spaces_hub.endpoint, token=spaces_hub.token_for("bob"))
    attacker = api.space_info(ATTACKER).host
    assert attacker == f"{spaces_hub.endpoint}/_localhub/apps/{ATTACKER}"
    echo_path = f"{spaces_hub.endpoint}/_localhub/apps/{ECHO}"
    echo_origin = f"http://alice--echo_env.localhost:{spaces_hub.port}"

    page = new_page()
    page.goto(f"{attacker}/")  # the app's URL, as the Hub's API gives it
    spaces_hub.clear_requests()
    for target in (echo_path, echo_origin):
        seen = page.evaluate(ATTEMPTS, target)
        assert seen["fetched"].startswith("failed: TypeError"), (target, seen)
        assert seen["socket"] in ("error", "closed 1006"), (target, seen)
    refused = _echo_requests(spaces_hub)
    assert refused, "the blind requests reached neither LocalHub nor the app"
    assert all(status in (403, 415) for _, _, status in refused), refused
    assert page.url == f"http://bob--attacker.localhost:{spaces_hub.port}/"  # its own origin

    own_page = new_page()  # the echo app's own page may, which shows the attempts could
    own_page.goto(f"{echo_path}/health")
    assert own_page.url == f"{echo_origin}/health"
    seen = own_page.evaluate(ATTEMPTS, echo_origin)
    assert seen["fetched"].startswith("status 200"), seen
    assert seen["socket"].startswith('answered {"type":"observation"'), seen
