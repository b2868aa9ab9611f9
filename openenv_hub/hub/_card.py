"""The Space card (README.md front matter) that a Docker environment Space needs.

:func:`fix_card` returns the README with ``sdk: docker``, the manifest's ``app_port``,
``base_path: /web`` and the tags of an environment (``openenv`` and ``rl-environment``, by which
the Hub and the catalog find environments, and, for an environment imported from another
library, that library's tag, ``harbor`` or ``verifiers``, when its manifest carries it), plus
the list of what it changed, so push can tell the user exactly that. A README that already has them is returned unchanged. An app Space
(``kind: app``, not an environment) gets ``sdk`` and ``app_port`` only. Cards are read and
written by huggingface_hub's ``SpaceCard`` / ``SpaceCardData``, as the Hub reads them.

Example:
    >>> text, changes = fix_card("---\\nsdk: gradio\\n---\\n# Hi\\n", port=8000, title="Hi")
    >>> changes
    ["sdk: 'gradio' -> 'docker'", 'app_port: added (8000)', 'base_path: added (/web)', "tags: added 'openenv', 'rl-environment'"]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openenv_hub.checks import ENVIRONMENT_TAGS

if TYPE_CHECKING:
    from huggingface_hub import SpaceCard

__all__ = [
    "ENVIRONMENT_TAGS",
    "SOURCE_LIBRARY_TAGS",
    "SPACE_COLORS",
    "environment_tags",
    "fix_card",
]

SPACE_COLORS = ("red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray")
#: The libraries environments are imported from (``openenv import``); an imported environment's
#: manifest carries its library's tag, and its card gets it too.
SOURCE_LIBRARY_TAGS = ("harbor", "verifiers")


def environment_tags(manifest_tags: Sequence[str] = ()) -> list[str]:
    """:data:`ENVIRONMENT_TAGS`, then the tags of :data:`SOURCE_LIBRARY_TAGS` that
    ``manifest_tags`` holds."""
    return [*ENVIRONMENT_TAGS, *(tag for tag in SOURCE_LIBRARY_TAGS if tag in manifest_tags)]


def fix_card(
    text: str | None,
    *,
    port: int,
    title: str,
    environment: bool = True,
    tags: Sequence[str] = (),
) -> tuple[str, list[str]]:
    """``text`` with a correct front matter, and a description of each change.

    ``tags`` are the manifest's (see :func:`environment_tags`). ``environment=False`` is for an
    app Space: no ``base_path`` and no tag added.
    """
    wanted = environment_tags(tags) if environment else []
    if text is None:
        return _default_card(title, port, f"\n# {title}\n", wanted), [
            "README.md: created with a Space card"
        ]
    if not text.startswith("---"):
        return _default_card(title, port, "\n" + text, wanted), [
            "front matter: added (the README had none)"
        ]
    try:
        card = _parse(text)
    except ValueError:  # a broken front matter is the author's to fix; validation reports it
        return text, []
    changes = _repair(card.data, port, wanted)
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


def _repair(data: Any, port: int, tags: list[str]) -> list[str]:
    changes = []
    if data.sdk != "docker":
        changes.append(_change("sdk", data.sdk, "docker"))
        data.sdk = "docker"
    if data.app_port != port:
        changes.append(_change("app_port", data.app_port, port))
        data.app_port = port
    if tags:
        changes += _environment_fields(data, tags)
    for key, default in (("colorFrom", "blue"), ("colorTo", "indigo")):
        value = data.get(key)
        if value is not None and value not in SPACE_COLORS:
            changes.append(_change(key, value, default))
            setattr(data, key, default)
    return changes


def _environment_fields(data: Any, wanted: list[str]) -> list[str]:
    changes = []
    if data.get("base_path") is None:
        changes.append("base_path: added (/web)")
        data.base_path = "/web"
    tags = data.tags
    if not isinstance(tags, list):
        tags = [] if tags is None else [tags]
    missing = [tag for tag in wanted if tag not in tags]
    if missing:
        changes.append("tags: added " + ", ".join(repr(tag) for tag in missing))
        data.tags = [*tags, *missing]
    return changes


def _change(key: str, old: object, new: object) -> str:
    return f"{key}: added ({new})" if old is None else f"{key}: {old!r} -> {new!r}"


def _default_card(title: str, port: int, body: str, tags: list[str]) -> str:
    from huggingface_hub import SpaceCard, SpaceCardData

    data = SpaceCardData(
        title=title,
        emoji="🤖",
        colorFrom="blue",
        colorTo="indigo",
        sdk="docker",
        app_port=port,
        base_path="/web" if tags else None,
        pinned=False,
        tags=tags or None,
    )
    return str(SpaceCard(f"---\n{data.to_yaml()}\n---\n{body}"))
