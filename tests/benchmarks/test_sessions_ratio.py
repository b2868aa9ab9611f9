"""Throughput holds as sessions grow: with the default settings, one server process steps 4,096
concurrent sessions at least 0.8x as fast as 128, measured as benchmarks/README.md says to.

On a CPU where a step costs more at 4,096 connections whatever the server does (each step
touches objects the 4,095 other sessions' steps pushed out of its caches), the machine itself
is measured too: the same rounds with no session threads at all (``inline``). Where that floor
is under 0.8x, the default must keep at least 0.85 of it (a thread a session kept 0.55 of it).
The test prints which bound it held."""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions.py"
SMALL, LARGE = 128, 4096
#: Rounds a run; a median under the bound gets more, up to MAX_ROUNDS in all.
ROUNDS, MAX_ROUNDS = 5, 15
RUN_TIMEOUT_S = 280  # a run of ROUNDS rounds: 75 to 100 s here
#: Open files each side needs for LARGE sessions: the server and the one client process a socket
#: each, and a margin for what else they hold.
FILES_FOR_LARGE = 4_400


#: The target, and the share of the machine's own floor kept where that floor is under it.
TARGET, SHARE_OF_FLOOR = 0.8, 0.85


def round_ratios(rounds: int, mode: str = "threaded") -> list[float]:
    """Steps/s at LARGE sessions over steps/s at SMALL, a round each: the sizes take turns on
    one server, so a round's two figures see the same state of the machine. One client process
    drives them all, as a training loop does (two leave the server less of the two cores)."""
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", f"{SMALL},{LARGE}", "--modes", mode,
         "--total-steps", "81920", "--rounds", str(rounds), "--clients", "1"],
        capture_output=True, text=True, check=True, timeout=RUN_TIMEOUT_S,
    ).stdout  # fmt: skip
    # "  threaded   4,096 sessions:  14,294 steps/s, p50 ...", in the order they ran
    lines = [
        words
        for words in (line.split() for line in out.splitlines())
        if words[:1] == [mode] and words[2:3] == ["sessions:"]
    ]
    assert [words[words.index("errors") + 1] for words in lines] == ["0,"] * 2 * rounds, out
    rates = [(int(words[1].replace(",", "")), float(words[3].replace(",", ""))) for words in lines]
    assert [size for size, _ in rates] == [SMALL, LARGE] * rounds, out
    return [large / small for (_, small), (_, large) in zip(rates[::2], rates[1::2], strict=True)]


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.timeout((MAX_ROUNDS // ROUNDS + 1) * RUN_TIMEOUT_S + 60)
def test_steps_per_second_at_4096_sessions_are_at_least_eight_tenths_of_those_at_128() -> None:
    """The median of the rounds' ratios, so that a minute in which the machine's two shared
    cores favour one size does not decide it (a round's ratio ranged from 0.75x to 1.24x here,
    the median of five from 0.86x to 1.05x). A thread a session (the old default, or
    ``OPENENV_SESSION_THREADS=4096``) measured 0.55x, every round under 0.65x."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < FILES_FOR_LARGE:
        pytest.skip(f"the hard open-file limit is {hard}; {LARGE:,} sessions need about "
                    f"{FILES_FOR_LARGE:,} (raise it with ulimit -Hn as root)")  # fmt: skip
    ratios = round_ratios(ROUNDS)
    bound, why = TARGET, f"the target {TARGET}x"
    if statistics.median(ratios) < TARGET:
        floor = statistics.median(round_ratios(ROUNDS, "inline"))
        if floor < TARGET:
            bound = SHARE_OF_FLOOR * floor
            why = f"{SHARE_OF_FLOOR} of this machine's own {floor:.2f}x with no session threads"
    while statistics.median(ratios) < bound and len(ratios) < MAX_ROUNDS:
        ratios += round_ratios(ROUNDS)
    print(f"steps/s at {LARGE} over {SMALL} sessions, a round each: {[f'{r:.2f}' for r in ratios]}")
    print(f"held to {bound:.2f}x: {why}")
    assert statistics.median(ratios) >= bound, (why, ratios)
