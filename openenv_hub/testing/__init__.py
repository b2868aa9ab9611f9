"""Testing helpers: the opt-in pytest plugin (``pytest_plugin``) and a deterministic LLM judge.

``-p openenv_hub.testing`` (or ``pytest_plugins = ["openenv_hub.testing"]`` in a root
``conftest.py``) loads the plugin: pytest reads :data:`pytest_plugins` of this module. Nothing
else does; importing this package changes no environment variable.

LocalHub itself lives in :mod:`openenv_hub.localhub`; ``openenv_hub.testing.LocalHub`` and
``openenv_hub.testing.User`` are deprecated names of it. Importing this package is cheap: it
loads neither huggingface_hub nor the server stack.

Layer: ui.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openenv_hub.localhub import LocalHub, User

__all__ = ["LocalHub", "User"]

pytest_plugins = ["openenv_hub.testing.pytest_plugin"]
"""What pytest loads when this package is named as a plugin."""


def __getattr__(name: str) -> Any:
    if name in __all__:
        from openenv_hub import localhub

        warnings.warn(
            f"openenv_hub.testing.{name} is deprecated: import it from openenv_hub.localhub",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(localhub, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
