"""An idle UI page in a real browser draws gradio's elapsed-time counters ten times a second,
not sixty (see openenv_hub.ui.counter_frames), and the page's other animation frames keep their pace."""

from __future__ import annotations

import time
from typing import Any

import pytest
import ui_pages as pages
from ui_envs import TypedEchoAction, TypedEchoEnvironment, TypedEchoObservation

from openenv_hub import create_app
from openenv_hub.ui.counter_frames import COUNTER_FRAME_MS

pytestmark = pytest.mark.browser

# Runs before the page's scripts: counts the frames asked for by gradio's counters (callbacks
# that compute seconds since a start) as they reach the browser.
COUNT_COUNTER_FRAMES = """
(() => {
  window.counterFrames = 0;
  const frame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => {
    const text = Function.prototype.toString.call(callback);
    if (text.includes("performance.now()") && text.includes("/1e3")) window.counterFrames += 1;
    return frame(callback);
  };
})();
"""

OWN_FRAMES_IN_A_SECOND = """
() => new Promise((resolve) => {
  let frames = 0;
  const end = performance.now() + 1000;
  const tick = () => { frames += 1; performance.now() < end ? requestAnimationFrame(tick) : resolve(frames); };
  requestAnimationFrame(tick);
})
"""


def test_an_idle_page_draws_counters_ten_times_a_second(serve: Any, new_page: Any) -> None:
    app = create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True)
    page = new_page()
    page.add_init_script(COUNT_COUNTER_FRAMES)
    pages.open_ui(page, serve(app).web_url)
    time.sleep(1)
    before = page.evaluate("() => window.counterFrames")
    time.sleep(2)
    counted = page.evaluate("() => window.counterFrames") - before
    assert counted <= 2 * 1000 / COUNTER_FRAME_MS + 4, counted  # sixty a second before
    assert page.evaluate(OWN_FRAMES_IN_A_SECOND) >= 30  # other frames are not slowed
