"""The environments on the Hub: Spaces tagged ``openenv`` or ``rl-environment`` (the catalog's
tags), a page at a time, with what a row shows besides the listing (the app's URL, the versions
and install line, the manifest).

Everything goes through ``huggingface_hub``: ``list_spaces`` (search, tags, sort; a page is
cut from the listing, which the Hub serves in pages linked by ``Link`` headers; the Hub's
filter asks for every tag given, so each catalog tag is listed on its own and the listings are
merged in the order asked for),
``space_info`` (the app's URL), :func:`openenv_hub.hub.versions` (the lines ``openenv versions``
prints) and ``hf_hub_download`` (``openenv.yaml``). The client itself waits without a bound, so
each call runs in a daemon thread of its own and is waited for at most ``timeout_s``: a Hub that
hangs makes a page say so, never hang (and never holds up the process when it exits). Details
are cached per Space and commit for ``details_ttl_s``.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import islice
from typing import Any, TypeVar

from openenv_hub.errors import HubConnectionError, HubError, ManifestError
from openenv_hub.hub import HubContext, SpaceUrls, hub_error, translate, version_key, versions
from openenv_hub.model.manifest import MANIFEST_FILE, parse_manifest

from .models import QUALITY_SORTS, CatalogPage, CatalogQuery, Details, Environment, web_link
from .quality import MAX_SORTED, scorecard_of, sort_key
from .settings import CatalogSettings

__all__ = ["HubCatalog"]

T = TypeVar("T")

EXPAND = [
    "author",
    "cardData",
    "createdAt",
    "lastModified",
    "likes",
    "runtime",
    "sdk",
    "sha",
    "tags",
    "trendingScore",
]
MAX_MANIFEST_BYTES = 64 * 1024


@dataclass
class _Cached:
    sha: str | None
    at: float
    details: Details


class HubCatalog:
    """Reads the catalog from the Hub.

    Args:
        settings: Endpoint, token, tag and page size.
        timeout_s: Bound of each wait for the Hub.
        details_ttl_s: How long a Space's details are reused (versions can move meanwhile).
        clock: Seconds, for the caches.
    """

    def __init__(
        self,
        settings: CatalogSettings,
        *,
        timeout_s: float = 20.0,
        details_ttl_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self.details_ttl_s = details_ttl_s
        self._clock = clock
        self._details: dict[str, _Cached] = {}
        self._tags: tuple[float, list[str]] | None = None
        self._lock = threading.Lock()

    @cached_property
    def hub(self) -> HubContext:
        """Endpoint, token and ``HfApi``, resolved on first use."""
        return HubContext.create(endpoint=self.settings.endpoint, token=self.settings.token)

    # -- pages ------------------------------------------------------------------------------

    def page(self, query: CatalogQuery) -> CatalogPage:
        """One page, with the details that arrive within the bound (the others load later)."""
        try:
            listed, has_next = self._bounded(self._list, query)
        except HubError as exc:
            return CatalogPage(query, error=_describe(exc))
        found = self._details_of(listed)
        rows = tuple(self._environment(info, found.get(info.id)) for info in listed)
        return CatalogPage(query, rows, has_next)

    def environment(self, repo_id: str) -> Environment | None:
        """One Space by id, with its details; None if it is not an environment of the catalog.

        Raises:
            HubError: The Hub failed, or has no such Space.
        """
        info = self._bounded(self._space_info, repo_id)
        if not set(self.settings.tags) & set(info.tags or []):
            return None
        details = self._bounded(self.details, repo_id, info.sha, info.card_data)
        return self._environment(info, details)

    def with_cached_details(self, environments: Iterable[Environment]) -> list[Environment]:
        """``environments`` with the details that arrived since (from the cache; no Hub call)."""
        updated = []
        for env in environments:
            with self._lock:
                cached = self._details.get(env.repo_id)
            if env.details is None and cached is not None and cached.sha == env.sha:
                env = _replace_details(env, cached.details)
            updated.append(env)
        return updated

    def known_tags(self) -> list[str]:
        """The tags of the catalog's Spaces, most used first (cached; [] if the Hub fails)."""
        with self._lock:
            if self._tags and self._clock() - self._tags[0] < self.details_ttl_s:
                return self._tags[1]
        try:
            tags = self._bounded(self._count_tags)
        except HubError:
            return []
        with self._lock:
            self._tags = (self._clock(), tags)
        return tags

    def datasets_tagged(self, tag: str, *, limit: int) -> list[Any]:
        """The newest ``limit`` datasets tagged ``tag``, with their cards: one request, waited
        for at most ``timeout_s``.

        Raises:
            HubError: The Hub failed or did not answer in time.
        """
        return self._bounded(self._datasets_tagged, tag, limit)

    # -- details ----------------------------------------------------------------------------

    def details(self, repo_id: str, sha: str | None, card: Any = None) -> Details:
        """App URL, versions, install line and manifest of a Space at ``sha`` (cached)."""
        with self._lock:
            cached = self._details.get(repo_id)
        if cached and cached.sha == sha and self._clock() - cached.at < self.details_ttl_s:
            return cached.details
        details = self._read_details(repo_id, sha, card)
        with self._lock:
            self._details[repo_id] = _Cached(sha, self._clock(), details)
        return details

    def forget(self, repo_id: str) -> None:
        """Read the Space's details again next time (after a re-check asked for by a user)."""
        with self._lock:
            self._details.pop(repo_id, None)

    def _read_details(self, repo_id: str, sha: str | None, card: Any) -> Details:
        hub, urls, problems = self.hub, SpaceUrls(self.hub.endpoint, repo_id), []
        try:
            app_url = urls.app_url(self._space_info(repo_id))
        except HubError as exc:
            app_url, problems = urls.app_url(None), [_describe(exc)]
        if web_link(app_url) is None:  # validated and linked: http(s) only
            problems.append(f"the Hub gave the app URL {app_url[:100]!r}, which is not http(s)")
            app_url = urls.default_app_url()
        try:
            found = versions(repo_id, endpoint=hub.endpoint, token=hub.token)
        except HubError as exc:
            found, problems = [], [*problems, _describe(exc)]
        released = [v for v in found if version_key(v.name)[0] == 0] or found
        install = released[-1].pip_install if released else urls.pip_line()
        text, description = None, str(_card_get(card, "short_description") or "")
        try:
            text = self._manifest_text(repo_id, sha)
            if text is not None:
                description = parse_manifest(text).description or description
        except (HubError, ManifestError) as exc:
            problems.append(f"{MANIFEST_FILE}: {exc}")
        return Details(
            app_url, tuple(v.name for v in found), install, text, description, "; ".join(problems)
        )

    def _manifest_text(self, repo_id: str, sha: str | None) -> str | None:
        """``openenv.yaml`` at ``sha``, or None if the Space has none."""
        hub = self.hub
        try:
            path = hub.api.hf_hub_download(repo_id, MANIFEST_FILE, repo_type="space", revision=sha)
        except Exception as exc:
            if "EntryNotFoundError" in {cls.__name__ for cls in type(exc).__mro__}:
                return None
            mapped = hub_error(exc, endpoint=hub.endpoint, repo_id=repo_id, action="read it")
            if mapped is None:
                raise
            raise mapped from exc
        with open(path, "rb") as file:
            return file.read(MAX_MANIFEST_BYTES).decode("utf-8", errors="replace")

    # -- Hub calls --------------------------------------------------------------------------

    def _list(self, query: CatalogQuery) -> tuple[list[Any], bool]:
        """A page: the first ``page * size + 1`` Spaces of each catalog tag, merged (each
        Space once) in the order asked for, then cut."""
        size, hub = self.settings.page_size, self.hub
        start, extra = (query.page - 1) * size, query.tag.strip()
        by_quality = query.sort in QUALITY_SORTS
        limit = MAX_SORTED if by_quality else start + size + 1
        found: dict[str, Any] = {}
        with translate(endpoint=hub.endpoint, action="list the environment Spaces"):
            for tag in self.settings.tags:
                spaces = hub.api.list_spaces(
                    filter=[tag, *([extra] if extra and extra != tag else [])],
                    search=query.search.strip() or None,
                    sort="likes" if by_quality else query.sort,  # type: ignore[arg-type]
                    limit=limit,
                    expand=EXPAND,  # type: ignore[arg-type]
                )
                for info in islice(spaces, limit):
                    found.setdefault(info.id, info)
            merged = list(found.values())
            if by_quality:
                key = sort_key(query.sort)
                merged.sort(key=lambda info: key(self._environment(info, None)))
            elif len(self.settings.tags) > 1:  # one listing is in the Hub's order already
                merged.sort(key=lambda info: _sort_value(info, query.sort), reverse=True)
        window = merged[start : start + size + 1]
        return window[:size], len(window) > size

    def _space_info(self, repo_id: str) -> Any:
        hub = self.hub
        with translate(endpoint=hub.endpoint, repo_id=repo_id, action="read the Space"):
            return hub.api.space_info(repo_id, timeout=self.timeout_s)

    def _datasets_tagged(self, tag: str, limit: int) -> list[Any]:
        hub = self.hub
        with translate(endpoint=hub.endpoint, action="list the evaluation results"):
            found = hub.api.list_datasets(
                filter=[tag],
                sort="last_modified",
                limit=limit,
                expand=["cardData", "lastModified"],
            )
            return list(found)

    def _count_tags(self) -> list[str]:
        hub, found = self.hub, {}
        with translate(endpoint=hub.endpoint, action="list the environment Spaces"):
            for tag in self.settings.tags:
                for space in hub.api.list_spaces(filter=tag, expand=["tags"], limit=1000):
                    found[space.id] = space.tags or []
        counts = Counter(tag for tags in found.values() for tag in tags)
        for tag in self.settings.tags:
            counts.pop(tag, None)
        return [tag for tag, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]

    def _details_of(self, listed: list[Any]) -> dict[str, Details]:
        """The details of each listed Space that arrive within the bound (read in parallel)."""
        calls = {info.id: _Call(self.details, info.id, info.sha, info.card_data) for info in listed}
        deadline = time.monotonic() + self.timeout_s
        found = {}
        for repo_id, call in calls.items():
            if call.wait(deadline - time.monotonic()) and call.error is None:
                found[repo_id] = call.value
        return found

    def _bounded(self, call: Callable[..., T], *args: Any) -> T:
        running = _Call(call, *args)
        if not running.wait(self.timeout_s):
            endpoint = self.hub.endpoint
            raise HubConnectionError(
                f"The Hub at {endpoint} did not answer within {self.timeout_s:g} s.",
                endpoint=endpoint,
                hint="It may be slow or unreachable; the page asks again when you reload it.",
            )
        if running.error is not None:
            raise running.error
        return running.value  # type: ignore[no-any-return]

    def _environment(self, info: Any, details: Details | None) -> Environment:
        runtime = getattr(info, "runtime", None)
        raw = getattr(runtime, "raw", None) or {}
        card = info.card_data
        return Environment(
            repo_id=info.id,
            title=str(_card_get(card, "title") or info.id.split("/", 1)[1]),
            stage=str(raw.get("stage") or "UNKNOWN"),
            error_message=str(raw.get("errorMessage") or ""),
            likes=int(info.likes or 0),
            tags=tuple(tag for tag in (info.tags or []) if tag not in self.settings.tags),
            last_modified=info.last_modified,
            sha=info.sha,
            page_url=SpaceUrls(self.hub.endpoint, info.id).web,
            short_description=str(_card_get(card, "short_description") or ""),
            details=details,
            quality=scorecard_of(card),
        )


class _Call:
    """A call running in a daemon thread of its own, to be waited for with a bound."""

    def __init__(self, function: Callable[..., Any], *args: Any) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self._done = threading.Event()
        threading.Thread(target=self._run, args=(function, args), daemon=True).start()

    def _run(self, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self.value = function(*args)
        except BaseException as exc:  # handed to the waiting thread
            self.error = exc
        finally:
            self._done.set()

    def wait(self, timeout_s: float) -> bool:
        """Whether it finished within ``timeout_s``."""
        return self._done.wait(max(0.0, timeout_s))


#: What each order of :data:`~.models.SORTS` sorts by, as ``list_spaces`` gives it.
_SORT_FIELDS = {
    "likes": "likes",
    "last_modified": "last_modified",
    "created_at": "created_at",
    "trending_score": "trending_score",
}


def _sort_value(info: Any, sort: str) -> tuple[bool, Any]:
    """The value a listed Space is ordered by (one the Hub did not give orders last)."""
    value = getattr(info, _SORT_FIELDS[sort], None)
    return value is not None, value if value is not None else 0


def _card_get(card: Any, key: str) -> Any:
    """A field of a Space card (a ``SpaceCardData`` or a dict), or None."""
    if card is None:
        return None
    if isinstance(card, Mapping):
        return card.get(key)
    getter = getattr(card, "get", None)
    return getter(key) if callable(getter) else getattr(card, key, None)


def _replace_details(env: Environment, details: Details) -> Environment:
    return replace(env, details=details)


def _describe(exc: HubError) -> str:
    hint = getattr(exc, "hint", "")
    return f"{exc.message or exc}" + (f" {hint}" if hint else "")
