"""One gradio widget per form field (see :mod:`openenv_hub.ui.schema` for the kinds).

Layer: ui.
"""

from __future__ import annotations

import re
from typing import Any

import gradio as gr

from openenv_hub.ui.schema import FieldSpec, initial_value

__all__ = ["field_widget", "widget_id"]


def widget_id(prefix: str, name: str) -> str:
    """The element id of a field's widget, e.g. ``field-count`` or ``tool-arg-message``."""
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"


def field_widget(spec: FieldSpec, *, prefix: str = "field") -> Any:
    """Create (inside the current gradio context) the widget for ``spec``.

    Strings get a text box, integers and floats a number box carrying the bounds, booleans a
    checkbox, enums and literals a dropdown, and everything else (lists, dicts, nested models,
    unions) a JSON editor that is parsed and validated on submit.
    """
    common: dict[str, Any] = {
        "label": spec.label,
        "info": spec.info(),
        "elem_id": widget_id(prefix, spec.name),
        "value": initial_value(spec),
        "interactive": True,
    }
    if spec.kind == "text":
        lines = 3 if spec.multiline else 1
        return gr.Textbox(lines=lines, max_lines=12 if spec.multiline else 1, **common)
    if spec.kind in ("integer", "number") and not isinstance(spec.default, (int, float)):
        # gr.Number cannot be empty (it shows and sends 0), so a number without a default
        # is typed into a text box and parsed on submit.
        hint = "required" if spec.required else "empty: leave unset"
        return gr.Textbox(placeholder=hint, **common)
    if spec.kind in ("integer", "number"):
        low = spec.minimum if spec.minimum is not None else spec.exclusive_minimum
        high = spec.maximum if spec.maximum is not None else spec.exclusive_maximum
        integer = spec.kind == "integer"
        return gr.Number(
            precision=0 if integer else None,
            step=1 if integer else 0.1,
            minimum=low,
            maximum=high,
            **common,
        )
    if spec.kind == "boolean":
        return gr.Checkbox(**common)
    if spec.kind == "choice":
        return gr.Dropdown(choices=list(spec.choices), **common)
    info = common.pop("info")
    editor = gr.Code(language="json", lines=3, max_lines=16, **common)
    gr.Markdown(info, elem_classes="oe-json-info")
    return editor
