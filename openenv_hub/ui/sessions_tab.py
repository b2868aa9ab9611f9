"""The Sessions tab: the server's live sessions, and any one of them watched read-only as it
steps (see :mod:`openenv_hub.server.watch`); from any step of the watched episode, a fork into
the viewer's own Playground session (by replay: the watched session is never touched). Where
watching is off, the tab says how to turn it on.

Layer: ui.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import gradio as gr

from openenv_hub.rubrics.episode import BREAKDOWN_KEY
from openenv_hub.server.sessions import SessionPool
from openenv_hub.server.watch import SessionWatch, WatchedSession, watching_refused_message
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.observation import split_observation
from openenv_hub.ui.replay import fork_into_tab
from openenv_hub.ui.view import ResultView

__all__ = [
    "REFRESH_S",
    "SHOWN_STEPS",
    "session_rows",
    "sessions_tab",
    "step_rows",
    "watched_episode",
]

REFRESH_S = 0.5  # how often an open Sessions tab asks for news
SHOWN_STEPS = 20  # the latest watched steps a refresh sends (fewer rows: a cheaper refresh)
TABLE_REFRESH_S = 2.0  # how often the sessions table is sent again when no session came or went
_EVENT: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}
SESSION_COLUMNS = ["Session", "Client", "Episode", "Steps", "Return so far", "Last activity"]
STEP_COLUMNS = ["#", "Episode", "Step", "Action", "Reward", "Done", "Breakdown"]


def session_rows(pool: SessionPool, watch: SessionWatch) -> list[list[Any]]:
    """A row per open session (stateless calls left out), as the sessions table shows it."""
    rows = []
    now = time.monotonic()
    for session in pool.sessions():
        if session.kind == "http-ephemeral":
            continue
        watched = watch.sessions.get(session.id) or WatchedSession(session.id)
        idle = f"{now - session.last_active:.1f} s ago"
        rows.append([session.id, session.kind, watched.episodes, watched.steps,
                     round(watched.return_so_far, 6), idle])  # fmt: skip
    return rows


def step_rows(watched: WatchedSession) -> list[list[Any]]:
    """A row per step of ``watched`` among the latest :data:`SHOWN_STEPS`, oldest first."""
    return [
        [entry.index, entry.episode, entry.step, json.dumps(entry.action),
         json.dumps(entry.payload.get("reward")), json.dumps(entry.payload.get("done")),
         json.dumps((entry.payload.get("observation") or {}).get("metadata", {}).get(
             BREAKDOWN_KEY, {}))]
        for entry in itertools.islice(watched.recent, max(len(watched.recent) - SHOWN_STEPS, 0), None)
    ]  # fmt: skip


def watched_episode(watched: WatchedSession) -> list[dict[str, Any]]:
    """The watched session's latest episode as trajectory records (its reset, with the
    arguments it was given, and its steps), for a fork; empty when the watch no longer keeps
    the episode's reset (it keeps the latest steps only)."""
    episode = [entry for entry in watched.recent if entry.episode == watched.episodes]
    if not episode or episode[0].step != 0:
        return []
    episode_id = f"{watched.session_id}:{watched.episodes}"
    return [
        {"episode_id": episode_id, "episode": entry.episode, "step": entry.step,
         "action": json.dumps(entry.action),
         "observation": json.dumps(entry.payload.get("observation")),
         "reward": entry.payload.get("reward"), "done": bool(entry.payload.get("done"))}
        for entry in episode
    ]  # fmt: skip


def sessions_tab(actions: Actions, view: ResultView, tabs: Any, watch: SessionWatch | None) -> None:
    """Lay out the Sessions tab (``watch`` None: watching is off); a fork updates the
    Playground's ``view`` and selects it."""
    pool = actions.pool
    if watch is None:
        gr.Markdown(watching_refused_message(), elem_id="watch-refused")
        return
    table = gr.Dataframe(headers=SESSION_COLUMNS, value=[], interactive=False,
                         elem_id="live-sessions", label="Live sessions")  # fmt: skip
    picked = gr.Dropdown(choices=[], label="Watch session", elem_id="watch-session")
    status = gr.Markdown("*Pick a session to watch.*", elem_id="watch-status")
    steps = gr.Dataframe(headers=STEP_COLUMNS, value=[], interactive=False, wrap=True,
                         elem_id="watched-steps", label="Watched steps")  # fmt: skip
    images = gr.Gallery(label="Latest images", visible=False, elem_id="watch-images",
                        format="png", interactive=False)  # fmt: skip
    observation = gr.JSON(label="Latest observation", elem_id="watch-observation")
    with gr.Row():
        at = gr.Number(0, label="Fork at step", precision=0, minimum=0, elem_id="watch-fork-step")
        fork = gr.Button("Fork into Playground", elem_id="watch-fork")
    timer = gr.Timer(REFRESH_S)

    sent = gr.State(None)  # what this browser was last sent, to send only what changed

    def refresh(chosen: str | None, last: dict[str, Any] | None) -> dict[Any, Any]:
        last = last if last and last.get("chosen") == chosen else {"chosen": chosen}
        now = time.monotonic()
        rows = session_rows(pool, watch)
        ids = [row[0] for row in rows]
        if chosen and chosen not in ids and chosen in watch.sessions:
            ids.append(chosen)  # ended: still shown, so the viewer sees how it ended
        fresh = ids != last.get("ids") or now - last.get("table_at", 0.0) >= TABLE_REFRESH_S
        changes: dict[Any, Any] = {
            table: rows if fresh else gr.skip(),
            picked: gr.update(choices=ids) if ids != last.get("ids") else gr.skip(),
            status: gr.skip(), steps: gr.skip(), observation: gr.skip(), images: gr.skip(),
        }  # fmt: skip
        last = {**last, "ids": ids, "table_at": now if fresh else last.get("table_at", 0.0)}
        watched = watch.sessions.get(chosen or "")
        seen = (watched.calls, watched.ended) if watched is not None else None
        if watched is None or seen == last.get("seen"):
            return {**changes, sent: last}
        latest = watched.recent[-1].payload if watched.recent else {}
        view = split_observation(latest.get("observation"))
        shown = [(image, path) for path, image in view.images]
        state = "ended" if watched.ended else "live"
        changes.update({
            status: f"Session `{watched.session_id}` · {state} · episode {watched.episodes} · "
            f"{watched.steps} steps · return so far {watched.return_so_far:g}",
            steps: step_rows(watched),
            observation: view.summary,
            images: gr.update(value=shown or None, visible=bool(shown))
            if shown or last.get("images") else gr.skip(),
            sent: {**last, "seen": seen, "images": bool(shown)},
        })  # fmt: skip
        return changes

    async def on_fork(request: gr.Request, chosen: str | None, step: Any) -> dict[Any, Any]:
        watched = watch.sessions.get(chosen or "")
        records = watched_episode(watched) if watched is not None else []
        if not records:
            return {status: "**Cannot fork:** pick a watched session whose episode began within "
                    "the steps the watch keeps."}  # fmt: skip
        outcome = await fork_into_tab(actions, request.session_hash or "", records, int(step or 0))
        return {**view.updates(outcome), tabs: gr.Tabs(selected="playground")}

    outputs = [table, picked, status, steps, observation, images, sent]
    timer.tick(refresh, inputs=[picked, sent], outputs=outputs, **_EVENT)
    picked.change(lambda chosen: refresh(chosen, None), inputs=[picked], outputs=outputs, **_EVENT)
    fork.click(on_fork, inputs=[picked, at], outputs=[*view.outputs(), tabs, status], **_EVENT)
