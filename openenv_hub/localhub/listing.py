"""Repo listings (``GET /api/spaces``, ``/api/models``, ``/api/datasets``) as the Hub answers them.

Query parameters, as ``HfApi.list_spaces`` (and ``list_models``...) send them:

* ``search``: a case-insensitive substring of the id (``author/name``);
* ``author``: the namespace;
* ``filter``: a tag; repeated, every one of them;
* ``sort``: ``likes``, ``lastModified``, ``createdAt``, ``trendingScore`` or ``id`` (the
  client's ``last_modified``... are accepted too), with ``direction`` ``-1`` (the default,
  descending) or ``1``; without ``sort``, by id;
* ``limit``: the size of a page (at most, and by default, :data:`MAX_PAGE`);
* ``cursor``: where a page starts, from the ``Link`` header of the page before;
* ``full``: every field repo info has; ``expand`` (repeated, or ``expand[]``): ``_id``, ``id``
  and the named properties only. Without either, the Hub's short form (:data:`SHORT_FIELDS`).

When more items follow a page, the answer carries ``Link: <URL>; rel="next"``: the same query
with a ``cursor``, which ``huggingface_hub`` follows until it has ``limit`` items (or all).

Layer: runtimes.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from .errors import HubError
from .storage import RepoType

__all__ = ["MAX_PAGE", "SHORT_FIELDS", "ListQuery", "next_link", "page_of"]

MAX_PAGE = 1000

SORT_KEYS: Mapping[str, str] = {
    "likes": "likes",
    "lastModified": "lastModified",
    "last_modified": "lastModified",
    "createdAt": "createdAt",
    "created_at": "createdAt",
    "trendingScore": "trendingScore",
    "trending_score": "trendingScore",
    "downloads": "downloads",
    "id": "id",
}

SHORT_FIELDS: Mapping[RepoType, tuple[str, ...]] = {
    "space": ("_id", "id", "likes", "trendingScore", "private", "sdk", "tags", "createdAt"),
    "model": ("_id", "id", "likes", "trendingScore", "private", "downloads", "tags", "createdAt"),
    "dataset": ("_id", "id", "likes", "trendingScore", "private", "downloads", "tags", "createdAt"),
}

SPACE_PROPERTIES = frozenset(
    {
        "author", "cardData", "createdAt", "datasets", "disabled", "lastModified", "likes",
        "models", "private", "region", "resourceGroup", "runtime", "sdk", "sha", "siblings",
        "subdomain", "tags", "trendingScore", "usedStorage",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ListQuery:
    """One listing request, parsed and checked.

    Attributes:
        repo_type: What is listed.
        search: Substring of the id to look for (any case).
        author: Namespace to keep.
        tags: Tags every item must carry.
        sort: Field to sort on (camelCase), or None for the id.
        descending: Sort order.
        page_size: Items per page.
        offset: Items before this page.
        full: Every field.
        expand: Only these properties (with ``_id`` and ``id``).
    """

    repo_type: RepoType
    search: str | None = None
    author: str | None = None
    tags: tuple[str, ...] = ()
    sort: str | None = None
    descending: bool = True
    page_size: int = MAX_PAGE
    offset: int = 0
    full: bool = False
    expand: tuple[str, ...] = field(default=())

    @classmethod
    def parse(cls, repo_type: RepoType, params: Iterable[tuple[str, str]]) -> ListQuery:
        """Read the query string's ``(name, value)`` pairs.

        Raises:
            HubError: 400 for an unknown sort key or property, a bad limit, direction or cursor,
                or ``full`` with ``expand``.
        """
        values: dict[str, list[str]] = {}
        for name, value in params:
            values.setdefault(name.removesuffix("[]"), []).append(value)

        def one(name: str) -> str | None:
            found = values.get(name)
            return found[-1] if found else None

        expand = tuple(_split_expand(values.get("expand", [])))
        full = (one("full") or "").lower() in ("1", "true")
        if full and expand:
            raise HubError.bad_request("full and expand cannot be used together")
        if repo_type == "space":
            _check_properties(expand)
        return cls(
            repo_type=repo_type,
            search=one("search") or None,
            author=one("author") or None,
            tags=tuple(tag for tag in values.get("filter", []) if tag),
            sort=_sort_key(one("sort")),
            descending=_descending(one("direction")),
            page_size=_page_size(one("limit")),
            offset=_offset(one("cursor")),
            full=full,
            expand=expand,
        )

    def wants_id(self, repo_id: str, namespace: str) -> bool:
        """Whether an id passes ``search`` and ``author`` (cheap: before reading the repo)."""
        if self.author and namespace != self.author:
            return False
        return not self.search or self.search.lower() in repo_id.lower()

    def wants(self, info: Mapping[str, Any]) -> bool:
        """Whether a repo's info carries every tag asked for."""
        tags = set(info.get("tags") or [])
        return all(tag in tags for tag in self.tags)

    def project(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of ``info`` this query returns."""
        if self.full:
            return dict(info)
        names = ("_id", "id", *self.expand) if self.expand else SHORT_FIELDS[self.repo_type]
        return {name: info[name] for name in names if name in info}


def page_of(
    infos: Sequence[Mapping[str, Any]], query: ListQuery
) -> tuple[list[dict[str, Any]], int | None]:
    """Filter, sort and cut one page; returns the page and the offset of the next (or None)."""
    kept = [info for info in infos if query.wants(info)]
    kept.sort(key=_sort_function(query.sort), reverse=query.descending and query.sort is not None)
    end = query.offset + query.page_size
    page = [query.project(info) for info in kept[query.offset : end]]
    return page, end if end < len(kept) else None


def next_link(url: str, params: Iterable[tuple[str, str]], offset: int) -> str:
    """The ``Link`` header value of the page that starts at ``offset``."""
    kept = [(name, value) for name, value in params if name != "cursor"]
    query = urlencode([*kept, ("cursor", _encode_cursor(offset))])
    return f'<{url}?{query}>; rel="next"'


_NUMERIC_SORTS = frozenset({"likes", "trendingScore", "downloads"})


def _sort_function(sort: str | None) -> Callable[[Mapping[str, Any]], tuple[Any, str]]:
    """Sort on ``sort`` (a missing value counts as 0 or ""), then on the id."""
    missing: Any = 0 if sort in _NUMERIC_SORTS else ""

    def key(info: Mapping[str, Any]) -> tuple[Any, str]:
        value = info.get(sort or "id")
        return (missing if value is None else value, str(info["id"]))

    return key


def _split_expand(values: Iterable[str]) -> Iterable[str]:
    for value in values:
        yield from (part.strip() for part in value.split(",") if part.strip())


def _check_properties(expand: Iterable[str]) -> None:
    unknown = sorted(set(expand) - SPACE_PROPERTIES)
    if unknown:
        raise HubError.bad_request(
            f"Unknown expand properties {unknown}: use some of {sorted(SPACE_PROPERTIES)}"
        )


def _sort_key(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if value not in SORT_KEYS:
        choices = sorted({key for key in SORT_KEYS if "_" not in key})
        raise HubError.bad_request(f"Invalid sort key {value!r}: use one of {choices}")
    return SORT_KEYS[value]


def _descending(value: str | None) -> bool:
    if value in (None, "", "-1"):
        return True
    if value == "1":
        return False
    raise HubError.bad_request(f"Invalid direction {value!r}: use -1 (descending) or 1")


def _page_size(value: str | None) -> int:
    if value is None or value == "":
        return MAX_PAGE
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise HubError.bad_request(f"Invalid limit {value!r}: use a positive number")
    return min(size, MAX_PAGE)


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        offset = None
    if not isinstance(offset, int) or offset < 0:
        raise HubError.bad_request("Invalid cursor: use the URL of the Link header as it is")
    return offset
