"""The Sessions tab: the server's live sessions (the page's own left out), and any one of them
watched read-only as it steps (see :mod:`openenv_hub.server.watch`); from any step of the
watched session's current or previous episode, a fork into the viewer's own Playground session
(the watched session is never touched): restored from the snapshot the server kept at that step
where there is one, else by replay (:mod:`openenv_hub.ui.watch_fork`). Where watching is off,
the tab says how to turn it on.

The tables, status and latest observation are filled in the page from the tab's event stream
(:mod:`openenv_hub.ui.watch_stream`, :mod:`openenv_hub.ui.watch_page`): watching costs no gradio
event per update. The session picker's choices are sent when the stream says they changed; a
fork is a gradio event.

Layer: ui.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from openenv_hub.errors import EpisodeRecordError
from openenv_hub.server.processes import this_process
from openenv_hub.server.watch import SessionWatch, watching_refused_message
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.replay import make_fork
from openenv_hub.ui.view import ResultView
from openenv_hub.ui.watch_fork import CURRENT, EPISODE_CHOICES, watched_fork
from openenv_hub.ui.watch_page import WATCH_CSS, WATCH_SCRIPT, follow_script, watch_template
from openenv_hub.ui.watch_stream import session_choices

__all__ = ["sessions_tab"]

_EVENT: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}


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
        which = gr.Radio(EPISODE_CHOICES, value=CURRENT, label="Episode to fork",
                         elem_id="watch-fork-episode")  # fmt: skip
        at = gr.Number(0, label="Fork at step", precision=0, minimum=0, elem_id="watch-fork-step")
        fork = gr.Button("Fork into Playground", elem_id="watch-fork")
    status = gr.Markdown(elem_id="watch-fork-status")

    def own(request: gr.Request) -> str | None:
        tab = actions.tabs.get(request.session_hash or "")
        return tab.session.id if tab is not None and tab.session is not None else None

    def choices(request: gr.Request, chosen: str | None) -> Any:
        listed = session_choices(pool, watch, exclude=own(request))
        if chosen and chosen not in [v for _, v in listed] and chosen in watch.sessions:
            listed.append((f"{chosen} · ended", chosen))  # so the viewer sees how it ended
        return gr.update(choices=listed)

    async def on_fork(
        request: gr.Request, chosen: str | None, episode: str | None, step: Any
    ) -> dict[Any, Any]:
        watched = watch.sessions.get(chosen or "")
        if watched is None:
            return {status: "**Cannot fork:** pick a session to watch first."}
        try:
            planned = watched_fork(watched, episode or CURRENT, int(step or 0))
        except EpisodeRecordError as exc:
            return {status: f"**Cannot fork:** {exc.message}"}
        outcome = await make_fork(actions, request.session_hash or "", planned)
        return {**view.updates(outcome), tabs: gr.Tabs(selected="playground"), status: ""}

    live.change(choices, inputs=[picked], outputs=[picked], **_EVENT)
    picked.change(None, inputs=[picked], js=follow_script(), **_EVENT)
    inputs = [picked, which, at]
    fork.click(on_fork, inputs=inputs, outputs=[*view.outputs(), tabs, status], **_EVENT)
