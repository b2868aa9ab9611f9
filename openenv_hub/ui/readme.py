"""Find an environment's README and strip its Space front matter.

Layer: ui.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

from openenv_hub.support.settings import named_variable

__all__ = ["find_readme", "strip_front_matter"]

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


def strip_front_matter(markdown: str) -> str:
    """``markdown`` without a leading YAML block fenced by ``---`` lines.

    Example:
        >>> strip_front_matter("---\\ntitle: Echo\\n---\\n# Echo\\n")
        '# Echo\\n'
    """
    return _FRONT_MATTER.sub("", markdown, count=1).lstrip("\r\n")


def find_readme(env_factory: Any, readme_content: str | None = None) -> str | None:
    """The README to show: ``readme_content``, ``$ENV_README_PATH``, or the env folder's.

    The environment folder is the nearest directory above the factory's source file (at most
    three levels up) that holds an ``openenv.yaml``.
    """
    if readme_content:
        return readme_content
    candidates = []
    given = named_variable("ENV_README_PATH")
    if given:
        candidates.append(Path(given))
    folder = _env_folder(env_factory)
    if folder is not None:
        candidates.append(folder / "README.md")
    for path in candidates:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return None


def _env_folder(env_factory: Any) -> Path | None:
    source = _defining_file(env_factory)
    if source is None:
        return None
    for parent in list(Path(source).resolve().parents)[:4]:
        if (parent / "openenv.yaml").is_file():
            return parent
    return None


def _defining_file(env_factory: Any) -> str | None:
    """The file that defines ``env_factory``, from its code where it has some.

    A class's file is otherwise looked up through ``sys.modules`` by module name, which answers
    for whichever same-named package was imported last (another copy of the environment's folder
    loaded by the same process), not for the one that defined this class.
    """
    functions = [env_factory, *vars(env_factory).values()] if inspect.isclass(env_factory) else []
    for candidate in functions or [env_factory]:
        code = getattr(inspect.unwrap(candidate), "__code__", None) if callable(candidate) else None
        filename = getattr(code, "co_filename", None)
        if isinstance(filename, str) and Path(filename).is_file():
            return filename
    try:
        return inspect.getsourcefile(env_factory)
    except TypeError:
        return None
