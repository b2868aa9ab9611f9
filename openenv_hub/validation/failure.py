"""Why importing an environment's code failed, said the same way by every command.

``openenv validate`` (its import check) and ``openenv serve`` both report an app that does not
import with :func:`describe_import_failure`: the exception, and where it happened in the
environment's own files (for a ``SyntaxError``, the file, line and offending text, which
``str(exc)`` alone leaves out).

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

import traceback
from pathlib import Path

__all__ = ["describe_import_failure"]

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
    return f"{type(exc).__name__}: {exc}{where}{line}"


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
