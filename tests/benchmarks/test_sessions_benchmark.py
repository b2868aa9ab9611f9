"""benchmarks/sessions.py runs as its docstring says with either client, its lean load
generator (benchmarks/ws_load.py) steps every session it opened (no figure is judged), and a
run that is killed leaves nothing running."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from child_processes import end_child, live_processes, start_child
from polling import wait_until

from openenv_hub.server.settings import session_threads

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions.py"


@pytest.mark.parametrize("client", ["lean", "websockets"])
def test_a_small_run_steps_every_session_without_errors(client: str) -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "8,16", "--steps", "3", "--modes", "threaded",
         "--client", client],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    rows = [line for line in out.splitlines() if line.startswith("| ") and "threaded |" in line]
    assert [row.split(" | ")[0] for row in rows] == ["| 8", "| 16"], out
    assert all(row.split(" | ")[-2] == "0" for row in rows), out  # the errors column
    assert "sessions: FAILED" not in out
    assert "still open" not in out  # the server closed each size's sockets before the next


def test_several_server_processes_and_client_addresses_step_every_session() -> None:
    """The 65,536-session run in small: the server's address served by two processes, the
    clients connecting from three loopback addresses (100 sessions each at most), every session
    stepping ten times without an error, the figures summed over the server's processes."""
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "300", "--steps", "10", "--modes", "threaded",
         "--workers", "2", "--sessions-per-address", "100"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    assert "server: 2 processes; clients from 127.0.0.2, 127.0.0.3, 127.0.0.4 in turn" in out
    header = next(line for line in out.splitlines() if line.startswith("| sessions | mode |"))
    (row,) = [line for line in out.splitlines() if line.startswith("| 300 | threaded |")]
    figures = dict(zip(header.strip("| ").split(" | "), row.strip("| ").split(" | "), strict=True))
    assert figures["errors"] == "0", out
    assert int(figures["fds"].replace(",", "")) >= 300, out  # every session's socket, summed
    measured = next(line for line in out.splitlines() if line.startswith("  threaded "))
    assert "errors 0" in measured and "KiB a session" in measured, out
    assert "3,000 steps answered" in measured, out  # ten a session, every one


def test_rounds_give_each_size_in_turn_and_the_tables_give_medians() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "4,8", "--steps", "2", "--modes", "threaded",
         "--rounds", "3"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    measured = [line.split()[1] for line in out.splitlines() if line.startswith("  threaded ")]
    assert measured == ["4", "8"] * 3, out
    assert "3 rounds (medians)" in out
    (row,) = [line for line in out.splitlines() if line.startswith("| 8 | ") and "x" in line]
    assert ", rounds " in row and "x to " in row, row  # the median ratio, then its range


def test_rounds_below_one_are_refused_by_name() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "0"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "--rounds 0: give 1 or more" in run.stderr


def test_interleaved_rounds_give_each_round_to_every_mode_in_turn() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "4,8", "--steps", "2", "--modes",
         "threaded,inline", "--rounds", "2", "--interleave"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    measured = [
        tuple(line.split()[:2])
        for line in out.splitlines()
        if line.startswith(("  threaded ", "  inline "))
    ]
    assert measured == [("threaded", "4"), ("threaded", "8"), ("inline", "4"), ("inline", "8")] * 2
    rows = [line for line in out.splitlines() if line.startswith("| 8 | ")]
    assert len(rows) == 3 and all(row.split(" | ")[-2] == "0" for row in rows[1:]), out


def test_threaded_n_modes_run_the_default_settings_with_n_session_threads() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "4", "--steps", "2", "--modes",
         "threaded-2,threaded-3"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    threads = {
        row.split(" | ")[1]: int(row.split(" | ")[-4])  # the mode, its server's threads
        for row in out.splitlines()
        if row.startswith("| 4 | threaded-")
    }
    assert threads["threaded-3"] == threads["threaded-2"] + 1, out


def test_an_unknown_mode_is_refused_by_name() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--modes", "threaded,threads-2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 1
    assert "--modes: unknown threads-2; choose from threaded, threaded-N" in run.stderr


#: Open files each side needs for 10,000 sessions: the server a socket each, the two client
#: processes half as many each, and a margin for what else they hold.
FILES_FOR_TEN_THOUSAND = 10_400


@pytest.mark.slow
def test_ten_thousand_sessions_step_on_a_bounded_set_of_threads_in_under_a_gib() -> None:
    """The scale the session core is built for: 10,000 sessions open on one server process at
    once, all stepping, with no error, the server's threads the pool plus a few of its own (a
    thread a session would be 10,000), and its memory under 1 GiB."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < FILES_FOR_TEN_THOUSAND:
        pytest.skip(f"the hard open-file limit is {hard}; 10,000 sessions need about "
                    f"{FILES_FOR_TEN_THOUSAND} (raise it with ulimit -Hn as root)")  # fmt: skip
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "10000", "--steps", "2", "--modes", "threaded"],
        capture_output=True, text=True, check=True, timeout=280,
    ).stdout  # fmt: skip
    header = next(line for line in out.splitlines() if line.startswith("| sessions | mode |"))
    (row,) = [line for line in out.splitlines() if line.startswith("| 10,000 | threaded |")]
    figures = dict(zip(header.strip("| ").split(" | "), row.strip("| ").split(" | "), strict=True))
    assert figures["errors"] == "0", out
    assert int(figures["threads"]) <= session_threads(None) + 8, out
    assert float(figures["rss MiB"]) < 1024, out
    assert int(figures["fds"].replace(",", "")) >= 10_000, out  # the sessions were all open at once


def live_in_group(group: int) -> list[str]:
    """The command lines of the processes of process group ``group`` that have not exited."""
    found = []
    for pid, (_, its_group) in live_processes().items():
        if its_group == group:
            with contextlib.suppress(OSError):  # it ended since
                found.append(
                    Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                )
    return found


def test_a_killed_run_leaves_no_server_and_no_client_stepping() -> None:
    """However the script ends (here SIGKILL, as a test's timeout ends it), its server and its
    client processes end with it."""
    script = start_child(
        [sys.executable, str(SCRIPT), "--sizes", "64", "--steps", "100000", "--modes", "threaded"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip

    def clients_started() -> bool:
        return sum("spawn_main" in c for c in live_in_group(script.pid)) == 2

    try:
        wait_until(clients_started, 60, "the two client processes started")
        assert any("servers/typed.py" in c for c in live_in_group(script.pid))
        os.kill(script.pid, signal.SIGKILL)
        script.wait(10)
        wait_until(lambda: not live_in_group(script.pid), 10, "the script's processes ended")
    finally:
        end_child(script)
