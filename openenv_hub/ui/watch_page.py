"""The Sessions tab's page side: the tables and views a viewer watches in, and the script that
fills them from the tab's Server-Sent Events stream (:mod:`openenv_hub.ui.watch_stream`).

The script opens one ``EventSource`` while the tab is shown (none while another tab is), and
writes every value with ``textContent``: an environment's strings never become markup, and
only PNG ``data:`` URIs become images. It asks the server for the session picker's choices (a
``change`` of the component) only when the choices the stream lists change; picking a session
(an ``openenv-watch`` event on :data:`ROOT_CLASS`) opens the stream again for that session. The
stream is told the page's gradio session hash, so that the page's own session is left out. The
watched steps' table keeps its newest row in view, unless the viewer scrolled up in it (it
follows again once scrolled back to the bottom).

Layer: ui.
"""

from __future__ import annotations

import html

from openenv_hub.ui.watch_stream import WATCH_ROUTE

__all__ = ["ROOT_CLASS", "WATCH_CSS", "WATCH_SCRIPT", "follow_script", "watch_template"]

ROOT_CLASS = "oe-watch"
SESSION_COLUMNS = ["Session", "Client", "Age", "Episode", "Steps", "Return so far", "Last activity"]
STEP_COLUMNS = ["#", "Episode", "Step", "Action", "Reward", "Done", "Breakdown"]

WATCH_CSS = """
.oe-watch-label { display: block; font-size: var(--text-sm); margin: 0.6rem 0 0.3rem 0;
  color: var(--body-text-color-subdued); }
.oe-watch-table { max-height: 28rem; overflow: auto; contain: content; border: 1px solid var(--border-color-primary);
  border-radius: 6px; }
.oe-watch-table table { width: 100%; table-layout: fixed; border-collapse: collapse; font-size: var(--text-sm); }
.oe-watch-table th, .oe-watch-table td { padding: 0.25rem 0.5rem; text-align: left;
  border-bottom: 1px solid var(--border-color-primary); word-break: break-word; }
#live-sessions th:first-child { width: 16%; }
#live-sessions th:nth-child(2) { width: 26%; }
#watched-steps th:nth-child(-n+3) { width: 6%; }
#watched-steps th:nth-child(4) { width: 42%; }
.oe-watch-table th { position: sticky; top: 0; background: var(--background-fill-secondary); }
#watch-status { margin: 0.6rem 0; }
#watch-images { display: flex; flex-wrap: wrap; gap: 0.6rem; }
#watch-images img { max-width: 320px; image-rendering: pixelated; }
#watch-observation { white-space: pre-wrap; word-break: break-word; max-height: 24rem;
  overflow: auto; padding: 0.6rem; border-radius: 6px; margin: 0;
  background: var(--background-fill-secondary); }
"""


def _table(elem_id: str, label: str, columns: list[str]) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in columns)
    return (
        f'<span class="oe-watch-label">{label}</span>'
        f'<div id="{elem_id}" class="oe-watch-table"><table aria-label="{label}">'
        f"<thead><tr>{head}</tr></thead><tbody></tbody></table></div>"
    )


def watch_template() -> str:
    """The tab's live parts around ``@children`` (the session picker, a gradio drop-down)."""
    return (
        f'<div class="{ROOT_CLASS}">{_table("live-sessions", "Live sessions", SESSION_COLUMNS)}'
        "</div>@children"
        f'<div class="{ROOT_CLASS}-watched">'
        '<div id="watch-status"><em>Pick a session to watch.</em></div>'
        f"{_table('watched-steps', 'Watched steps', STEP_COLUMNS)}"
        '<div id="watch-images-box" hidden><span class="oe-watch-label">Latest images</span>'
        '<div id="watch-images"></div></div>'
        '<span class="oe-watch-label">Latest observation</span><pre id="watch-observation">'
        "</pre></div>"
    )


def follow_script() -> str:
    """The picker's ``change`` handler, run in the page: watch the picked session."""
    return (
        "(chosen) => { document.querySelector('." + ROOT_CLASS + "')?.dispatchEvent("
        "new CustomEvent('openenv-watch', {detail: chosen || null})); return []; }"
    )


WATCH_SCRIPT = (
    """
const root = element.querySelector('.oe-watch');
const part = (id) => element.querySelector('#' + id);
const configured = window.gradio_config && window.gradio_config.root;
const base = new URL('WATCH_ROUTE'.slice(1), configured ? configured.replace(/\\/?$/, '/')
  : new URL('.', location.href));
let source = null, chosen = null, listed = null, following = true;
const steps = part('watched-steps');
steps.addEventListener('scroll', () => {
  following = steps.scrollTop + steps.clientHeight >= steps.scrollHeight - 8;
});
const row = (cells) => {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    td.textContent = String(cell);
    tr.appendChild(td);
  }
  return tr;
};
const onSessions = (event) => {
  const data = JSON.parse(event.data);
  part('live-sessions').querySelector('tbody').replaceChildren(...data.rows.map(row));
  const choices = JSON.stringify(data.choices);
  if (choices !== listed) { listed = choices; trigger('change'); }
};
const picture = ([path, src]) => {
  const figure = document.createElement('figure');
  const image = document.createElement('img');
  if (String(src).startsWith('data:image/png;base64,')) image.src = src;
  image.alt = path;
  const caption = document.createElement('figcaption');
  caption.textContent = path;
  figure.append(image, caption);
  return figure;
};
const onWatch = (event) => {
  const data = JSON.parse(event.data);
  const code = document.createElement('code');
  code.textContent = data.session;
  part('watch-status').replaceChildren('Session ', code, data.text);
  const body = part('watched-steps').querySelector('tbody');
  if (data.replace) body.replaceChildren();
  for (const cells of data.rows || []) body.appendChild(row(cells));
  while (body.rows.length > (data.shown || 20)) body.deleteRow(0);
  if (following || data.replace) { steps.scrollTop = steps.scrollHeight; following = true; }
  const observation = part('watch-observation');
  if (data.observation !== undefined && observation.textContent !== data.observation) {
    observation.textContent = data.observation;
  }
  if (data.images !== undefined) {
    part('watch-images').replaceChildren(...data.images.map(picture));
    part('watch-images-box').hidden = data.images.length === 0;
  }
};
const stop = () => { if (source) { source.close(); source = null; } };
const start = () => {
  stop();
  const url = new URL(base);
  if (chosen) url.searchParams.set('session', chosen);
  if (window.__gradio_session_hash__) url.searchParams.set('tab', window.__gradio_session_hash__);
  source = new EventSource(url);
  source.addEventListener('sessions', onSessions);
  source.addEventListener('watch', onWatch);
};
const shown = () => root.isConnected && root.getClientRects().length > 0;
new ResizeObserver(() => { if (!shown()) stop(); else if (!source) start(); }).observe(root);
root.addEventListener('openenv-watch', (event) => {
  if (event.detail === chosen) return;
  chosen = event.detail;
  part('watched-steps').querySelector('tbody').replaceChildren();
  following = true;
  part('watch-status').textContent = chosen ? 'Connecting\\u2026' : 'Pick a session to watch.';
  if (shown()) start();
});
"""
).replace("WATCH_ROUTE", WATCH_ROUTE)
