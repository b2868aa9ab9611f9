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

from typing import TYPE_CHECKING, Any

from openenv_hub.support.deprecation import warn_renamed

if TYPE_CHECKING:
    from openenv_hub.localhub import LocalHub, User

__all__ = ["LocalHub", "User"]

pytest_plugins = ["openenv_hub.testing.pytest_plugin"]
"""What pytest loads when this package is named as a plugin."""


def __getattr__(name: str) -> Any:
    if name == "LocalHub":
        warn_renamed(
            "openenv_hub.testing.LocalHub", "openenv_hub.localhub.LocalHub", removed_in="0.2"
        )
        return _localhub().LocalHub
    if name == "User":
        warn_renamed("openenv_hub.testing.User", "openenv_hub.localhub.User", removed_in="0.2")
        return _localhub().User
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _localhub() -> Any:
    import openenv_hub.localhub as localhub

    return localhub
