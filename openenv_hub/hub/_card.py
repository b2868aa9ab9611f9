"""The Space card (README.md front matter) that a Docker environment Space needs.

:func:`fix_card` returns the README with ``sdk: docker``, the manifest's ``app_port``,
``base_path: /web`` and the ``openenv`` tag, plus the list of what it changed, so push can tell
the user exactly that. A README that already has them is returned unchanged. An app Space
(``kind: app``, not an environment) gets ``sdk`` and ``app_port`` only. Cards are read and
written by huggingface_hub's ``SpaceCard`` / ``SpaceCardData``, as the Hub reads them.

Example:
    >>> text, changes = fix_card("---\\nsdk: gradio\\n---\\n# Hi\\n", port=8000, title="Hi")
    >>> changes
    ["sdk: 'gradio' -> 'docker'", 'app_port: added (8000)', 'base_path: added (/web)', "tags: added 'openenv'"]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from huggingface_hub import SpaceCard

__all__ = ["SPACE_COLORS", "fix_card"]

SPACE_COLORS = ("red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray")


def fix_card(
    text: str | None, *, port: int, title: str, environment: bool = True
) -> tuple[str, list[str]]:
    """``text`` with a correct front matter, and a description of each change.

    ``environment=False`` is for an app Space: no ``base_path`` and no ``openenv`` tag.
    """
    if text is None:
        return _default_card(title, port, f"\n# {title}\n", environment), [
            "README.md: created with a Space card"
        ]
    if not text.startswith("---"):
        return _default_card(title, port, "\n" + text, environment), [
            "front matter: added (the README had none)"
        ]
    try:
        card = _parse(text)
    except ValueError:  # a broken front matter is the author's to fix; validation reports it
        return text, []
    changes = _repair(card.data, port, environment)
    if not changes:
        return text, []
    return str(card), changes


def _parse(text: str) -> SpaceCard:
    """The card of ``text``.

    Raises:
        ValueError: The front matter is not closed, not YAML, or not a mapping.
    """
    import yaml
    from huggingface_hub import SpaceCard

    lines = text.splitlines()
    if not any(line.strip() == "---" for line in lines[1:]):
        raise ValueError("front matter is not closed")
    try:
        return SpaceCard(text, ignore_metadata_errors=False)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _repair(data: Any, port: int, environment: bool) -> list[str]:
    changes = []
    if data.sdk != "docker":
        changes.append(_change("sdk", data.sdk, "docker"))
        data.sdk = "docker"
    if data.app_port != port:
        changes.append(_change("app_port", data.app_port, port))
        data.app_port = port
    if environment:
        changes += _environment_fields(data)
    for key, default in (("colorFrom", "blue"), ("colorTo", "indigo")):
        value = data.get(key)
        if value is not None and value not in SPACE_COLORS:
            changes.append(_change(key, value, default))
            setattr(data, key, default)
    return changes


def _environment_fields(data: Any) -> list[str]:
    changes = []
    if data.get("base_path") is None:
        changes.append("base_path: added (/web)")
        data.base_path = "/web"
    tags = data.tags
    if not isinstance(tags, list):
        tags = [] if tags is None else [tags]
    if "openenv" not in tags:
        changes.append("tags: added 'openenv'")
        data.tags = [*tags, "openenv"]
    return changes


def _change(key: str, old: object, new: object) -> str:
    return f"{key}: added ({new})" if old is None else f"{key}: {old!r} -> {new!r}"


def _default_card(title: str, port: int, body: str, environment: bool) -> str:
    from huggingface_hub import SpaceCard, SpaceCardData

    data = SpaceCardData(
        title=title,
        emoji="🤖",
        colorFrom="blue",
        colorTo="indigo",
        sdk="docker",
        app_port=port,
        base_path="/web" if environment else None,
        pinned=False,
        tags=["openenv"] if environment else None,
    )
    return str(SpaceCard(f"---\n{data.to_yaml()}\n---\n{body}"))
