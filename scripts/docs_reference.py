"""MkDocs hook: an API reference page for each public package and module of ``openenv_hub``.

The pages are made from the source tree at build time (``reference/NAME.md``, one per unit
directly under ``openenv_hub/`` whose name does not start with ``_``) and listed under "API
reference" in the navigation, so a package that moves or appears needs no edit to the docs.
mkdocstrings renders each from its docstrings.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

LIBRARY = Path(__file__).resolve().parents[1] / "openenv_hub"
SECTION = "API reference"

# Docstring warnings the strict build lets through, matched by text (not by file, so a module
# may move). Each names a docstring still to fix; remove the line when it is fixed.
KNOWN_DOCSTRING_WARNINGS = (
    # RayProvider.start documents two parameters on one line.
    "'env, secrets'",
)


def _not_known(record: logging.LogRecord) -> bool:
    return not any(known in record.getMessage() for known in KNOWN_DOCSTRING_WARNINGS)


def public_units(library: Path = LIBRARY) -> list[str]:
    """``client``, ``types``, ...: the public packages and modules directly under the library."""
    names = []
    for path in sorted(library.iterdir()):
        if path.name.startswith("_"):
            continue
        if (path / "__init__.py").is_file():
            names.append(path.name)
        elif path.suffix == ".py":
            names.append(path.stem)
    return names


def on_config(config: Any) -> Any:
    logging.getLogger("mkdocs.plugins.griffe").addFilter(_not_known)
    pages = [{f"openenv_hub.{name}": f"reference/{name}.md"} for name in public_units()]
    for item in config.nav:
        if isinstance(item, dict) and SECTION in item:
            index = item[SECTION]
            item[SECTION] = [*(index if isinstance(index, list) else [index]), *pages]
            return config
    raise ValueError(f"mkdocs.yml: the nav has no {SECTION!r} entry for the reference pages")


def on_files(files: Files, config: Any) -> Files:
    for name in public_units():
        content = f"::: openenv_hub.{name}\n"
        files.append(File.generated(config, f"reference/{name}.md", content=content))
    return files
