"""The catalog's edges, without LocalHub: a Hub that does not answer is said on the page, bad
Space variables name themselves, and a proxy's headers tell the app where it is served."""

from __future__ import annotations

import asyncio
import html
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from serving import ServerThread

from openenv_catalog import CatalogQuery, CatalogSettings, HubCatalog
from openenv_hub.errors import ConfigurationError


class HangingHub:
    """An HTTP server that answers nothing until it is released (then an empty listing)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await asyncio.to_thread(self.release.wait, 60)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"[]"})


def test_a_hub_that_does_not_answer_is_said_on_the_page(
    serve: Callable[..., ServerThread],
) -> None:
    hanging = HangingHub()
    server = serve(hanging)
    try:
        catalog = HubCatalog(CatalogSettings(endpoint=server.url), timeout_s=1)
        started = time.monotonic()
        page = catalog.page(CatalogQuery())
        assert time.monotonic() - started < 10
        assert page.environments == ()
        assert page.error.startswith(f"The Hub at {server.url} did not answer within 1 s.")
    finally:
        hanging.release.set()  # the abandoned request ends instead of retrying


@pytest.mark.parametrize(
    ("variables", "problem"),
    [
        ({"CATALOG_PAGE_SIZE": "0"}, "CATALOG_PAGE_SIZE"),
        ({"CATALOG_REFRESH_S": "soon"}, "CATALOG_REFRESH_S"),
    ],
)
def test_settings_say_which_variable_is_wrong(variables: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        CatalogSettings.from_environment(variables)
    assert problem in str(raised.value) and problem in raised.value.hint


def test_settings_from_the_space_variables() -> None:
    settings = CatalogSettings.from_environment(
        {"HF_ENDPOINT": "http://127.0.0.1:9", "CATALOG_TAGS": "games, rl", "CATALOG_PAGE_SIZE": "5"}
    )
    assert (settings.endpoint, settings.tags, settings.page_size) == (
        "http://127.0.0.1:9",
        ("games", "rl"),
        5,
    )
    default = CatalogSettings.from_environment({})
    assert default.tags == ("openenv", "rl-environment") == CatalogSettings().tags
    with pytest.raises(ConfigurationError, match="names none"):
        CatalogSettings.from_environment({"CATALOG_TAGS": " , "})
    with pytest.raises(ConfigurationError) as raised:
        CatalogQuery(sort="stars")
    assert "stars" in str(raised.value) and "likes" in raised.value.hint


async def test_a_proxy_tells_the_app_where_it_is_served() -> None:
    """LocalHub serves a Space's app under /_localhub/apps/NS/NAME and says so in two headers;
    the page's own links must then point there (the browser test opens it through LocalHub)."""
    from openenv_catalog.app import ForwardedPrefix

    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope)

    headers = [
        (b"host", b"127.0.0.1:40001"),
        (b"x-forwarded-prefix", b"/_localhub/apps/alice/catalog/"),
        (b"forwarded", b'host="127.0.0.1:8765";proto=http'),
    ]
    await ForwardedPrefix(app)({"type": "http", "headers": headers, "scheme": "http"}, None, None)
    assert seen[0]["root_path"] == "/_localhub/apps/alice/catalog"
    assert (b"host", b"127.0.0.1:8765") in seen[0]["headers"]
    assert (b"host", b"127.0.0.1:40001") not in seen[0]["headers"]
    plain = [(b"host", b"127.0.0.1:40001")]
    await ForwardedPrefix(app)({"type": "http", "headers": plain, "scheme": "http"}, None, None)
    assert "root_path" not in seen[1] and seen[1]["headers"] == plain


class TricklingApp:
    """An app that answers ``/health`` at once and everything else a byte at a time (every
    0.2 s, for 40 s), or, at ``/huge``, endlessly and fast."""

    def __init__(self) -> None:
        self.release = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"] == "/health":
            await send({"type": "http.response.body", "body": b'{"status": "healthy"}'})
            return
        chunk = b"x" * 65536 if scope["path"] == "/huge" else b" "
        for _ in range(200 if chunk == b" " else 10_000):
            if self.release.is_set():
                break
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await asyncio.sleep(0.2 if chunk == b" " else 0)
        await send({"type": "http.response.body", "body": b"{}"})


def _bounded(call: Callable[[], Any], within_s: float) -> Any:
    """``call()``'s result, which must come within ``within_s``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except Exception as exc:  # raised again below
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(within_s)
    assert not worker.is_alive(), f"still running after {within_s} s"
    if "error" in box:
        raise box["error"]
    return box["value"], time.monotonic() - started


def test_an_app_that_trickles_its_answers_cannot_hold_a_check(
    serve: Callable[..., ServerThread],
) -> None:
    """Every check has a total time limit, not one per read, and so has the whole validation:
    the app sends a byte every 0.2 s, which no read limit would ever notice."""
    from openenv_catalog.checks import check_app
    from openenv_hub.validation import validate_url

    trickling = TricklingApp()
    server = serve(trickling)
    try:
        (results, schemas), took = _bounded(lambda: check_app(server.url, timeout_s=1), 15)
        assert took < 9 and schemas is None
        failed = {r.name: r.message for r in results if not r.ok}
        assert "openapi_version_available" in failed
        assert "GET /openapi.json did not finish within 1 s" in failed["openapi_version_available"]
        assert "metadata_endpoint" in failed and "schema_endpoint" in failed

        limited = lambda: validate_url(server.url, timeout_s=1, total_timeout_s=2.5)  # noqa: E731
        results, took = _bounded(limited, 10)
        assert took < 4.5
        messages = " ".join(r.message for r in results)
        assert "the validation's time limit of 2.5 s passed before" in messages
    finally:
        trickling.release.set()


def test_an_answer_larger_than_the_limit_is_not_read_whole(
    serve: Callable[..., ServerThread],
) -> None:
    from openenv_hub.validation.remote import LimitExceeded, RemoteTarget

    trickling = TricklingApp()
    server = serve(trickling)
    try:
        with RemoteTarget(server.url, timeout_s=20, max_reply_bytes=1024 * 1024) as target:
            target.start_check()
            with pytest.raises(LimitExceeded, match=r"GET /huge answered more than 1 MB"):
                _bounded(lambda: target.get("/huge"), 15)
    finally:
        trickling.release.set()


def test_rechecks_users_ask_for_are_rate_limited() -> None:
    """Anyone may ask for a re-check: a Space is re-checked on request once per recheck_s."""
    from openenv_catalog import ValidationCache

    now = [1000.0]
    cache = ValidationCache(lambda url: ([], None), recheck_s=60, clock=lambda: now[0])
    assert cache.refresh("alice/echo", "http://127.0.0.1:9", None) == 0
    assert cache.is_pending("alice/echo")
    now[0] += 20
    assert cache.refresh("alice/echo", "http://127.0.0.1:9", None) == pytest.approx(40)
    assert cache.refresh("bob/other", "http://127.0.0.1:9", None) == 0  # each Space its own
    now[0] += 40
    assert cache.refresh("alice/echo", "http://127.0.0.1:9", None) == 0


def test_links_go_to_http_addresses_only() -> None:
    """A Space's metadata is not trusted: a ``javascript:`` URL never becomes a link."""
    from openenv_catalog.catalog import Badge
    from openenv_catalog.models import CatalogPage, Details, Environment
    from openenv_catalog.render import detail_html, table_html

    evil = "javascript:alert(document.domain)"
    env = Environment(
        repo_id="alice/evil",
        title="Evil",
        stage="RUNNING",
        error_message="",
        likes=0,
        tags=(),
        last_modified=None,
        sha=None,
        page_url="JavaScript:alert(1)",
        details=Details(app_url=evil, versions=(), install="pip install x", manifest_text=None),
    )
    badge = Badge("checking", "… checking", "")
    shown = table_html(CatalogPage(CatalogQuery()), [env], lambda e: badge)
    shown += detail_html(env, badge)
    assert env.web_url is None
    links = re.findall(r'href="([^"]*)"', shown)
    assert all(link.startswith("?") for link in links)  # within the page: details, orders
    assert [link for link in links if link.startswith("?space=")] == ["?space=alice%2Fevil"]
    assert evil in html.unescape(shown)  # shown as text, never as a link
