"""A Space pushed from a development build names its bundled wheel by URL, so pip alone can
install it.

openenv-hub may not be on the package index at the version a development build has, so a plain
``openenv-hub>=0.1.0`` requirement leaves ``pip install git+<Space>`` with nothing to install.
When push bundles a wheel (``.openenv/wheels/``), it rewrites the *uploaded* ``pyproject.toml``
(never the author's) so every requirement on openenv-hub becomes a direct reference to that
wheel at the commit that holds it, which no later push can change::

    "openenv-hub>=0.1.0"      ->  "openenv-hub @ {endpoint}/spaces/NS/NAME/resolve/{commit}/.openenv/wheels/openenv_hub-0.1.0-py3-none-any.whl"
    "openenv-hub[ui]>=0.1.0"  ->  "openenv-hub[ui] @ ...same URL..."

A push of a released openenv-hub bundles no wheel and keeps the plain requirement. The Space's
Dockerfile installs the bundled wheel from its build context instead of that URL.

Example:
    >>> pin_requirements('dependencies = ["openenv-hub>=0.1.0", "numpy"]', "https://h/w.whl")[0]
    'dependencies = ["openenv-hub @ https://h/w.whl", "numpy"]'
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from openenv_hub.hub._diff import diff_files

if TYPE_CHECKING:
    from openenv_hub.hub._bundle import Bundle
    from openenv_hub.hub._client import HubContext
    from openenv_hub.hub._diff import RemoteSpace
    from openenv_hub.hub._urls import SpaceUrls

__all__ = [
    "PENDING_COMMIT",
    "WheelPin",
    "find_pinned_commit",
    "pin_requirements",
    "plan_pin",
    "write_pin",
]

PENDING_COMMIT = "<commit-of-the-wheel>"
"""Stands for the commit of a wheel not uploaded yet (dry runs show it; pushes replace it)."""

_REQUIREMENT = re.compile(
    r"""(?P<quote>["'])openenv[-_.]hub(?P<extras>\[[^\]"']*\])?"""
    r"""(?P<spec>\s*(?:[<>=!~][^"';@]*|@\s*[^"'\s;]+)?)\s*(?P<marker>;[^\n]*?)?(?P=quote)""",
    re.IGNORECASE,
)


def pin_requirements(text: str, url: str) -> tuple[str, list[str]]:
    """``text`` (a ``pyproject.toml``) with every openenv-hub requirement pointing at ``url``,
    and one ``"old -> new"`` line per requirement it changed."""
    changes: list[str] = []

    def pin(match: re.Match[str]) -> str:
        quote, extras, marker = match["quote"], match["extras"] or "", match["marker"]
        new = f"openenv-hub{extras} @ {url}" + (f" {marker.strip()}" if marker else "")
        old = match.group(0)[1:-1]
        if old != new:
            changes.append(f"{old} -> {new}")
        return f"{quote}{new}{quote}"

    return _REQUIREMENT.sub(pin, text), changes


def find_pinned_commit(text: str, base_url: str, wheel: str) -> str | None:
    """The commit that ``text`` pins ``wheel`` at, if it names ``{base_url}/resolve/COMMIT/wheel``."""
    pattern = re.escape(base_url) + r"/resolve/([0-9a-f]{40})/" + re.escape(wheel)
    found = re.search(pattern, text)
    return found.group(1) if found else None


@dataclass
class WheelPin:
    """The bundled wheel that the uploaded ``pyproject.toml`` names.

    Attributes:
        wheel: The wheel's path in the Space.
        original: ``pyproject.toml`` as the author wrote it.
        commit: The Space's commit holding the wheel; ``None`` until the push uploads it (in
            a commit of its own, made first).
        changes: ``"old -> new"`` for each requirement the pin rewrote.
    """

    wheel: str
    original: str
    commit: str | None
    changes: list[str] = field(default_factory=list)


def plan_pin(
    ctx: HubContext, bundle: Bundle, remote: RemoteSpace, urls: SpaceUrls
) -> WheelPin | None:
    """Pin the staged ``pyproject.toml`` to the bundled wheel; ``None`` when there is nothing
    to pin (a released openenv-hub, or no requirement on it)."""
    pyproject = bundle.root / "pyproject.toml"
    if not bundle.wheels or not pyproject.is_file():
        return None
    original = pyproject.read_text(encoding="utf-8")
    if not pin_requirements(original, "-")[1]:
        return None
    wheel = bundle.wheels[0]
    commit = None
    if wheel in diff_files(bundle.root, [wheel], remote.files).unchanged:
        commit = _pinned_on_the_space(ctx, remote, urls, wheel) or remote.sha
    pin = WheelPin(wheel, original, commit)
    write_pin(bundle, pin, urls)
    return pin


def write_pin(bundle: Bundle, pin: WheelPin, urls: SpaceUrls) -> None:
    """(Re)write the staged ``pyproject.toml`` with ``pin.commit``; update ``pin.changes``."""
    url = urls.file_url(pin.commit or PENDING_COMMIT, pin.wheel)
    text, pin.changes = pin_requirements(pin.original, url)
    (bundle.root / "pyproject.toml").write_text(text, encoding="utf-8")


def _pinned_on_the_space(
    ctx: HubContext, remote: RemoteSpace, urls: SpaceUrls, wheel: str
) -> str | None:
    """The commit the Space's own ``pyproject.toml`` pins ``wheel`` at, so an unchanged wheel
    keeps its URL and an unchanged environment makes no commit."""
    if "pyproject.toml" not in remote.files or remote.sha is None:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="openenv-pin-") as tmp:
            path = ctx.api.hf_hub_download(
                urls.repo_id,
                "pyproject.toml",
                repo_type="space",
                revision=remote.sha,
                local_dir=tmp,
            )
            text = Path(path).read_text(encoding="utf-8")
    except Exception:  # only an optimisation: without it the pin names the current commit
        return None
    return find_pinned_commit(text, urls.web, wheel)
