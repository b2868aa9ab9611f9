"""The Space bundle: a staged copy of an environment folder, exactly as it will be uploaded.

Staging never touches the environment folder. The copy holds the selected files (see
:func:`openenv_hub.hub._ignore.stage_files`, which Docker build contexts use too: links are
copied as the files they name, and only when those are published files of the folder), a corrected Space card when the README needed one, and, for a
development install of openenv-hub, its wheel in ``.openenv/wheels/`` so the Space builds the
code the author tested.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from openenv_hub.checks import check_folder, passed
from openenv_hub.checks.scorecard import CARD_KEY, SCORECARD_FILE
from openenv_hub.errors import EnvironmentValidationError
from openenv_hub.hub._card import fix_card
from openenv_hub.hub._ignore import LargeFile, Skipped, stage_files
from openenv_hub.hub._quality import add_scorecard, folder_digest, read_scorecard
from openenv_hub.model.manifest import Manifest, ManifestError, load_manifest

__all__ = ["Bundle", "stage_bundle"]


@dataclass
class Bundle:
    """A staged environment.

    Attributes:
        source: The environment folder.
        root: The staged copy (a temporary folder).
        files: What is uploaded, as sorted relative POSIX paths.
        ignored: What ignore rules left out (folders end with ``/``).
        skipped: What the safety rules left out (links, hard links, ``.git`` files, secrets),
            with why.
        large: Published files above 10 MB (the Hub stores them with Xet / Git LFS).
        card_changes: What was changed in README.md's front matter (empty if nothing).
        scorecard: What became of the folder's quality scorecard (``quality.json``): shown on
            the card, or left out and why ("" when the folder has none).
        wheels: Bundled wheels, relative to ``root``.
        manifest: The environment's manifest.
    """

    source: Path
    root: Path
    files: list[str]
    manifest: Manifest
    ignored: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    large: list[LargeFile] = field(default_factory=list)
    card_changes: list[str] = field(default_factory=list)
    scorecard: str = ""
    wheels: list[str] = field(default_factory=list)


def stage_bundle(
    source: Path,
    root: Path,
    *,
    exclude: Sequence[str] = (),
    include_secrets: Sequence[str] = (),
    allow_hard_links: bool = False,
    bundle_wheel: bool = True,
) -> Bundle:
    """Copy ``source`` into ``root`` as it will be uploaded, then validate the copy.

    Raises:
        EnvironmentValidationError: A static check failed (the error holds every result).
    """
    manifest = _manifest(source)
    root.mkdir(parents=True)  # a fresh folder: never mixed with an earlier staging
    selection = stage_files(
        source,
        root,
        exclude=exclude,
        include_secrets=include_secrets,
        allow_hard_links=allow_hard_links,
    )
    bundle = Bundle(
        source,
        root,
        list(selection.files),
        manifest,
        ignored=selection.ignored,
        skipped=selection.skipped,
        large=selection.large,
    )
    _fix_card(bundle)
    _show_scorecard(bundle)
    if bundle_wheel:
        _add_wheels(bundle)
    _validate(bundle)
    return bundle


def _manifest(source: Path) -> Manifest:
    try:
        return load_manifest(source)
    except ManifestError:
        raise EnvironmentValidationError(str(source), check_folder(source)) from None


def _fix_card(bundle: Bundle) -> None:
    readme = bundle.root / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else None
    title = " ".join(part.capitalize() for part in bundle.manifest.name.split("_") if part)
    environment = bundle.manifest.is_environment
    fixed, changes = fix_card(
        text,
        port=bundle.manifest.port,
        title=title,
        environment=environment,
        tags=bundle.manifest.tags,
    )
    if changes:
        readme.write_text(fixed, encoding="utf-8")
        bundle.card_changes = changes
        if "README.md" not in bundle.files:
            bundle.files = sorted([*bundle.files, "README.md"])


def _show_scorecard(bundle: Bundle) -> None:
    """The folder's scorecard on the staged card, when it was made for these files."""
    try:
        card = read_scorecard(bundle.root)
    except ValueError as exc:
        bundle.scorecard = f"left out: {exc}"
        return
    if card is None:
        return
    if card.digest != folder_digest(bundle.source):
        bundle.scorecard = (
            f"left out: {SCORECARD_FILE} was made for other files; run 'openenv validate "
            f"{bundle.source.name} --level quality --save' again"
        )
        return
    readme = bundle.root / "README.md"
    try:
        shown = add_scorecard(readme.read_text(encoding="utf-8"), card)
    except (ValueError, yaml.YAMLError) as exc:  # a broken card is the static checks' to report
        bundle.scorecard = f"left out: README.md's front matter does not read ({exc})"
        return
    readme.write_text(shown, encoding="utf-8")
    bundle.scorecard = f"{card.badge()} (card metadata '{CARD_KEY}' and a README section)"
    if "README.md" not in bundle.files:
        bundle.files = sorted([*bundle.files, "README.md"])


def _add_wheels(bundle: Bundle) -> None:
    from openenv_hub.packaging import bundle_wheels

    copies = bundle_wheels(bundle.root)
    bundle.wheels = [copy.relative_to(bundle.root).as_posix() for copy in copies]
    bundle.files = sorted({*bundle.files, *bundle.wheels})


def _validate(bundle: Bundle) -> None:
    results = check_folder(bundle.root)
    if not passed(results):
        raise EnvironmentValidationError(str(bundle.source), _in_source(results, bundle))


def _in_source(results: list[Any], bundle: Bundle) -> list[Any]:
    """The results with the staged copy's path written as the folder the user gave."""
    staged = {str(bundle.root), str(bundle.root.resolve())}

    def named(text: str) -> str:
        for path in staged:
            text = text.replace(path, str(bundle.source))
        return text

    return [replace(r, message=named(r.message), hint=named(r.hint)) for r in results]
