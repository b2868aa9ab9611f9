"""Griffe extension for the docs site: doctest lines in a docstring are shown as code.

Docstrings here show examples as bare ``>>>`` lines and their output, as the standard library
does. Markdown would read ``['a', 'b']`` in such output as a link; this fences each run of
doctest lines (up to the next blank line) as a ``pycon`` block before mkdocstrings renders it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

FENCE = re.compile(r"^\s*(```|~~~)")
PROMPT = re.compile(r"^(?P<indent>\s*)>>> ")


def fence_doctests(text: str) -> str:
    """``text`` with each run of doctest lines inside a fenced ``pycon`` block."""
    out: list[str] = []
    lines = text.splitlines()
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            in_fence = not in_fence
        prompt = None if in_fence else PROMPT.match(line)
        if prompt is None:
            out.append(line)
            i += 1
            continue
        indent = prompt["indent"]
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fences the doctest lines of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>> " in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
