"""The catalog lists the Spaces tagged ``openenv`` or ``rl-environment`` (the tag the Hub filters
RL environments by), each once, in the order asked for across both, against LocalHub."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from catalog_support import plain_space

from openenv_catalog import CatalogQuery, CatalogSettings, HubCatalog
from openenv_hub.hub import push
from openenv_hub.localhub import LocalHub

FIRST, SECOND = (f"first-{uuid.uuid4().hex[:8]}", f"second-{uuid.uuid4().hex[:8]}")


@dataclass
class Tagged:
    endpoint: str
    first_only: str  # 3 likes
    second_only: str  # 5 likes
    both: str  # 4 likes
    neither: str  # 9 likes
    suffix: str

    def catalog(self, *tags: str, **changes: Any) -> HubCatalog:
        return HubCatalog(CatalogSettings(endpoint=self.endpoint, tags=tags, **changes))


@pytest.fixture(scope="module")
def tagged(local_hub: LocalHub) -> Iterator[Tagged]:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=local_hub.endpoint, token=local_hub.token_for("alice"))
    suffix = uuid.uuid4().hex[:8]
    made = Tagged(
        local_hub.endpoint,
        plain_space(api, f"alice/first-{suffix}", [FIRST, "games"]),
        plain_space(api, f"alice/second-{suffix}", [SECOND]),
        plain_space(api, f"alice/both-{suffix}", [FIRST, SECOND, "games"]),
        plain_space(api, f"alice/neither-{suffix}", ["games"]),
        suffix,
    )
    spaces = (made.first_only, made.second_only, made.both, made.neither)
    for repo_id, likes in zip(spaces, (3, 5, 4, 9), strict=True):
        local_hub.set_likes(repo_id, likes)
    yield made
    for repo_id in spaces:
        api.delete_repo(repo_id, repo_type="space", missing_ok=True)


def ids(catalog: HubCatalog, **query: Any) -> list[str]:
    page = catalog.page(CatalogQuery(**query))
    assert page.error == ""
    return [env.repo_id for env in page.environments]


def test_a_space_with_either_tag_is_listed_once_in_the_order_asked_for(tagged: Tagged) -> None:
    catalog = tagged.catalog(FIRST, SECOND)
    assert ids(catalog) == [tagged.second_only, tagged.both, tagged.first_only]  # by likes
    assert ids(catalog, sort="created_at") == [
        tagged.both,
        tagged.second_only,
        tagged.first_only,
    ]
    assert ids(catalog, tag="games") == [tagged.both, tagged.first_only]
    assert ids(catalog, tag=SECOND) == [tagged.second_only, tagged.both]
    assert ids(tagged.catalog(FIRST)) == [tagged.both, tagged.first_only]

    paged = tagged.catalog(FIRST, SECOND, page_size=2)
    first, second = paged.page(CatalogQuery(page=1)), paged.page(CatalogQuery(page=2))
    assert [e.repo_id for e in first.environments] == [tagged.second_only, tagged.both]
    assert first.has_next and not second.has_next
    assert [e.repo_id for e in second.environments] == [tagged.first_only]
    assert paged.known_tags() == ["games"]
    (both,) = [e for e in first.environments if e.repo_id == tagged.both]
    assert both.tags == ("games",)  # the catalog's own tags are not shown


def test_one_space_is_found_by_either_tag(tagged: Tagged) -> None:
    catalog = tagged.catalog(FIRST, SECOND)
    found = catalog.environment(tagged.second_only)
    assert found is not None and found.repo_id == tagged.second_only
    assert tagged.catalog(FIRST).environment(tagged.second_only) is None
    assert catalog.environment(tagged.neither) is None


def test_by_default_the_tags_are_openenv_and_rl_environment(
    local_hub: LocalHub, tmp_path: Path
) -> None:
    """A Space tagged only ``rl-environment`` is listed as one tagged ``openenv`` is; one that
    ``openenv push`` published carries both."""
    from catalog_support import echo_copy
    from huggingface_hub import HfApi

    token = local_hub.token_for("alice")
    api = HfApi(endpoint=local_hub.endpoint, token=token)
    suffix = uuid.uuid4().hex[:8]
    rl_only = plain_space(api, f"alice/rl-only-{suffix}", ["rl-environment"])
    pushed = f"alice/pushed-{suffix}"
    push(echo_copy(tmp_path / "echo_env", extra_tags=[]), pushed, token=token,
         endpoint=local_hub.endpoint, bundle_wheel=False)  # fmt: skip
    try:
        assert {"openenv", "rl-environment"} <= set(api.space_info(pushed).tags or [])
        catalog = HubCatalog(CatalogSettings(endpoint=local_hub.endpoint))
        assert sorted(ids(catalog, search=suffix)) == sorted([rl_only, pushed])
        assert catalog.environment(rl_only) is not None
    finally:
        for repo_id in (rl_only, pushed):
            api.delete_repo(repo_id, repo_type="space", missing_ok=True)
