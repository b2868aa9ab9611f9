"""The right-hand pane (observation, reward, done, state), the banner and the history table.

:class:`ResultView` creates those components and turns an :class:`Outcome` into the updates
gradio applies to them.

Layer: ui.
"""

from __future__ import annotations

import html
import json
from typing import Any

import gradio as gr

from openenv_hub.ui.actions import Actions, Outcome
from openenv_hub.ui.history import HISTORY_COLUMNS, table_rows
from openenv_hub.ui.observation import split_observation

__all__ = ["ResultView", "banner_html", "texts_html"]


def banner_html(outcome: Outcome) -> str:
    """The status banner: a coloured box with the headline and detail lines, all escaped."""
    parts = []
    if outcome.notice:
        parts.append(f'<div class="oe-banner oe-notice">{html.escape(outcome.notice)}</div>')
    items = "".join(f"<li><code>{html.escape(line)}</code></li>" for line in outcome.details)
    details = f"<ul>{items}</ul>" if items else ""
    parts.append(
        f'<div class="oe-banner oe-{outcome.status}" data-status="{outcome.status}">'
        f"<strong>{html.escape(outcome.message)}</strong>{details}</div>"
    )
    return "".join(parts)


def texts_html(texts: list[tuple[str, str]]) -> str:
    """Long text fields of an observation, each under its path, escaped."""
    return "".join(
        f'<details class="oe-text-field" open><summary>{html.escape(path)}</summary>'
        f"<pre>{html.escape(text)}</pre></details>"
        for path, text in texts
    )


def _metric(value: Any) -> str:
    if value is None:
        return "—"
    return json.dumps(value) if isinstance(value, bool) else str(value)


class ResultView:
    """The components showing results, created where the constructor is called.

    Call :meth:`build_banner`, :meth:`build_observation` and :meth:`build_history` inside the
    layout blocks where each part belongs; :meth:`outputs` lists every component an action
    may update.
    """

    def __init__(self, actions: Actions) -> None:
        self._actions = actions
        self._inline: dict[str, Any] = {}

    def build_inline_status(self, source: str) -> None:
        """A box under a form's button repeating that form's errors (the banner may be far)."""
        self._inline[source] = gr.HTML("", elem_id=f"{source}-status")

    def build_banner(self) -> None:
        with gr.Row(equal_height=True):
            self.banner = gr.HTML("", elem_id="banner", scale=4)
            self.session = gr.Markdown("Connecting…", elem_id="session-info", scale=2)

    def build_observation(self) -> None:
        gr.Markdown("### Observation", elem_classes="oe-pane-title")
        with gr.Row(elem_classes="oe-metrics"):
            self.reward = gr.Textbox("—", label="Reward", interactive=False, elem_id="reward")
            self.done = gr.Textbox("—", label="Done", interactive=False, elem_id="done")
        self.images = gr.Gallery(
            label="Images",
            visible=False,
            elem_id="obs-images",
            columns=3,
            height="auto",
            format="png",
            object_fit="contain",
            interactive=False,
        )
        self.texts = gr.HTML("", visible=False, elem_id="obs-text")
        self.observation = gr.JSON(label="Observation", elem_id="observation", open=True)
        with gr.Accordion("Episode state", open=True):
            self.state = gr.JSON(label="State", elem_id="state", open=True)

    def build_history(self) -> None:
        gr.Markdown("### History", elem_classes="oe-pane-title")
        self.history = gr.Dataframe(
            value=[],
            headers=HISTORY_COLUMNS,
            datatype=["number", "str", "str", "str", "str"],
            interactive=False,
            wrap=True,
            elem_id="history",
            column_widths=["6%", "52%", "12%", "10%", "20%"],
        )
        self.download = gr.DownloadButton(
            "Download history (JSONL)", elem_id="history-download", size="sm", interactive=False
        )

    def outputs(self) -> list[Any]:
        return [
            self.banner,
            self.session,
            self.reward,
            self.done,
            self.images,
            self.texts,
            self.observation,
            self.state,
            self.history,
            self.download,
            *self._inline.values(),
        ]

    def updates(self, outcome: Outcome) -> dict[Any, Any]:
        """Component updates for ``outcome``; parts it does not touch are left as they are."""
        changes: dict[Any, Any] = {
            self.banner: banner_html(outcome),
            self.session: self._actions.session_line(outcome.tab),
        }
        for source, box in self._inline.items():
            failed = outcome.status == "error" and outcome.source == source
            changes[box] = banner_html(outcome) if failed else ""
        if outcome.payload is not None:
            changes.update(self._payload_updates(outcome.payload))
        if outcome.state is not None:
            changes[self.state] = outcome.state
        if outcome.history_changed and outcome.tab is not None:
            changes[self.history] = table_rows(outcome.tab.history)
            path = self._actions.tabs.history_file(outcome.tab)
            changes[self.download] = gr.update(value=path, interactive=path is not None)
        return changes

    def _payload_updates(self, payload: dict[str, Any]) -> dict[Any, Any]:
        view = split_observation(payload.get("observation"))
        images = [(image, path) for path, image in view.images]
        return {
            self.reward: _metric(payload.get("reward")),
            self.done: _metric(payload.get("done")),
            self.observation: view.summary,
            self.images: gr.update(value=images or None, visible=bool(images)),
            self.texts: gr.update(value=texts_html(view.texts), visible=bool(view.texts)),
        }
