"""The UI's look: a gradio theme with system fonts (no web font downloads) and a little CSS.

Layer: ui.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CSS", "theme"]

CSS = """
.oe-header h1 { margin-bottom: 0.1rem; }
.oe-header p { margin-top: 0; color: var(--body-text-color-subdued); }
.oe-version { font-size: 0.8rem; padding: 0.1rem 0.45rem; border-radius: 999px;
  background: var(--primary-100); color: var(--primary-700); margin-left: 0.4rem;
  vertical-align: middle; }
#session-info { color: var(--body-text-color-subdued); font-size: 0.85rem; text-align: right; }
.oe-pane-title h3 { margin: 0.2rem 0 0.4rem 0; }
.oe-banner { border-radius: 8px; padding: 0.55rem 0.8rem; margin: 0.2rem 0;
  border: 1px solid; font-size: 0.92rem; }
.oe-banner ul { margin: 0.3rem 0 0 1.1rem; padding: 0; }
.oe-banner code { font-size: 0.85rem; }
.oe-ok { background: #ecfdf5; border-color: #a7f3d0; color: #065f46; }
.oe-info { background: #eff6ff; border-color: #bfdbfe; color: #1e3a8a; }
.oe-error { background: #fef2f2; border-color: #fecaca; color: #991b1b; }
.oe-notice { background: #fffbeb; border-color: #fde68a; color: #92400e; }
#obs-images img { image-rendering: pixelated; }
.oe-text-field { margin: 0 0 0.6rem 0; }
.oe-text-field summary { font-weight: 600; cursor: pointer; }
.oe-text-field pre { white-space: pre-wrap; word-break: break-word; max-height: 24rem;
  overflow: auto; padding: 0.6rem; border-radius: 6px;
  background: var(--background-fill-secondary); }
.oe-metrics input { font-weight: 600; }
.oe-json-info { padding: 0 0.6rem; }
.oe-json-info p { margin: 0; font-size: var(--text-sm); color: var(--body-text-color-subdued); }
"""


def theme() -> Any:
    """A calm indigo/slate theme using the platform's own fonts."""
    import gradio as gr

    return gr.themes.Soft(
        primary_hue="indigo",
        secondary_hue="sky",
        neutral_hue="slate",
        radius_size="md",
        font=["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
    )
