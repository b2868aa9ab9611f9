"""LocalHub lists Spaces as the Hub does: ``HfApi.list_spaces`` with search, tags, sort, pages
(``Link: <...>; rel="next"`` and ``limit``), ``full`` and ``expand``; bad queries get a 400 that
says what to use."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError

from openenv_hub.localhub import LocalHub


@dataclass
class Listed:
    api: HfApi
    tag: str
    ids: list[str]  # oldest first; likes 0, 3, 1, 2; the last one carries 'games' too
    private: str


def _card(tags: list[str]) -> bytes:
    return ("---\nsdk: docker\ntags: [" + ", ".join(tags) + "]\n---\n").encode()


@pytest.fixture(scope="module")
def listed(local_hub: LocalHub) -> Iterator[Listed]:
    api = HfApi(endpoint=local_hub.endpoint, token=local_hub.token_for("alice"))
    tag, suffix = f"list-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:6]
    ids = [f"alice/list-{suffix}-{n}" for n in ("zero", "one", "two", "three")]
    private = f"alice/list-{suffix}-private"
    for index, repo_id in enumerate([*ids, private]):
        api.create_repo(repo_id, repo_type="space", space_sdk="docker", private=repo_id == private)
        tags = [tag, "games"] if index == 3 else [tag]
        add = CommitOperationAdd("README.md", _card(tags))
        api.create_commit(repo_id, [add], commit_message="card", repo_type="space")
    for repo_id, likes in zip(ids, (0, 3, 1, 2), strict=True):
        local_hub.set_likes(repo_id, likes)
    yield Listed(api, tag, ids, private)
    for repo_id in [*ids, private]:
        api.delete_repo(repo_id, repo_type="space", missing_ok=True)


def _ids(spaces: Iterator[object] | list[object]) -> list[str]:
    return [space.id for space in spaces]  # type: ignore[attr-defined]


def test_tag_filter_search_and_author(listed: Listed, local_hub: LocalHub) -> None:
    api, ids = listed.api, listed.ids
    assert _ids(api.list_spaces(filter=listed.tag)) == sorted([*ids, listed.private])
    assert _ids(api.list_spaces(filter=[listed.tag, "games"])) == [ids[3]]  # every tag
    assert _ids(api.list_spaces(filter=listed.tag, search=ids[1].upper())) == [ids[1]]
    assert _ids(api.list_spaces(filter=listed.tag, author="bob")) == []
    anonymous = HfApi(endpoint=local_hub.endpoint, token=False)
    assert _ids(anonymous.list_spaces(filter=listed.tag)) == sorted(ids)  # not the private one


def test_sort_most_liked_or_newest_first(listed: Listed) -> None:
    api, ids = listed.api, listed.ids
    liked = list(api.list_spaces(filter=listed.tag, sort="likes", expand=["likes"]))
    assert _ids(liked)[:4] == [ids[1], ids[3], ids[2], ids[0]]
    assert [space.likes for space in liked][:4] == [3, 2, 1, 0]
    newest = api.list_spaces(filter=listed.tag, author="alice", sort="created_at", full=True)
    public = [space for space in newest if space.id != listed.private]
    assert _ids(public) == ids[::-1]
    updated = list(api.list_spaces(filter=listed.tag, sort="last_modified", full=True))
    times = [space.last_modified for space in updated]  # git's commit times: whole seconds
    assert len(times) == 5 and times == sorted(times, reverse=True)


def test_pages_are_linked_and_limit_stops_early(listed: Listed, local_hub: LocalHub) -> None:
    params = {"filter": listed.tag, "sort": "likes", "limit": "2"}
    url = f"{local_hub.endpoint}/api/spaces"
    pages = []
    with httpx.Client(headers={"authorization": f"Bearer {local_hub.token_for('bob')}"}) as http:
        response = http.get(url, params=params)
        while True:
            pages.append([space["id"] for space in response.json()])
            if "next" not in response.links:
                break
            assert response.links["next"]["url"].startswith(f"{url}?")
            response = http.get(response.links["next"]["url"])
    assert pages == [[listed.ids[1], listed.ids[3]], [listed.ids[2], listed.ids[0]]]

    client = listed.api
    assert _ids(client.list_spaces(filter=listed.tag, sort="likes", limit=3)) == [
        listed.ids[1], listed.ids[3], listed.ids[2],
    ]  # fmt: skip
    bad = httpx.get(url, params={"cursor": "not-a-cursor"})
    assert bad.status_code == 400 and "Link header" in bad.json()["error"]


def test_short_form_full_and_expand(listed: Listed) -> None:
    api, first = listed.api, listed.ids[0]
    (short,) = api.list_spaces(filter=listed.tag, search=first)
    assert (short.sdk, short.tags, short.likes) == ("docker", [listed.tag], 0)
    assert short.card_data is None and short.runtime is None and short.sha is None

    (full,) = api.list_spaces(filter=listed.tag, search=first, full=True)
    assert full.card_data is not None and full.card_data.get("tags") == [listed.tag]
    assert full.runtime is not None and full.runtime.stage == "STOPPED"  # no runtime here
    assert full.last_modified is not None and full.siblings is not None

    (expanded,) = api.list_spaces(filter=listed.tag, search=first, expand=["runtime", "sha"])
    assert expanded.runtime is not None and expanded.sha == full.sha
    assert expanded.tags is None and expanded.likes is None  # only what was asked for


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"sort": "stars"}, "Invalid sort key 'stars'"),
        ({"expand": "stars"}, "Unknown expand properties ['stars']"),
        ({"limit": "0"}, "Invalid limit"),
        ({"direction": "up"}, "Invalid direction"),
        ({"full": "true", "expand": "likes"}, "full and expand cannot be used together"),
    ],
)
def test_a_bad_query_gets_a_400_saying_what_to_use(
    local_hub: LocalHub, params: dict[str, str], says: str
) -> None:
    response = httpx.get(f"{local_hub.endpoint}/api/spaces", params=params)
    assert response.status_code == 400
    assert says in response.json()["error"]


def test_the_client_raises_on_a_bad_sort(listed: Listed) -> None:
    with pytest.raises(HfHubHTTPError, match="Invalid sort key"):
        list(listed.api.list_spaces(sort="stars"))  # type: ignore[arg-type]


def test_likes_are_set_only_through_the_control_route(listed: Listed, local_hub: LocalHub) -> None:
    url = f"{local_hub.endpoint}/_localhub/spaces/{listed.ids[0]}/likes"
    admin = {"authorization": f"Bearer {local_hub.admin_token}"}
    assert httpx.post(url, json={"likes": 7}, headers=admin).json() == {"likes": 7}
    assert listed.api.space_info(listed.ids[0]).likes == 7
    assert httpx.post(url, json={"likes": -1}, headers=admin).status_code == 422
    missing = f"{local_hub.endpoint}/_localhub/spaces/alice/no-such-space/likes"
    assert httpx.post(missing, json={"likes": 1}, headers=admin).status_code == 404
    local_hub.set_likes(listed.ids[0], 0)
