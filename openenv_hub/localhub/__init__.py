"""LocalHub: a Hugging Face Hub stand-in for offline development and CI.

Serves the subset of the Hub API that ``huggingface_hub`` uses for Spaces,
models and datasets, backed by real bare git repos that are also served over
git smart-HTTP (``git clone``, ``git push``, ``pip install git+...``).

Example:
    >>> from openenv_hub.localhub import LocalHub
    >>> with LocalHub() as hub:  # doctest: +SKIP
    ...     print(hub.endpoint, hub.token_for("alice"), hub.admin_token)

Layer: runtimes.
"""

from __future__ import annotations

from .app import LocalHubApp, create_app
from .auth import DEMO_TOKENS, TokenRegistry, User
from .errors import HubError
from .server import LocalHub

__all__ = [
    "DEMO_TOKENS",
    "HubError",
    "LocalHub",
    "LocalHubApp",
    "TokenRegistry",
    "User",
    "create_app",
]
