"""The environment catalog: a Space listing the Spaces tagged ``openenv`` or ``rl-environment``,
whether they run and pass ``openenv validate``, their versions, and how to install them.

``create_app()`` (in :mod:`.app`) is the server; :class:`Catalog` is the data behind it.
"""

from __future__ import annotations

from .catalog import Badge, Catalog
from .checks import Validation, ValidationCache
from .evaluations import EvalResult, Evaluations, Leaderboard
from .listing import HubCatalog
from .models import CatalogPage, CatalogQuery, Details, Environment
from .settings import CatalogSettings

__all__ = [
    "Badge",
    "Catalog",
    "CatalogPage",
    "CatalogQuery",
    "CatalogSettings",
    "Details",
    "Environment",
    "EvalResult",
    "Evaluations",
    "HubCatalog",
    "Leaderboard",
    "Validation",
    "ValidationCache",
]
