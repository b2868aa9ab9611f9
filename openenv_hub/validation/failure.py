"""Why importing an environment's code failed, said the same way by every command.

``openenv validate`` (its import check) and ``openenv serve`` both report an app that does not
import with :func:`describe_import_failure`: the exception, and where it happened in the
environment's own files (for a ``SyntaxError``, the file, line and offending text, which
``str(exc)`` alone leaves out), and, when Python took a folder of the working directory for the
package (the environment folder ``my_env/`` run from the folder that holds it, in place of the
package ``my_env/my_env``), which folder and what to do (:func:`shadowing_folder`).

Example:
    >>> try:
    ...     compile("def broken(:\\n", "env/app.py", "exec")
    ... except SyntaxError as exc:
    ...     print(describe_import_failure(exc))
    SyntaxError: invalid syntax (env/app.py, line 1)
        def broken(:

Layer: client.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

__all__ = ["describe_import_failure", "shadowing_folder"]

_OWN = (Path(__file__).resolve().parents[1],)  # the openenv_hub package


def describe_import_failure(exc: BaseException) -> str:
    """``Type: message (file, line N)``, plus the offending line when it is known."""
    if isinstance(exc, SyntaxError):
        where = _where(exc.filename, exc.lineno)
        text = (exc.text or "").strip()
        return f"{type(exc).__name__}: {exc.msg}{where}" + (f"\n    {text}" if text else "")
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if _theirs(frame.filename)]
    last = frames[-1] if frames else None
    where = _where(last.filename, last.lineno) if last else ""
    line = f"\n    {last.line}" if last and last.line else ""
    return f"{type(exc).__name__}: {exc}{where}{line}{_shadowing(exc)}"


def shadowing_folder(exc: BaseException) -> Path | None:
    """The folder Python took for the package an ``ImportError`` is about, when that is a folder
    without ``__init__.py`` holding the real package of the same name (``my_env/my_env``): Python
    runs in the folder that holds it and finds the outer folder first."""
    if not isinstance(exc, ImportError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    module = sys.modules.get(top)
    if module is None or getattr(module, "__file__", None) is not None:
        return None  # not imported, or a real package
    for entry in getattr(module, "__path__", []):
        folder = Path(entry)
        if (folder / top / "__init__.py").is_file():
            return folder
    return None


def _shadowing(exc: BaseException) -> str:
    folder = shadowing_folder(exc)
    if folder is None:
        return ""
    return (
        f"\n'{folder.name}' is the folder {folder} here, not the package {folder.name}/ inside "
        f"it: Python run in {folder.parent} finds that folder first and takes it for the "
        f"package. Run it inside the folder (cd {folder.name}) or elsewhere, or rename the "
        "folder."
    )


def _theirs(filename: str) -> bool:
    """Whether ``filename`` is the environment's (not importlib's, not openenv-hub's)."""
    if filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    return not any(path.is_relative_to(own) for own in _OWN)


def _where(filename: str | None, lineno: int | None) -> str:
    if not filename:
        return ""
    return f" ({filename}, line {lineno})" if lineno else f" ({filename})"
