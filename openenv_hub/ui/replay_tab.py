"""The Replay tab: open a trajectory file, a public dataset on the Hub, or the episodes the server
recorded, step through an episode forward and back with the Playground's rendering, and fork it
into the Playground at any step.

Layer: ui.
"""

from __future__ import annotations

import json
from typing import Any

import gradio as gr

from openenv_hub.errors import OpenEnvError
from openenv_hub.trajectories import read_hub_records
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.observation import split_observation
from openenv_hub.ui.replay import (
    Records,
    fork_into_tab,
    group_episodes,
    read_episodes,
    recorded_step,
    server_episodes,
)
from openenv_hub.ui.view import ResultView, texts_html

__all__ = ["replay_tab"]

_EVENT: dict[str, Any] = {"api_visibility": "private", "show_progress": "minimal"}


class _ReplayPane:
    """The components showing one recorded step."""

    def __init__(self) -> None:
        self.position = gr.Markdown("*Open a trajectory file.*", elem_id="replay-position")
        with gr.Row(elem_classes="oe-metrics"):
            self.reward = gr.Textbox(
                "—", label="Recorded reward", interactive=False, elem_id="replay-reward"
            )
            self.done = gr.Textbox(
                "—", label="Recorded done", interactive=False, elem_id="replay-done"
            )
        self.images = gr.Gallery(
            label="Recorded images", visible=False, elem_id="replay-images", format="png",
            columns=3, height="auto", object_fit="contain", interactive=False,
        )  # fmt: skip
        self.texts = gr.HTML("", visible=False, elem_id="replay-text")
        self.observation = gr.JSON(label="Recorded observation", elem_id="replay-observation")
        self.breakdown = gr.JSON(label="Reward breakdown", elem_id="replay-breakdown")

    def outputs(self) -> list[Any]:
        return [self.position, self.reward, self.done, self.images, self.texts,
                self.observation, self.breakdown]  # fmt: skip

    def show(self, records: Records | None, step: int) -> dict[Any, Any]:
        if not records:
            return {self.position: "*No episode opened.*"}
        shown = recorded_step(records, step)
        view = split_observation(shown.payload["observation"])
        images = [(image, path) for path, image in view.images]
        return {
            self.position: f"`{shown.position}`",
            self.reward: json.dumps(shown.payload["reward"]),
            self.done: json.dumps(shown.payload["done"]),
            self.images: gr.update(value=images or None, visible=bool(images)),
            self.texts: gr.update(value=texts_html(view.texts), visible=bool(view.texts)),
            self.observation: view.summary,
            self.breakdown: shown.breakdown,
        }


def replay_tab(actions: Actions, view: ResultView, tabs: Any) -> None:
    """Lay out the Replay tab; forking updates the Playground's ``view`` and selects it."""
    episodes = gr.State({})
    with gr.Row():
        upload = gr.File(
            label="Trajectory file", file_types=[".jsonl", ".parquet"], elem_id="replay-file"
        )
        with gr.Column():
            dataset = gr.Textbox(
                label="Public dataset on the Hub", placeholder="namespace/name",
                elem_id="replay-dataset",
            )  # fmt: skip
            open_dataset = gr.Button("Open dataset", elem_id="replay-open-dataset")
            recorded = server_episodes(actions.pool) is not None
            this_server = gr.Button(
                "Episodes recorded on this server", visible=recorded, elem_id="replay-server"
            )
    with gr.Row():
        episode = gr.Dropdown(choices=[], label="Episode", elem_id="replay-episode")
        step = gr.Number(0, label="Step", precision=0, minimum=0, elem_id="replay-step")
    with gr.Row():
        back = gr.Button("◀ Back", elem_id="replay-back")
        forward = gr.Button("Forward ▶", elem_id="replay-forward")
        fork = gr.Button("Fork into Playground", variant="primary", elem_id="replay-fork")
    pane = _ReplayPane()

    def opened(found: dict[str, Records]) -> dict[Any, Any]:
        first = next(iter(found), None)
        changes = pane.show(found.get(first) if first else None, 0)
        changes.update({episodes: found, step: 0})
        changes[episode] = gr.update(choices=list(found), value=first)
        return changes

    def on_file(path: str | None) -> dict[Any, Any]:
        return opened(read_episodes(path) if path else {})

    def on_dataset(repo_id: str) -> dict[Any, Any]:
        try:
            records = read_hub_records(repo_id.strip(), anonymous=True)
        except OpenEnvError as exc:
            return {pane.position: f"**Could not open the dataset:** {exc}"}
        return opened(group_episodes(records))

    def on_server() -> dict[Any, Any]:
        return opened(server_episodes(actions.pool) or {})

    def moved(by: int) -> Any:
        def move(found: dict[str, Records], name: str | None, at: Any) -> dict[Any, Any]:
            records = found.get(name or "")
            last = len(records) - 1 if records else 0
            target = min(max(int(at or 0) + by, 0), last)
            return {step: target, **pane.show(records, target)}

        return move

    async def on_fork(
        request: gr.Request, found: dict[str, Records], name: str | None, at: Any
    ) -> dict[Any, Any]:
        records = found.get(name or "") or []
        outcome = await fork_into_tab(actions, request.session_hash or "", records, int(at or 0))
        return {**view.updates(outcome), tabs: gr.Tabs(selected="playground")}

    shown = [step, *pane.outputs()]
    where = [episodes, episode, step]
    upload.change(on_file, inputs=[upload], outputs=[episodes, episode, *shown], **_EVENT)
    opening = [episodes, episode, *shown]
    open_dataset.click(on_dataset, inputs=[dataset], outputs=opening, **_EVENT)
    dataset.submit(on_dataset, inputs=[dataset], outputs=opening, **_EVENT)
    this_server.click(on_server, outputs=opening, **_EVENT)
    episode.input(moved(-(10**9)), inputs=where, outputs=shown, **_EVENT)
    step.submit(moved(0), inputs=where, outputs=shown, **_EVENT)
    back.click(moved(-1), inputs=where, outputs=shown, **_EVENT)
    forward.click(moved(1), inputs=where, outputs=shown, **_EVENT)
    fork.click(on_fork, inputs=where, outputs=[*view.outputs(), tabs], **_EVENT)
