"""The Space card (README.md front matter) that a Docker environment Space needs.

:func:`fix_card` returns the README with ``sdk: docker``, the manifest's ``app_port``,
``base_path: /web`` and the ``openenv`` tag, plus the list of what it changed, so push can tell
the user exactly that. A README that already has them is returned unchanged. An app Space
(``kind: app``, not an environment) gets ``sdk`` and ``app_port`` only.

Example:
    >>> text, changes = fix_card("---\\nsdk: gradio\\n---\\n# Hi\\n", port=8000, title="Hi")
    >>> changes
    ["sdk: 'gradio' -> 'docker'", 'app_port: added (8000)', 'base_path: added (/web)', "tags: added 'openenv'"]
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["SPACE_COLORS", "fix_card"]

SPACE_COLORS = ("red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray")


def fix_card(
    text: str | None, *, port: int, title: str, environment: bool = True
) -> tuple[str, list[str]]:
    """``text`` with a correct front matter, and a description of each change.

    ``environment=False`` is for an app Space: no ``base_path`` and no ``openenv`` tag.
    """
    if text is None:
        card = _default_card(title, port, environment)
        return _render(card, f"\n# {title}\n"), ["README.md: created with a Space card"]
    try:
        split = _split(text)
    except ValueError:  # a broken front matter is the author's to fix; validation reports it
        return text, []
    if split is None:
        card = _default_card(title, port, environment)
        return _render(card, "\n" + text), ["front matter: added (the README had none)"]
    card, body = split
    changes = _repair(card, port, environment)
    if not changes:
        return text, []
    return _render(card, body), changes


def _repair(card: dict[str, Any], port: int, environment: bool) -> list[str]:
    changes = []
    if card.get("sdk") != "docker":
        changes.append(_change("sdk", card.get("sdk"), "docker"))
        card["sdk"] = "docker"
    if card.get("app_port") != port:
        changes.append(_change("app_port", card.get("app_port"), port))
        card["app_port"] = port
    if environment:
        changes += _environment_fields(card)
    for key, default in (("colorFrom", "blue"), ("colorTo", "indigo")):
        if key in card and card[key] not in SPACE_COLORS:
            changes.append(_change(key, card[key], default))
            card[key] = default
    return changes


def _environment_fields(card: dict[str, Any]) -> list[str]:
    changes = []
    if "base_path" not in card:
        changes.append("base_path: added (/web)")
        card["base_path"] = "/web"
    tags = card.get("tags")
    if not isinstance(tags, list):
        tags = [] if tags is None else [tags]
    if "openenv" not in tags:
        changes.append("tags: added 'openenv'")
        card["tags"] = [*tags, "openenv"]
    return changes


def _change(key: str, old: object, new: object) -> str:
    return f"{key}: added ({new})" if old is None else f"{key}: {old!r} -> {new!r}"


def _default_card(title: str, port: int, environment: bool) -> dict[str, Any]:
    card: dict[str, Any] = {
        "title": title,
        "emoji": "🤖",
        "colorFrom": "blue",
        "colorTo": "indigo",
        "sdk": "docker",
        "app_port": port,
        "base_path": "/web",
        "pinned": False,
        "tags": ["openenv"],
    }
    if not environment:
        del card["base_path"], card["tags"]
    return card


def _split(text: str) -> tuple[dict[str, Any], str] | None:
    """The front matter as a dict and the rest of the text; ``None`` if there is none.

    Raises:
        ValueError: The front matter is not closed, or is not a YAML mapping.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise ValueError("front matter is not closed")
    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None
    if data is not None and not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return dict(data or {}), "".join(lines[end + 1 :])


def _render(card: dict[str, Any], body: str) -> str:
    front = yaml.safe_dump(card, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{front}---\n{body}"
