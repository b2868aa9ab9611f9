"""Each Space's app has an origin of its own on LocalHub, ``http://NS--NAME.localhost:PORT``, as
``NS-NAME.hf.space`` on the Hub; the path ``/_localhub/apps/NS/NAME`` is for clients that are
not browsers.

Threat: every Space's app was served under LocalHub's one origin, so a page of one Space was, to
the browser, the same site as another Space's app: it could drive that app (reset it, step it,
read its answers) as its own page, and LocalHub passed the caller's ``Host`` on in ``Forwarded``,
which the app believed. These tests need no Space running: routing and refusals come before the
app. test_localhub_space_pages.py drives real apps, in Docker, from chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from openenv_hub.localhub import LocalHub

NAVIGATION = {"sec-fetch-mode": "navigate", "sec-fetch-dest": "document", "accept": "text/html"}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[LocalHub]:
    """A LocalHub (no Space runtime) where alice has a public Space and a private one."""
    with LocalHub(data_dir=tmp_path) as hub:
        alice = {"authorization": f"Bearer {hub.token_for('alice')}"}
        for name, private in (("My_App", False), ("private-app", True)):
            body = {"name": name, "type": "space", "sdk": "docker", "private": private}
            reply = httpx.post(f"{hub.endpoint}/api/repos/create", json=body, headers=alice)
            assert reply.is_success, reply.text
        yield hub


def test_a_browser_opening_a_spaces_path_goes_to_its_own_origin(hub: LocalHub) -> None:
    path = f"{hub.endpoint}/_localhub/apps/alice/My_App/web/?tab=1"
    for headers in (NAVIGATION, {"accept": "text/html,application/xhtml+xml"}):
        reply = httpx.get(path, headers=headers)
        assert reply.status_code == 307
        own = f"http://alice--my_app.localhost:{hub.port}"
        assert reply.headers["location"] == f"{own}/web/?tab=1"
    # a private Space's path stays what a missing Space's is, to a browser too
    hidden = httpx.get(f"{hub.endpoint}/_localhub/apps/alice/private-app/web/", headers=NAVIGATION)
    assert hidden.status_code == 404 and hidden.headers["x-error-code"] == "RepoNotFound"


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://alice--other.localhost:8765"},
        {"origin": "null"},
        {"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors"},
        {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"},
    ],
    ids=["other-space", "null", "same-origin", "cross-site-image"],
)
def test_pages_get_nothing_from_a_spaces_path(hub: LocalHub, headers: dict[str, str]) -> None:
    """Whatever page sends it, a browser's request to a Space's path on LocalHub's origin (the
    one every Space would share) is refused, saying where the app is."""
    reply = httpx.post(
        f"{hub.endpoint}/_localhub/apps/alice/My_App/reset", json={}, headers=headers
    )
    assert reply.status_code == 403
    assert f"http://alice--my_app.localhost:{hub.port}" in reply.json()["error"]


def test_clients_keep_the_spaces_path(hub: LocalHub) -> None:
    reply = httpx.post(f"{hub.endpoint}/_localhub/apps/alice/My_App/reset", json={})
    assert reply.status_code == 503 and "runtime is off" in reply.json()["error"]


@pytest.mark.parametrize("host", ["alice--my_app.localhost", "ALICE--My_App.localhost"])
def test_a_spaces_origin_reaches_its_app(hub: LocalHub, host: str) -> None:
    """At its own origin the Space's app answers every path (none is LocalHub's API there);
    host names are lowercase, as browsers write them, and the Space is found all the same."""
    with httpx.Client(base_url=hub.endpoint, headers={"host": f"{host}:{hub.port}"}) as browser:
        for path in ("/reset", "/api/whoami-v2", "/_localhub/health"):
            reply = browser.post(path, json={}, headers=NAVIGATION)
            assert reply.status_code == 503, path  # the app's answer: it is not running here
            assert "alice/My_App" in reply.json()["error"]


def test_a_private_or_missing_spaces_origin_answers_as_a_missing_space(hub: LocalHub) -> None:
    answers = []
    for name in ("private-app", "no-such-app"):
        host = {"host": f"alice--{name}.localhost:{hub.port}"}
        reply = httpx.get(f"{hub.endpoint}/health", headers=host)
        assert reply.status_code == 404 and reply.headers["x-error-code"] == "RepoNotFound"
        answers.append(reply.json()["error"].replace(name, "X"))
    assert answers[0] == answers[1]
    owner = {
        "host": f"alice--private-app.localhost:{hub.port}",
        "authorization": f"Bearer {hub.token_for('alice')}",
    }
    assert httpx.get(f"{hub.endpoint}/health", headers=owner).status_code == 503


def test_localhubs_own_names_still_serve_its_api(hub: LocalHub) -> None:
    for host in (f"127.0.0.1:{hub.port}", f"localhost:{hub.port}", f"hub.localhost:{hub.port}"):
        reply = httpx.get(f"{hub.endpoint}/_localhub/health", headers={"host": host})
        assert reply.status_code == 200, host
