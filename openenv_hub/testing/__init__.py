"""Testing utilities: :class:`LocalHub` and a pytest plugin (``pytest_plugin``).

Importing this package is cheap: it loads neither huggingface_hub nor the
server stack; :class:`LocalHub` and :class:`User` are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openenv_hub.localhub import LocalHub, User

__all__ = ["LocalHub", "User"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from openenv_hub import localhub

        return getattr(localhub, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
