"""The catalog's data, against LocalHub and real apps (no Docker, no browser): which Spaces it
lists and what each row says, search, tag, order and pages, validations that run in the
background (never holding up a page) and again on demand or when stale, and the JSON API.

Each Space here carries a tag of this module's own, which the catalog lists, so Spaces that
other tests publish on the session's LocalHub never show up.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from catalog_support import echo_copy, plain_space
from cli_runner import CliResult
from polling import wait_until
from serving import ServerThread, free_port

from openenv_catalog import Catalog, CatalogQuery, CatalogSettings, HubCatalog, ValidationCache
from openenv_catalog.checks import check_app
from openenv_hub.hub import push, versions
from openenv_hub.localhub import LocalHub

TAG = f"catalog-{uuid.uuid4().hex[:8]}"


@dataclass
class Listed:
    """The Spaces of this module: three tagged for the catalog, one not."""

    endpoint: str
    echo: str  # an environment, two versions, its app running
    games: str  # tagged 'games' too, failed to build
    dead: str  # "running", but nothing answers at its URL
    untagged: str
    echo_url: str

    def settings(self, **changes: Any) -> CatalogSettings:
        return CatalogSettings(endpoint=self.endpoint, tags=(TAG,), **changes)


@pytest.fixture(scope="module")
def listed(local_hub: LocalHub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listed]:
    from echo_env.server.app import app
    from huggingface_hub import HfApi

    token = local_hub.token_for("alice")
    api = HfApi(endpoint=local_hub.endpoint, token=token)
    suffix = uuid.uuid4().hex[:8]
    echo = f"alice/echo-{suffix}"
    folder = echo_copy(tmp_path_factory.mktemp("catalog") / "echo_env", extra_tags=[TAG])
    for version in ("0.1.0", "0.2.0"):
        push(
            folder,
            echo,
            version=version,
            endpoint=local_hub.endpoint,
            token=token,
            bundle_wheel=False,
        )
    server = ServerThread(app)
    server.start()
    local_hub.set_space_runtime(echo, host=server.url)
    games = plain_space(api, f"alice/games-{suffix}", [TAG, "games"], short_description="A game")
    local_hub.set_space_runtime(games, stage="BUILD_ERROR", error_message="Build failed: exit 7")
    dead = plain_space(api, f"alice/dead-{suffix}", [TAG])
    local_hub.set_space_runtime(dead, host=f"http://127.0.0.1:{free_port()}")
    untagged = plain_space(api, f"org/untagged-{suffix}", ["games"], sdk="static")
    for repo_id, likes in ((echo, 5), (games, 2), (dead, 1), (untagged, 9)):
        local_hub.set_likes(repo_id, likes)
    try:
        yield Listed(local_hub.endpoint, echo, games, dead, untagged, server.url)
    finally:
        server.stop()
        for repo_id in (echo, games, dead, untagged):
            api.delete_repo(repo_id, repo_type="space", missing_ok=True)


def ids(catalog: Catalog | HubCatalog, **query: Any) -> list[str]:
    return [env.repo_id for env in catalog.page(CatalogQuery(**query)).environments]


def test_the_catalog_lists_exactly_the_tagged_spaces_with_what_each_row_says(
    listed: Listed,
) -> None:
    page = HubCatalog(listed.settings()).page(CatalogQuery())
    assert page.error == ""
    rows = {env.repo_id: env for env in page.environments}
    assert set(rows) == {listed.echo, listed.games, listed.dead}

    echo = rows[listed.echo]
    assert (echo.title, echo.stage, echo.likes) == ("Echo Env", "RUNNING", 5)
    assert echo.description == "Echoes messages back through MCP tools."
    assert echo.details is not None and echo.details.problem == ""
    assert echo.details.versions == ("0.1.0", "0.2.0")
    assert echo.details.install == versions(listed.echo, endpoint=listed.endpoint)[-1].pip_install
    assert echo.details.install == f"pip install git+{listed.endpoint}/spaces/{listed.echo}@0.2.0"
    assert echo.details.app_url == listed.echo_url
    assert echo.web_url == f"{listed.echo_url}/web/"
    assert echo.page_url == f"{listed.endpoint}/spaces/{listed.echo}"
    assert "name: echo_env" in (echo.details.manifest_text or "")

    games = rows[listed.games]
    assert (games.stage, games.error_message) == ("BUILD_ERROR", "Build failed: exit 7")
    assert (games.description, games.tags, games.running) == ("A game", ("games",), False)
    assert games.details is not None and games.details.versions == ()
    assert games.details.install == f"pip install git+{listed.endpoint}/spaces/{listed.games}"
    assert games.details.manifest_text is None


def test_the_install_line_is_the_one_openenv_versions_prints(
    listed: Listed, cli: Callable[..., CliResult]
) -> None:
    (echo,) = HubCatalog(listed.settings()).page(CatalogQuery(search=listed.echo)).environments
    printed = cli("versions", listed.echo)
    assert printed.code == 0, printed.text
    assert echo.details is not None
    assert echo.details.install in printed.out.splitlines()[-2], printed.out


def test_search_tag_order_and_pages(listed: Listed) -> None:
    catalog = HubCatalog(listed.settings())
    assert ids(catalog) == [listed.echo, listed.games, listed.dead]  # most liked first
    assert ids(catalog, sort="created_at") == [listed.dead, listed.games, listed.echo]
    assert ids(catalog, search=listed.games.split("/")[1].upper()) == [listed.games]
    assert ids(catalog, search="alice/") == [listed.echo, listed.games, listed.dead]
    assert ids(catalog, tag="games") == [listed.games]  # the untagged one has 'games' too
    assert ids(catalog, tag=TAG) == ids(catalog)
    assert ids(catalog, search="nothing-like-this") == []

    paged = HubCatalog(listed.settings(page_size=2))
    first, second = paged.page(CatalogQuery(page=1)), paged.page(CatalogQuery(page=2))
    assert [e.repo_id for e in first.environments] == [listed.echo, listed.games]
    assert first.has_next and not second.has_next
    assert [e.repo_id for e in second.environments] == [listed.dead]
    assert paged.known_tags() == ["games", "openenv", "rl-environment"]  # the echo env's


def test_validations_run_in_the_background_and_never_hold_up_a_page(listed: Listed) -> None:
    gate = threading.Event()

    def held_check(url: str) -> Any:
        gate.wait(60)
        return check_app(url, timeout_s=5)

    cache = ValidationCache(held_check, max_age_s=600)
    catalog = Catalog(listed.settings(), validations=cache)
    catalog.start()
    try:
        started = time.monotonic()
        rows = {env.repo_id: env for env in catalog.page(CatalogQuery()).environments}
        assert time.monotonic() - started < 15  # the checks are still held
        assert catalog.badge(rows[listed.echo]).state == "checking"
        games = catalog.badge(rows[listed.games])
        assert (games.state, games.label) == ("not-running", "✗ not running (BUILD_ERROR)")
        assert "Build failed: exit 7" in games.detail

        gate.set()
        wait_until(lambda: cache.wait_idle(0.1) and cache.get(listed.dead), 60, "validations")
        passed, failed = catalog.badge(rows[listed.echo]), catalog.badge(rows[listed.dead])
        assert passed.state == "passed" and passed.label == "✓ valid", passed
        assert (failed.state, failed.label, failed.failed) == (
            "failed",
            "✗ reachable",
            ("reachable",),
        )
        assert passed.checked_at is not None
        assert abs(passed.checked_at.timestamp() - time.time()) < 120
        assert cache.get(listed.games) is None  # a Space that does not run is not checked

        record = cache.get(listed.echo)
        assert record is not None and record.schemas is not None
        assert record.schemas["action"]["title"] == "CallToolAction"
        assert [r.name for r in record.results][:2] == ["reachable", "openapi_version_available"]

        catalog.recheck([rows[listed.echo]])  # on demand: at once, though it is fresh
        wait_until(lambda: cache.get(listed.echo).checked_at > record.checked_at, 60, "re-check")
    finally:
        catalog.stop()


def test_the_page_timer_sends_only_what_changed(listed: Listed) -> None:
    """An open page asks every CATALOG_POLL_S seconds for what finished since; what did not
    change is not sent again (``gr.skip()``), so the page keeps what its user did there (an
    opened schema, a selected line). What the page shows comes back as a browser sends it:
    through each component's postprocess, JSON and preprocess."""
    import gradio as gr

    from openenv_catalog.ui import _View

    gate = threading.Event()

    def held_check(url: str) -> Any:
        gate.wait(60)
        return check_app(url, timeout_s=5)

    cache = ValidationCache(held_check, max_age_s=600)
    catalog = Catalog(listed.settings(), validations=cache)
    catalog.start()
    try:
        # the page's table, summary, report, action and observation schemas, manifest
        components = [gr.HTML(), gr.HTML(), gr.HTML(), gr.JSON(), gr.JSON(), gr.Code()]
        view = _View(catalog)
        rows = view.show("", "", "likes", 1)[4]
        echo = next(env for env in rows if env.repo_id == listed.echo)
        page: list[Any] = ["", "", "", None, None, ""]

        def tick() -> list[Any]:
            table, _rows, _current, *detail = view.tick(rows, echo, *page)
            for i, value in enumerate([table, *detail]):
                if value != gr.skip():
                    page[i] = _through_the_browser(components[i], value)
            return [table, *detail]

        table, summary, _report, action, _observation, manifest = tick()
        assert "… checking" in table and listed.echo in summary and "name: echo_env" in manifest
        assert action == gr.skip()  # no schema yet, and none shown
        assert tick() == [gr.skip()] * 6  # nothing finished since

        gate.set()
        wait_until(lambda: cache.wait_idle(0.1) and cache.get(listed.dead), 60, "validations")
        table, summary, report, action, observation, manifest = tick()
        assert "✓ valid" in table and "✓ valid" in summary and "websocket" in report
        assert (action["title"], observation["title"]) == ("CallToolAction", "CallToolObservation")
        assert manifest == gr.skip()
        assert tick() == [gr.skip()] * 6
    finally:
        catalog.stop()


def test_a_tick_overtaken_by_a_users_event_leaves_what_it_replaced(listed: Listed) -> None:
    """A page's timer reads its rows and chosen Space when it fires; if the user changes page,
    filter or Space before the tick's answer arrives, that answer must not put the old ones
    back (Gradio runs a session's events concurrently)."""
    import gradio as gr

    from openenv_catalog.ui import _View

    view = _View(Catalog(listed.settings()))  # not started: nothing is validated meanwhile
    request, other_page = gr.Request(session_hash="page"), gr.Request(session_hash="other")
    everything = view.first_page("", "", "likes", request)[4]
    echo = next(env for env in everything if env.repo_id == listed.echo)
    view.choose(listed.echo, everything, request)
    nothing_shown = ("", "", "", None, None, "")

    games = view.first_page("", "games", "likes", request)[4]  # the user filters...
    view.choose(listed.games, games, request)  # ...and picks a Space
    overtaken = view.tick(everything, echo, *nothing_shown, request)  # fired before both
    assert overtaken == [gr.skip()] * 8

    latest = view.tick(games, games[0], *nothing_shown, request)
    assert [env.repo_id for env in latest[1]] == [listed.games] and listed.games in latest[0]
    assert latest[2].repo_id == listed.games and listed.games in latest[3]
    elsewhere = view.tick(everything, echo, *nothing_shown, other_page)  # another page's own
    assert [env.repo_id for env in elsewhere[1]] == [env.repo_id for env in everything]


def _through_the_browser(component: Any, value: Any) -> Any:
    payload = component.postprocess(value)
    payload = payload.model_dump() if hasattr(payload, "model_dump") else payload
    return component.preprocess(json.loads(json.dumps(payload)))


def test_stale_validations_are_run_again_in_the_background(listed: Listed) -> None:
    (echo,) = HubCatalog(listed.settings()).page(CatalogQuery(search=listed.echo)).environments
    assert echo.details is not None
    url, calls = echo.details.app_url, []

    def counted(target: str) -> Any:
        calls.append(target)
        return check_app(target, timeout_s=5)

    with ValidationCache(counted, max_age_s=600) as cache:
        cache.want(echo.repo_id, url, echo.sha)
        wait_until(lambda: cache.get(echo.repo_id), 30, "first validation")
        cache.want(echo.repo_id, url, echo.sha)  # fresh: not queued again
        assert not cache.is_pending(echo.repo_id) and len(calls) == 1
        cache.want(echo.repo_id, url, "another-commit")  # pushed since: checked again
        wait_until(lambda: cache.get(echo.repo_id).sha == "another-commit", 30, "new commit")
        assert len(calls) == 2

    with ValidationCache(counted, max_age_s=0.5) as cache:
        cache.want(echo.repo_id, url, echo.sha)
        wait_until(lambda: cache.get(echo.repo_id), 30, "first validation")
        first = cache.get(echo.repo_id)
        assert first is not None and first.passed
        wait_until(  # the sweeper, with nobody asking
            lambda: cache.get(echo.repo_id).checked_at > first.checked_at, 30, "sweep"
        )


def test_the_json_api(listed: Listed, serve: Callable[..., ServerThread]) -> None:
    from openenv_catalog.app import create_app

    catalog = Catalog(listed.settings(poll_s=1))
    # As the Space runs it (uvicorn --factory): the app is made inside the server's event loop.
    server = serve(lambda: create_app(catalog), factory=True)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/health").json() == {"status": "healthy"}
        body = http.get("/api/environments", params={"tag": "games"}).json()
        assert [row["id"] for row in body["environments"]] == [listed.games]
        assert body["environments"][0]["validation"]["state"] == "not-running"
        body = http.get("/api/environments", params={"sort": "created_at"}).json()
        assert [row["id"] for row in body["environments"]][-1] == listed.echo
        assert body["has_next"] is False

        def validated() -> dict[str, Any] | None:
            found = http.get(f"/api/environments/{listed.echo}").json()
            return found if found["report"] else None

        wait_until(validated, 60, "the echo Space's report")
        detail = validated()
        assert detail is not None
        assert detail["report"]["passed"] is True and detail["report"]["checked_at"]
        assert detail["action_schema"]["title"] == "CallToolAction"
        assert detail["observation_schema"]["title"] == "CallToolObservation"
        assert "name: echo_env" in detail["manifest"]
        assert detail["validation"]["label"] == "✓ valid"

        missing = http.get(f"/api/environments/{listed.untagged}")
        assert missing.status_code == 404 and TAG in missing.json()["detail"]
        nowhere = http.get("/api/environments/alice/no-such-space")
        assert nowhere.status_code == 404 and "was not found" in nowhere.json()["detail"]
        wrong = http.get("/api/environments", params={"sort": "stars"})
        assert wrong.status_code == 400 and "likes" in wrong.json()["detail"]
        again = http.post(f"/api/environments/{listed.echo}/recheck")
        assert again.status_code == 200 and again.json()["id"] == listed.echo
        too_soon = http.post(f"/api/environments/{listed.echo}/recheck")
        assert too_soon.status_code == 429 and "CATALOG_RECHECK_S" in too_soon.json()["detail"]
        assert 0 < int(too_soon.headers["retry-after"]) <= 60


def test_an_app_url_that_is_not_http_is_neither_linked_nor_checked(
    listed: Listed, local_hub: LocalHub
) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=local_hub.endpoint, token=local_hub.token_for("alice"))
    repo_id = plain_space(api, f"alice/scheme-{uuid.uuid4().hex[:8]}", [TAG])
    local_hub.set_space_runtime(repo_id, stage="RUNNING", host="javascript:alert(document.domain)")
    try:
        env = HubCatalog(listed.settings()).environment(repo_id)
        assert env is not None and env.details is not None
        assert env.details.app_url.startswith("https://")
        assert "javascript:alert(document.domain)" in env.details.problem
        assert "not http(s)" in env.details.problem
    finally:
        api.delete_repo(repo_id, repo_type="space", missing_ok=True)
