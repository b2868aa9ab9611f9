"""The Sessions tab in a real browser, watching a session a Python client steps at the same
time: every step appears within a second and in order, the client keeps its pace, the session's
end is shown, and where watching is off the tab says how to turn it on."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ui_pages as pages
from playwright.sync_api import expect
from ui_envs import TypedEchoAction, TypedEchoEnvironment, TypedEchoObservation

from openenv_hub import EnvClient, create_app
from openenv_hub.server.watch import WATCH_SETTING
from openenv_hub.ui.watch_stream import PUSH_INTERVAL_S

pytestmark = pytest.mark.browser

# docs/debugging.md's screenshot: refreshed when OPENENV_UPDATE_SCREENSHOTS=1, else into tmp_path.
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "sessions.png"


class TypedEcho(EnvClient[TypedEchoAction, TypedEchoObservation, Any]):
    action_type = TypedEchoAction
    observation_type = TypedEchoObservation


@pytest.fixture
def echo(serve: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    return serve(create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True))


def open_sessions(page: Any, url: str) -> Any:
    pages.open_ui(page, url)
    page.get_by_role("tab", name="Sessions").click()
    return page


def client_session(echo: Any, before: set[str]) -> str:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        new = [s.id for s in echo.pool.sessions() if s.kind == "ws" and s.id not in before]
        if new:
            return new[0]
        time.sleep(0.02)
    raise AssertionError("the client's session did not open")


def watched_messages(page: Any) -> list[str]:
    cells = page.locator("#watched-steps tbody tr").all_inner_texts()
    return re.findall(r'"message": "(m\d+)"', "\n".join(cells))


@pytest.fixture
def stepping(echo: Any) -> Iterator[Any]:
    """A client in a thread that resets, waits for a go, then steps ``m1`` .. ``m12`` a fifth of
    a second apart, noting when each reply arrived."""
    go, done, sent = threading.Event(), threading.Event(), {}
    before = {s.id for s in echo.pool.sessions()}

    def run() -> None:
        with TypedEcho(base_url=echo.base_url).sync() as env:
            env.reset()
            go.wait(60)
            for n in range(1, 13):
                env.step(TypedEchoAction(message=f"m{n}"))
                sent[f"m{n}"] = time.monotonic()
                time.sleep(0.2)
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield client_session(echo, before), go, sent, done
    go.set()
    thread.join(30)


def test_every_step_of_a_live_session_appears_within_a_second_in_order(
    echo: Any, new_page: Any, stepping: Any, tmp_path: Path
) -> None:
    session_id, go, sent, done = stepping
    page = open_sessions(new_page(), echo.web_url)
    expect(page.locator("#live-sessions")).to_contain_text(session_id)
    pages.choose(page, "watch-session", session_id)
    expect(page.locator("#watch-status")).to_contain_text("live · episode 1 · 0 steps")
    seen: dict[str, float] = {}
    go.set()
    deadline = time.monotonic() + 20
    while len(seen) < 12 and time.monotonic() < deadline:
        shown = watched_messages(page)
        assert shown == [f"m{n}" for n in range(1, len(shown) + 1)]  # in order, none missing
        for message in shown:
            seen.setdefault(message, time.monotonic())
        time.sleep(0.03)
    lags = {m: seen[m] - sent[m] for m in seen if m in sent}
    assert len(lags) == 12, seen
    assert max(lags.values()) < 1.0, lags
    target = (
        SCREENSHOT if os.environ.get("OPENENV_UPDATE_SCREENSHOTS") == "1" else tmp_path / "s.png"
    )
    page.screenshot(path=str(target), full_page=True)  # docs/debugging.md shows this
    assert target.read_bytes().startswith(b"\x89PNG")
    assert done.wait(10)
    expect(page.locator("#watch-status")).to_contain_text("ended · episode 1 · 12 steps")
    expect(page.locator("#watch-status")).to_contain_text("return so far 2.7")  # 9 x 0.2 + 3 x 0.3
    time.sleep(4 * PUSH_INTERVAL_S)  # the stream goes on after the end
    expect(page.locator("#watch-status")).not_to_contain_text("Error")


def test_watching_is_refused_where_the_setting_is_off_with_how_to_turn_it_on(
    serve: Any, new_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.setenv("SPACE_ID", "someone/echo")  # a Space: off unless its owner turns it on
    app = create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True)
    page = open_sessions(new_page(), serve(app).web_url)
    expect(page.locator("#watch-refused")).to_contain_text(
        f"Watching sessions is off on this server. Its owner can turn it on by setting "
        f"{WATCH_SETTING}=1"
    )
    expect(page.locator("#live-sessions")).to_have_count(0)
    assert not [o for o in app.state.sessions.observers if type(o).__name__ == "SessionWatch"]


def test_a_watched_episode_forks_into_the_viewers_playground(
    echo: Any, new_page: Any, stepping: Any
) -> None:
    """From a step of the session being watched, the viewer's own session is brought there by
    replay; the watched session is not touched."""
    session_id, go, _sent, done = stepping
    page = open_sessions(new_page(), echo.web_url)
    pages.choose(page, "watch-session", session_id)
    go.set()
    assert done.wait(20)
    expect(page.locator("#watch-status")).to_contain_text("ended · episode 1 · 12 steps")
    page.get_by_label("Fork at step").fill("3")
    pages.click(page, "watch-fork")
    pages.expect_banner(page, "Forked at step 3 by replay")
    expect(page.locator("#observation")).to_contain_text('"echoed_message": "m3"')
    pages.history_rows(page, 4)  # the reset and three replayed steps
    watched = [s for s in echo.pool.sessions() if s.id == session_id]
    assert not watched  # the client's session ended as it did; the fork is the viewer's own
