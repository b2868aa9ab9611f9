"""The warning each module of the deprecated ``openenv_hub.providers`` gives when imported."""

from __future__ import annotations

import warnings

__all__ = ["moved"]


def moved(old: str) -> None:
    """Warn, on behalf of the code that imports the module ``old``, that it is now the same
    module of ``openenv_hub.runtimes``."""
    new = old.replace("openenv_hub.providers", "openenv_hub.runtimes", 1)
    warnings.warn(f"{old} is deprecated: import {new} instead.", DeprecationWarning, stacklevel=3)
