"""The web UI does not delay the server's start: /health answers as soon as without the UI,
/web says it is loading, then serves the UI."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import ui_pages as pages
from child_processes import end_child, start_child
from playwright.sync_api import expect
from serving import free_port

APP = "echo_env.server.app:app"


@contextmanager
def echo_server(*, web: bool) -> Iterator[tuple[str, float]]:
    """``python -m openenv_hub.server`` serving echo; yields its URL and seconds to healthy."""
    port = free_port()
    env = {**os.environ, "ENABLE_WEB_INTERFACE": "true" if web else "false"}
    started = time.perf_counter()
    process = start_child(
        [sys.executable, "-m", "openenv_hub.server", APP, "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            assert process.poll() is None, "the server exited"
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.perf_counter() - started < 60, "not healthy within 60 s"
            time.sleep(0.01)
        yield url, time.perf_counter() - started
    finally:
        end_child(process, signal.SIGTERM, timeout_s=15)


@pytest.mark.slow
@pytest.mark.serial
def test_start_to_healthy_with_the_ui_is_within_a_third_of_a_second_of_without() -> None:
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(3):
        for web in (False, True):  # alternating, so the machine's load falls on both alike
            with echo_server(web=web) as (_, seconds):
                times[web].append(seconds)
    with_ui, without = statistics.median(times[True]), statistics.median(times[False])
    assert with_ui - without < 0.3, f"with the UI {with_ui:.2f} s, without {without:.2f} s"


@pytest.mark.browser
def test_web_says_it_is_loading_then_serves_the_ui(new_page) -> None:
    with echo_server(web=True) as (url, _):
        early = httpx.get(f"{url}/web/")
        assert early.status_code == 503 and "Loading the web UI" in early.text
        assert early.headers["retry-after"] == "1"
        page = new_page()
        page.goto(f"{url}/web/")
        expect(page.get_by_role("button", name="Reset")).to_be_visible(timeout=120_000)
        assert httpx.get(f"{url}/web/").status_code == 200
        expect(page.locator("#session-info")).to_contain_text("Session ", timeout=60_000)
        pages.session_id(page)  # the UI opened its tab's session
