"""What the catalog shows: a query, a page of environments, and each one's details."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from openenv_hub.checks.scorecard import Scorecard
from openenv_hub.errors import ConfigurationError

__all__ = [
    "CHECK_TITLES",
    "QUALITY_SORTS",
    "RUNNING_STAGES",
    "SORTS",
    "CatalogPage",
    "CatalogQuery",
    "Details",
    "Environment",
    "web_link",
]

SORTS: Mapping[str, str] = {
    "likes": "Most liked",
    "last_modified": "Recently updated",
    "created_at": "Newest",
    "trending_score": "Trending",
}
CHECK_TITLES: Mapping[str, str] = {
    "solvable": "Solvable",
    "floor": "Floor",
    "no_leakage": "No leakage",
    "determinism": "Determinism",
    "seeds": "Seeds",
    "isolation": "Isolation",
    "cost": "Cost",
}
#: The orders of the quality columns (best first; the catalog sorts them itself, the Hub cannot).
QUALITY_SORTS: Mapping[str, str] = {
    "quality": "Quality: most checks passed",
    **{f"quality:{name}": f"Quality: {title}" for name, title in CHECK_TITLES.items()},
}
RUNNING_STAGES = frozenset({"RUNNING", "RUNNING_BUILDING", "RUNNING_APP_STARTING"})


def web_link(url: str | None) -> str | None:
    """``url`` if a page may link to it (``http`` or ``https``, with a host), else None: a
    ``javascript:`` or ``data:`` URL from a Space's metadata must never become a link."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    return url if parts.scheme.lower() in ("http", "https") and parts.hostname else None


@dataclass(frozen=True)
class CatalogQuery:
    """What a page of the catalog shows: a search, one more tag, an order, a page number."""

    search: str = ""
    tag: str = ""
    sort: str = "likes"
    page: int = 1

    def __post_init__(self) -> None:
        if self.sort not in SORTS and self.sort not in QUALITY_SORTS:
            known = ", ".join([*SORTS, *QUALITY_SORTS])
            raise ConfigurationError(
                f"Unknown sort {self.sort!r}.", hint=f"Sort by one of {known}."
            )
        if self.page < 1:
            raise ConfigurationError(f"Page {self.page} does not exist.", hint="Pages start at 1.")


@dataclass(frozen=True)
class Details:
    """What a row shows besides the listing.

    Attributes:
        app_url: Where the Space's app answers.
        versions: Version tags, oldest first.
        install: The line that installs the latest version (as ``openenv versions`` prints it).
        manifest_text: ``openenv.yaml`` as published, or None if there is none.
        description: The manifest's description, else the card's ``short_description``.
        problem: What could not be read, if anything.
    """

    app_url: str
    versions: tuple[str, ...]
    install: str
    manifest_text: str | None
    description: str = ""
    problem: str = ""


@dataclass(frozen=True)
class Environment:
    """One environment Space, as listed (``details`` is None until they are read; ``quality`` is
    the scorecard its card holds, if any)."""

    repo_id: str
    title: str
    stage: str
    error_message: str
    likes: int
    tags: tuple[str, ...]
    last_modified: datetime | None
    sha: str | None
    page_url: str
    short_description: str = ""
    details: Details | None = None
    quality: Scorecard | None = None

    @property
    def running(self) -> bool:
        return self.stage in RUNNING_STAGES

    @property
    def description(self) -> str:
        return (self.details.description if self.details else "") or self.short_description

    @property
    def web_url(self) -> str | None:
        """The environment's web UI (``/web`` of its app), if the app has an http(s) URL."""
        if self.details is None or web_link(self.details.app_url) is None:
            return None
        return f"{self.details.app_url}/web/"


@dataclass(frozen=True)
class CatalogPage:
    """A page of the catalog; ``error`` says why it is empty when the Hub failed."""

    query: CatalogQuery
    environments: tuple[Environment, ...] = ()
    has_next: bool = False
    error: str = ""
