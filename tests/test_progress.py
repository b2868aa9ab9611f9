"""Progress of long waits: logging events with stage, elapsed time and last line; listeners;
the one-line status of the Python API at a terminal (a real pty), off as huggingface_hub's bars
are; and the CLI's display, live at a terminal and plain lines elsewhere."""

from __future__ import annotations

import io
import logging
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from rich.console import Console

from openenv_hub.support.progress import ProgressEvent, listening, report_progress
from openenv_hub_cli._progress import HEARTBEAT_S, PlainLines, showing_progress

REPO = Path(__file__).resolve().parents[1]
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", ".openenv")


def test_reports_go_to_logging_with_their_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="openenv_hub.support.progress")
    with report_progress("docker build demo", "building") as progress:
        progress.line("Step 1/9 : FROM python:3.11-slim\n")
        progress.stage("starting the container")
    records = [r for r in caplog.records if r.name == "openenv_hub.support.progress"]
    assert [(r.levelname, r.stage) for r in records] == [  # type: ignore[attr-defined]
        ("INFO", "building"),
        ("DEBUG", "building"),
        ("INFO", "starting the container"),
        ("INFO", "done"),
    ]
    assert records[1].last_line == "Step 1/9 : FROM python:3.11-slim"  # type: ignore[attr-defined]
    assert all(r.task == "docker build demo" for r in records)  # type: ignore[attr-defined]
    assert records[1].getMessage().endswith(": Step 1/9 : FROM python:3.11-slim")


def test_listeners_get_every_report_and_a_failure_ends_the_wait() -> None:
    events: list[ProgressEvent] = []
    with (
        listening(events.append),
        pytest.raises(RuntimeError),
        report_progress("uv environment", "installing") as progress,
    ):
        time.sleep(0.05)
        progress.update()
        raise RuntimeError("boom")
    assert [e.stage for e in events] == ["installing", "installing", "failed"]
    assert events[-1].finished and events[-1].failed
    assert events[1].elapsed_s >= 0.05


def test_a_wait_shorter_than_show_after_s_is_logged_but_not_shown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    events: list[ProgressEvent] = []
    with listening(events.append):
        with report_progress("server a", "waiting for /health", show_after_s=0.2) as progress:
            progress.update()  # too soon to show
        with report_progress("server b", "waiting for /health", show_after_s=0.2) as progress:
            time.sleep(0.25)
            progress.update()  # long enough: shown from here on
    assert [(e.task, e.stage, e.finished) for e in events] == [
        ("server b", "waiting for /health", False),
        ("server b", "done", True),
    ]
    logged = [(r.task, r.stage) for r in caplog.records]  # type: ignore[attr-defined]
    assert ("server a", "waiting for /health") in logged and ("server a", "done") in logged


_STATUS = """
from openenv_hub.support.progress import report_progress
with report_progress("Space alice/demo", "BUILDING") as progress:
    progress.line("Step 3/9 : RUN pip install .")
"""


def _stderr_at_a_terminal(**env: str) -> str:
    """What the code above writes to stderr when stderr is a terminal (a pty)."""
    leader, follower = pty.openpty()
    quiet = ("OPENENV_DISABLE_PROGRESS", "HF_HUB_DISABLE_PROGRESS_BARS")
    variables = {k: v for k, v in os.environ.items() if k not in quiet} | env
    process = subprocess.Popen(
        [sys.executable, "-c", _STATUS], stderr=follower, stdout=subprocess.DEVNULL, env=variables
    )
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        process.wait(timeout=30)
        os.close(leader)
    return b"".join(chunks).decode()


def test_the_python_api_draws_a_status_line_at_a_terminal() -> None:
    shown = _stderr_at_a_terminal()
    assert "\rSpace alice/demo: BUILDING (0 s)" in shown
    assert "Space alice/demo: done (0 s)" in shown


@pytest.mark.parametrize("variable", ["HF_HUB_DISABLE_PROGRESS_BARS", "OPENENV_DISABLE_PROGRESS"])
def test_the_status_line_is_off_when_progress_bars_are(variable: str) -> None:
    assert "Space alice/demo" not in _stderr_at_a_terminal(**{variable: "1"})


def _event(stage: str, elapsed_s: float, line: str = "", **flags: bool) -> ProgressEvent:
    return ProgressEvent("Space alice/demo", stage, elapsed_s, line, **flags)


def test_plain_lines_say_each_stage_then_every_so_often() -> None:
    out = io.StringIO()
    show = PlainLines(Console(file=out, force_terminal=False, width=200)).on_event
    show(_event("BUILDING", 0.0))
    show(_event("BUILDING", 3.0, "Step 2/9"))  # nothing new to say yet
    show(_event("BUILDING", HEARTBEAT_S + 1, "Step 5/9 : RUN pip install ."))
    show(_event("RUNNING", 40.0, finished=True))
    assert out.getvalue().splitlines() == [
        "Space alice/demo: BUILDING (0 s)",
        f"Space alice/demo: still BUILDING ({HEARTBEAT_S + 1:.0f} s): Step 5/9 : RUN pip install .",
        "Space alice/demo: RUNNING (40 s)",
    ]


def test_a_terminal_gets_a_live_line_with_the_time_and_the_last_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "TERM", "xterm"
    )  # a dumb terminal (TERM=dumb, as some CI set) gets no live line
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    with showing_progress(console), report_progress("docker build demo", "building") as progress:
        progress.line("Step 4/9 : COPY . /app")
        time.sleep(0.6)  # the display refreshes 4 times a second
    text = out.getvalue()
    assert "docker build demo: building (0 s)" in text and "Step 4/9 : COPY . /app" in text
    assert "docker build demo: done (1 s) done" in text or "docker build demo: done (0 s) done" in (
        text
    )


@pytest.mark.docker
@pytest.mark.slow
def test_a_quiet_docker_build_reports_its_lines(tmp_path: Path) -> None:
    """What serve --runtime docker and from_hub(runtime="docker") wait for, reported."""
    from docker_support.engine import BASE_IMAGE, remove_images, require_docker

    from openenv_hub.validation.docker import build_image

    require_docker()
    env = shutil.copytree(REPO / "envs" / "echo_env", tmp_path / "echo_env", ignore=CACHES)
    tag = f"openenv-progress-test-{uuid.uuid4().hex[:8]}:latest"
    events: list[ProgressEvent] = []
    try:
        with listening(events.append):
            build_image(env, tag, base_image=BASE_IMAGE, quiet=True)
    finally:
        remove_images(tag)
    assert {e.task for e in events} == {f"docker build {tag}"}
    assert events[0].stage == "building the image"
    assert any(e.last_line.startswith("Step 1/") for e in events)
    assert events[-1].finished and not events[-1].failed


@pytest.mark.slow
def test_serve_with_uv_shows_the_environment_being_made(tmp_path: Path) -> None:
    """The first start of a folder with uv makes its environment: each stage is shown, then the
    wait for a server that takes a while to answer /health."""
    from child_processes import end_child, start_child
    from sample_envs import slow_echo
    from serving import free_port

    port = free_port()
    command = [
        sys.executable, "-m", "openenv_hub_cli.main", "serve", str(slow_echo(tmp_path, 2.0)),
        "--runtime", "uv", "--port", str(port),
    ]  # fmt: skip
    env = {**os.environ, "OPENENV_HUB_CACHE": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    process = start_child(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    seen: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "Press Ctrl+C to stop." in line:
                break
        process.send_signal(signal.SIGINT)
        seen.append(process.communicate(timeout=120)[0])
    finally:
        end_child(process)
    output = "".join(seen)
    assert "uv environment for echo_env: making it (0 s)" in output, output[-3000:]
    assert "uv environment for echo_env: installing echo_env and its dependencies (" in output
    assert "uv environment for echo_env: done (" in output
    assert re.search(
        r"echo_env.server.app:app \(uv runtime\): waiting for /health \([12] s\)", output
    )
    assert "echo_env.server.app:app (uv runtime): done (" in output


LONG_WAIT = """
import sys, time
import openenv_hub.support.progress as progress
progress.NOTICE_AFTER_S = {after}
with progress.report_progress("uv environment for echo_env", "making it") as wait:
    time.sleep({wait})
    wait.stage("installing echo_env")
print("done")
"""


def _long_wait(after_s: float, wait_s: float, **env: str) -> subprocess.CompletedProcess[str]:
    """A wait of ``wait_s`` in a Python whose stderr is a pipe, not a terminal."""
    code = LONG_WAIT.format(after=after_s, wait=wait_s)
    # as a user has them (the test run turns them on), unless the test says otherwise
    environment = {**os.environ, "OPENENV_DISABLE_PROGRESS": "", "HF_HUB_DISABLE_PROGRESS_BARS": ""}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=environment
    )


def test_outside_a_terminal_a_long_wait_gets_a_line_and_its_end_another() -> None:
    done = _long_wait(0.5, 2.0)
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert re.fullmatch(r"uv environment for echo_env: making it \(\d+ s so far\)", lines[0])
    assert re.fullmatch(r"uv environment for echo_env: done \(\d+ s\)", lines[1])


def test_outside_a_terminal_a_short_wait_or_disabled_progress_says_nothing() -> None:
    assert _long_wait(5.0, 0.2).stderr == ""
    assert _long_wait(0.2, 1.0, OPENENV_DISABLE_PROGRESS="1").stderr == ""
