"""Episodes played in several sessions at once: each replays an episode already played alone,
the sessions reset together and then take their steps in rounds (every session's first step at
once, then every second step, ...), so one session's actions fall between another's.

Only episodes that replayed identically alone are used: an environment that is not
deterministic cannot be compared with itself, and the isolation check says so. The server's
memory is read before the sessions open and once they have all reset, when its process is
known (a folder's server), for the cost check.

Layer: client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from openenv_hub.errors import SessionCapacityError
from openenv_hub.validation.quality.compare import differences
from openenv_hub.validation.quality.episodes import (
    CouldNotCheck,
    Episode,
    instrument,
    open_client,
    reset_episode,
    take_step,
)
from openenv_hub.validation.quality.run import QualityRun

__all__ = ["play_isolation", "tree_memory_mb"]


def _replayable(run: QualityRun) -> list[Episode]:
    """Episodes with steps that replayed exactly alone, the longest first."""
    volatile = run.spec.volatile
    exact = [
        original for original, replay in run.replays if not differences(original, replay, volatile)
    ]
    return sorted(exact, key=lambda episode: -len(episode.steps))


async def play_isolation(run: QualityRun) -> None:
    chosen = _replayable(run)
    if not chosen:
        run.isolation_note = (
            "no episode replayed exactly alone, so none can be compared when played alongside "
            "others"
            if run.replays
            else "no episode with steps to replay"
        )
        return
    sessions = run.spec.quality.sessions
    originals = [chosen[n % len(chosen)] for n in range(sessions)]
    before = tree_memory_mb(run.pid)
    async with contextlib.AsyncExitStack() as stack:
        try:
            with instrument("opening sessions side by side"):
                clients = [
                    await stack.enter_async_context(open_client(run.url, run.request_timeout_s))
                    for _ in originals
                ]
                copies = [Episode(f"{e.policy}, alongside", e.task, e.reset) for e in originals]
                await asyncio.gather(
                    *(
                        reset_episode(c, e, run.timings)
                        for c, e in zip(clients, copies, strict=True)
                    )
                )
        except CouldNotCheck as exc:
            if isinstance(exc.__cause__, SessionCapacityError):
                run.isolation_note = f"the server runs fewer than {sessions} sessions at once"
                return
            raise
        _measure(run, before, len(clients))
        await _rounds(run, clients, originals, copies)
    run.isolation = list(zip(originals, copies, strict=True))


async def _rounds(
    run: QualityRun, clients: list[Any], originals: list[Episode], copies: list[Episode]
) -> None:
    for number in range(max(len(e.steps) for e in originals)):
        run.check_time()
        turn = [
            (client, original, copy)
            for client, original, copy in zip(clients, originals, copies, strict=True)
            if number < len(original.steps) and copy.first is not None
        ]
        with instrument("stepping sessions side by side"):
            steps = await asyncio.gather(
                *(take_step(c, o.steps[number].action, run.timings) for c, o, _ in turn)
            )
        for (_, _, copy), step in zip(turn, steps, strict=True):
            copy.steps.append(step)


def _measure(run: QualityRun, before: float | None, sessions: int) -> None:
    after = tree_memory_mb(run.pid)
    if before is not None and after is not None:
        run.memory = {
            "server_mb": round(after, 1),
            "per_session_mb": round(max(0.0, after - before) / sessions, 2),
        }


def tree_memory_mb(pid: int | None) -> float | None:
    """The resident memory of process ``pid`` and its descendants, in MB (None where it cannot
    be read: no process, or no ``/proc``)."""
    proc = Path("/proc")
    if pid is None or not (proc / str(pid)).is_dir():
        return None
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    total, pending = 0, [pid]
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    while pending:
        current = pending.pop()
        pending += children.get(current, [])
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int((proc / str(current) / "statm").read_text().split()[1]) * page_kb
    return total / 1024
