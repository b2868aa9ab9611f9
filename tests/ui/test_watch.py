"""The Sessions tab in a real browser, watching a session a Python client steps at the same
time: every step appears within a second and in order, the client keeps its pace, the session's
end is shown, and where watching is off the tab says how to turn it on."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ui_pages as pages
from child_processes import end_child, start_child
from playwright.sync_api import expect
from ui_envs import (
    AllFieldsAction,
    AllFieldsEnvironment,
    AllFieldsObservation,
    TypedEchoAction,
    TypedEchoEnvironment,
    TypedEchoObservation,
)

from openenv_hub import EnvClient, GenericEnvClient, create_app
from openenv_hub.server.watch import WATCH_SETTING, SessionWatch
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


#: Notes, in the page, when each step's message first shows in the table (seconds, wall clock).
NOTE_WHEN_SHOWN = """() => {
  window.shownAt = {};
  const note = () => {
    const table = document.querySelector('#watched-steps');
    for (const m of (table ? table.innerText : '').matchAll(/"message": "(m[0-9]+)"/g)) {
      if (!(m[1] in window.shownAt)) window.shownAt[m[1]] = Date.now() / 1000;
    }
  };
  new MutationObserver(note).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}"""


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
                sent[f"m{n}"] = time.time()  # the browser's clock (Date.now()) is this one
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
    pages.watch_session(page, session_id)
    expect(page.locator("#watch-status")).to_contain_text("live · episode 1 · 0 steps")
    page.evaluate(NOTE_WHEN_SHOWN)  # in the page: polling it from here lags on a busy machine
    go.set()
    deadline = time.monotonic() + 20
    shown: list[str] = []
    while len(shown) < 12 and time.monotonic() < deadline:
        shown = watched_messages(page)
        assert shown == [f"m{n}" for n in range(1, len(shown) + 1)]  # in order, none missing
        time.sleep(0.03)
    seen: dict[str, float] = page.evaluate("window.shownAt")
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
        "Watching sessions is off on this server"
    )
    expect(page.locator("#watch-refused")).to_contain_text("runs on a Space")
    expect(page.locator("#watch-refused")).to_contain_text(
        f"turn it on by setting {WATCH_SETTING}=1"
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
    pages.watch_session(page, session_id)
    go.set()
    assert done.wait(20)
    expect(page.locator("#watch-status")).to_contain_text("ended · episode 1 · 12 steps")
    pages.fork_watched(page, 3)
    pages.expect_banner(page, "Forked at step 3 by replay")
    expect(page.locator("#observation")).to_contain_text('"echoed_message": "m3"')
    pages.history_rows(page, 4)  # the reset and three replayed steps
    watched = [s for s in echo.pool.sessions() if s.id == session_id]
    assert not watched  # the client's session ended as it did; the fork is the viewer's own


def test_a_watched_observation_shows_its_images_and_strings_stay_text(
    serve: Any, new_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    app = create_app(AllFieldsEnvironment, AllFieldsAction, AllFieldsObservation, web=True)
    served = serve(app)
    with GenericEnvClient(base_url=served.base_url).sync() as env:
        env.reset()
        env.step({"text": "<img src=x onerror=alert(1)><b>bold</b>", "count": 2})
        session_id = next(s.id for s in served.pool.sessions() if s.kind == "ws")
        page = open_sessions(new_page(), served.web_url)
        pages.watch_session(page, session_id)
        expect(page.locator("#watch-images img")).to_have_count(2)  # the frame and the thumbnail
        sources = page.locator("#watch-images img").evaluate_all("(all) => all.map(i => i.src)")
        assert all(src.startswith("data:image/png;base64,") for src in sources)
        expect(page.locator("#watch-observation")).to_contain_text('"summary": "fast/red"')
        expect(page.locator("#watched-steps")).to_contain_text("<b>bold</b>")
        assert page.locator("#watched-steps b, #watched-steps td img").count() == 0


# Steps as fast as it can for argv[2] seconds at most (the test ends it sooner).
STEPPING_CLIENT = """
import sys, time
from openenv_hub import GenericEnvClient
with GenericEnvClient(base_url=sys.argv[1]).sync() as env:
    env.reset()
    print("ready", flush=True)
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        env.step({"message": "pace"})
"""

TURNS = 16  # watched turns, each between two turns without a watcher; then 8 more at a time
MAX_TURNS = 64  # while the ratio is under the bound (a loaded machine: more turns, less noise)
TURN_S = 1.0


class PaceTurns:
    """Turns without a watcher and with one, in alternation, and the client's rate in each
    (its steps as the server's watch counts them). The page stays open: it watches while its
    Sessions tab is shown, and does not while its README tab is (the tab's stream closes)."""

    def __init__(self, page: Any, echo: Any, session_id: str) -> None:
        self.page = page
        watch = next(o for o in echo.pool.observers if isinstance(o, SessionWatch))
        self.watched_session = watch.sessions[session_id]
        self.alone: list[float] = []
        self.watched: list[float] = []
        self.requests: list[str] = []  # what the page asked the server, in order
        self.asked_unwatched: list[str] = []  # ... during the turns without a watcher
        page.on("request", lambda request: self.requests.append(request.url))
        open_sessions(page, echo.web_url)
        pages.watch_session(page, session_id)
        expect(page.locator("#watch-status")).to_contain_text(" · live · ")

    def run(self, count: int) -> None:
        if not self.alone:
            self.turn(watching=False)
        for _ in range(count):
            self.turn(watching=True)
            self.turn(watching=False)

    def turn(self, *, watching: bool) -> None:
        self.page.get_by_role("tab", name="Sessions" if watching else "README").click()
        deadline = time.monotonic() + 10
        while len(self.watched_session.viewers) != watching:  # the stream opened, or closed
            assert time.monotonic() < deadline, f"watching is not {watching}"
            time.sleep(0.02)
        time.sleep(0.5 if watching else 0.2)  # the first messages are shown: watching goes on
        steps, asked, start = self.watched_session.steps, len(self.requests), time.monotonic()
        time.sleep(TURN_S)
        rate = (self.watched_session.steps - steps) / (time.monotonic() - start)
        if not watching:  # a hidden Sessions tab costs nothing: it asks the server nothing
            self.asked_unwatched += self.requests[asked:]
        (self.watched if watching else self.alone).append(rate)

    def ratio(self) -> float:
        """The mean rate of the watched turns over that of the turns without a watcher."""
        return statistics.mean(self.watched) / statistics.mean(self.alone)


@pytest.mark.serial
@pytest.mark.timeout(600)  # up to 64 pairs of turns of a few seconds each on a loaded machine
def test_a_client_keeps_nine_tenths_of_its_pace_with_one_watcher(echo: Any, new_page: Any) -> None:
    """A client in a process of its own (as a training loop is) steps as fast as it can while a
    browser watches its session for a second, then does not, in turns: its mean rate over the
    watched turns is at least 0.9 of its mean rate over the turns without a watcher. Turns that
    alternate cancel the machine's slower changes of load; a ratio under the bound after 16
    watched turns gets 8 more turns at a time, up to 64, as a loaded machine's turns swing
    (1,400 to 6,700 steps/s from one second to the next beside two busy processes). A turn
    without a watcher is one where the page asks the server nothing: its Sessions tab is hidden.

    The ratio of the means, not a median of each turn's ratio: under load a single turn's rate
    is skewed (mostly slow, now and then fast), so a single turn over the mean of two is below 1
    more often than above it even when watching costs nothing (drawn at random from two loaded
    runs' unwatched turns alone, 16 such ratios have a median of 0.95, under 0.9 a third of the
    time)."""
    before = {s.id for s in echo.pool.sessions()}
    command = [sys.executable, "-c", STEPPING_CLIENT, echo.base_url, str(MAX_TURNS * 6 + 60)]
    child = start_child(command, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        turns = PaceTurns(new_page(), echo, client_session(echo, before))
        turns.run(TURNS)
        while len(turns.watched) < MAX_TURNS and turns.ratio() < 0.9:
            turns.run(8)
    finally:
        end_child(child)
    rates = f"watched: {turns.watched}; alone: {turns.alone}"
    print(f"watched/alone: {turns.ratio():.3f}; steps/s {rates}")
    assert turns.ratio() >= 0.9, rates
    assert turns.asked_unwatched == [], "the page asked the server while nobody watched"
