"""The Sessions tab: the server's live sessions, and any one of them watched read-only as it
steps (see :mod:`openenv_hub.server.watch`); from any step of the watched episode, a fork into
the viewer's own Playground session (by replay: the watched session is never touched). Where
watching is off, the tab says how to turn it on.

The tables, status and latest observation are filled in the page from the tab's event stream
(:mod:`openenv_hub.ui.watch_stream`, :mod:`openenv_hub.ui.watch_page`): watching costs no gradio
event per update. The session picker's choices are sent when the stream says sessions came or
went; a fork is a gradio event.

Layer: ui.
"""

from __future__ import annotations

import json
from typing import Any

import gradio as gr

from openenv_hub.server.processes import this_process
from openenv_hub.server.watch import SessionWatch, WatchedSession, watching_refused_message
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.replay import fork_into_tab
from openenv_hub.ui.view import ResultView
from openenv_hub.ui.watch_page import WATCH_CSS, WATCH_SCRIPT, follow_script, watch_template
from openenv_hub.ui.watch_stream import session_rows

__all__ = ["sessions_tab", "watched_episode"]

_EVENT: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}


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


def processes_note() -> str:
    """Above the table, in a server of several processes: whose sessions the tab shows."""
    process = this_process()
    if process is None:
        return ""
    index, count = process
    return (
        f"This server runs {count} processes, each with its own sessions: this tab shows those "
        f"of process {index} only (new connections go to any of them)."
    )


def sessions_tab(actions: Actions, view: ResultView, tabs: Any, watch: SessionWatch | None) -> None:
    """Lay out the Sessions tab (``watch`` None: watching is off); a fork updates the
    Playground's ``view`` and selects it."""
    pool = actions.pool
    if watch is None:
        gr.Markdown(watching_refused_message(pool.watch_rule()), elem_id="watch-refused")
        return
    with gr.HTML(html_template=watch_template(), css_template=WATCH_CSS, js_on_load=WATCH_SCRIPT,
                 elem_id="watch-live", apply_default_css=False) as live:  # fmt: skip
        picked = gr.Dropdown(choices=[], label="Watch session", elem_id="watch-session")
    gr.Markdown(processes_note, elem_id="watch-processes")  # read as each page loads
    with gr.Row():
        at = gr.Number(0, label="Fork at step", precision=0, minimum=0, elem_id="watch-fork-step")
        fork = gr.Button("Fork into Playground", elem_id="watch-fork")
    status = gr.Markdown(elem_id="watch-fork-status")

    def choices(chosen: str | None) -> Any:
        ids = [row[0] for row in session_rows(pool, watch)]
        if chosen and chosen not in ids and chosen in watch.sessions:
            ids.append(chosen)  # ended: still offered, so the viewer sees how it ended
        return gr.update(choices=ids)

    async def on_fork(request: gr.Request, chosen: str | None, step: Any) -> dict[Any, Any]:
        watched = watch.sessions.get(chosen or "")
        records = watched_episode(watched) if watched is not None else []
        if not records:
            return {status: "**Cannot fork:** pick a watched session whose episode began within "
                    "the steps the watch keeps."}  # fmt: skip
        outcome = await fork_into_tab(actions, request.session_hash or "", records, int(step or 0))
        return {**view.updates(outcome), tabs: gr.Tabs(selected="playground"), status: ""}

    live.change(choices, inputs=[picked], outputs=[picked], **_EVENT)
    picked.change(None, inputs=[picked], js=follow_script(), **_EVENT)
    fork.click(on_fork, inputs=[picked, at], outputs=[*view.outputs(), tabs, status], **_EVENT)
