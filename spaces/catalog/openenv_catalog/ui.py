"""The catalog's page, in Gradio: search, tag, order and pages over a table of environments, and
a detail view of one (manifest, action and observation schemas, latest validation report).

Events only read the Hub and the validation cache; a timer shows the validations that finished
since (and the details that arrived late) without asking the Hub again. A link
``?space=NS/NAME`` opens a Space's details; ``?search=`` and ``?tag=`` fill the filters.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import gradio as gr

from openenv_hub.errors import ConfigurationError, HubError

from .catalog import Catalog
from .models import QUALITY_SORTS, SORTS, CatalogPage, CatalogQuery, Environment
from .render import detail_html, report_html, table_html

__all__ = ["build_blocks"]

HEADER = """
<div class="oe-header">
<h1>OpenEnv environments</h1>
<p>Every Space tagged <code>{tag}</code>: whether it runs and passes <code>openenv validate</code>,
its versions, and the line that installs its client.</p>
</div>
"""


def build_blocks(catalog: Catalog) -> Any:
    """The catalog's ``gradio.Blocks``."""
    view = _View(catalog)
    with gr.Blocks(title="OpenEnv environments", analytics_enabled=False) as blocks:
        gr.HTML(HEADER.format(tag=catalog.settings.tags_text))
        filters, (previous, page_label, following, recheck_all) = _filters(), _page_buttons()
        table = gr.HTML(elem_id="catalog")
        gr.Markdown("## Details")
        chosen, summary, recheck, report, action, observation, manifest = _detail_view()
        page, rows, current = gr.State(1), gr.State([]), gr.State(None)
        timer = gr.Timer(catalog.settings.poll_s)

        listing = [table, page_label, previous, following, rows, chosen, page]
        detail = [current, summary, report, action, observation, manifest]
        blocks.load(view.first, None, [*filters, *listing, *detail])
        search, tag, sort = filters
        for trigger in (search.submit, tag.input, sort.input):
            trigger(view.first_page, filters, listing)
        previous.click(view.previous, [*filters, page], listing)
        following.click(view.next, [*filters, page], listing)
        recheck_all.click(view.recheck_all, rows, [table, rows])
        chosen.input(view.choose, [chosen, rows], detail)
        recheck.click(view.recheck, current, detail)
        shown = [table, summary, report, action, observation, manifest]
        timer.tick(view.tick, [rows, current, *shown], [table, rows, *detail])
    return blocks


def _filters() -> list[Any]:
    with gr.Row(equal_height=True):
        search = gr.Textbox(label="Search", placeholder="Name or author", elem_id="search", scale=3)
        tag = gr.Dropdown(
            label="Tag", choices=[""], value="", allow_custom_value=True, elem_id="tag", scale=2
        )
        sort = gr.Dropdown(
            label="Sort by",
            choices=[(label, key) for key, label in {**SORTS, **QUALITY_SORTS}.items()],
            value="likes",
            elem_id="sort",
            scale=2,
        )
    return [search, tag, sort]


def _page_buttons() -> tuple[Any, Any, Any, Any]:
    with gr.Row():
        previous = gr.Button("Previous page", elem_id="previous-page", size="sm", interactive=False)
        page_label = gr.Markdown("Page 1", elem_id="page-label")
        following = gr.Button("Next page", elem_id="next-page", size="sm", interactive=False)
        recheck_all = gr.Button("Re-check all", elem_id="recheck-all", size="sm")
    return previous, page_label, following, recheck_all


def _detail_view() -> tuple[Any, ...]:
    chosen = gr.Dropdown(
        label="Show details of",
        choices=[],
        value=None,
        allow_custom_value=True,
        elem_id="detail-space",
    )
    summary = gr.HTML(detail_html(None, None), elem_id="detail")
    recheck = gr.Button("Re-check now", elem_id="recheck", size="sm")
    report = gr.HTML(elem_id="report")
    with gr.Row():
        action = gr.JSON(label="Action schema", elem_id="action-schema")
        observation = gr.JSON(label="Observation schema", elem_id="observation-schema")
    manifest = gr.Code(
        label="Manifest (openenv.yaml)", language="yaml", interactive=False, elem_id="manifest"
    )
    return chosen, summary, recheck, report, action, observation, manifest


class _View:
    """The event handlers, over one :class:`Catalog`."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.sent = _Sent()

    # -- the table --------------------------------------------------------------------------

    def first(self, request: gr.Request) -> list[Any]:
        """On load: filters and the chosen Space from the URL, then the first page."""
        params = dict(getattr(request, "query_params", {}) or {})
        search, tag = params.get("search", ""), params.get("tag", "")
        wanted = params.get("sort", "likes")
        sort = wanted if wanted in SORTS or wanted in QUALITY_SORTS else "likes"
        tags = ["", *self.catalog.hub.known_tags()]
        listing = self.show(search, tag, sort, 1, request)
        space = params.get("space") or None
        detail = self.choose(space, listing[4], request)
        listing[5] = gr.Dropdown(choices=_with(listing[5].choices, space), value=space)
        return [search, _dropdown(tags, tag), sort, *listing, *detail]

    def first_page(self, search: str, tag: str, sort: str, request: gr.Request) -> list[Any]:
        return self.show(search, tag, sort, 1, request)

    def previous(
        self, search: str, tag: str, sort: str, page: int, request: gr.Request
    ) -> list[Any]:
        return self.show(search, tag, sort, max(1, page - 1), request)

    def next(self, search: str, tag: str, sort: str, page: int, request: gr.Request) -> list[Any]:
        return self.show(search, tag, sort, page + 1, request)

    def show(
        self, search: str, tag: str, sort: str, page: int, request: gr.Request | None = None
    ) -> list[Any]:
        """Table, page label, buttons, rows, the choices of the detail view, and the page."""
        self.sent.changing(request, "rows")
        try:
            query = CatalogQuery(search or "", tag or "", sort or "likes", page)
        except ConfigurationError as exc:
            result = CatalogPage(CatalogQuery(), error=f"{exc.message} {exc.hint}")
        else:
            result = self.catalog.page(query)
        envs = list(result.environments)
        self.sent.record(request, "rows", _ids(envs))
        self.sent.record(request, "query", result.query)
        shown = f"Page {page}" + (f" · {len(envs)} environments" if envs else "")
        return [
            table_html(result, envs, self.catalog.badge),
            shown,
            gr.Button(interactive=page > 1),
            gr.Button(interactive=result.has_next),
            envs,
            gr.Dropdown(choices=[env.repo_id for env in envs]),
            page,
        ]

    def recheck_all(
        self, envs: Sequence[Environment], request: gr.Request | None = None
    ) -> list[Any]:
        self.catalog.recheck(envs)
        return [self._table(envs, self.sent.query(request)), list(envs)]

    # -- one environment --------------------------------------------------------------------

    def choose(
        self, repo_id: str | None, envs: Sequence[Environment], request: gr.Request | None = None
    ) -> list[Any]:
        """The detail view of ``repo_id`` (from the page, else from the Hub)."""
        self.sent.changing(request, "space")
        detail = self._choose(repo_id, envs)
        self.sent.record(request, "space", detail[0].repo_id if detail[0] else None)
        return detail

    def _choose(self, repo_id: str | None, envs: Sequence[Environment]) -> list[Any]:
        if not repo_id:
            return self._detail(None)
        env = next((env for env in envs if env.repo_id == repo_id), None)
        if env is None or env.details is None:
            try:
                env = self.catalog.environment(repo_id)
            except HubError as exc:
                return self._detail(None, f"{exc.message} {exc.hint}".strip())
            if env is None:
                tags = self.catalog.settings.tags_text
                return self._detail(None, f"{repo_id} is not tagged {tags}: not in the catalog.")
        return self._detail(env)

    def recheck(self, env: Environment | None) -> list[Any]:
        if env is not None:
            self.catalog.recheck([env])
        return self._detail(env)

    def tick(
        self,
        envs: Sequence[Environment],
        env: Environment | None,
        table: str | None,
        summary: str | None,
        report: str | None,
        action: Any,
        observation: Any,
        manifest: str | None,
        request: gr.Request | None = None,
    ) -> list[Any]:
        """What finished since: validations, and details that arrived after the page.

        ``table`` to ``manifest`` are what the page shows now; what did not change is left
        alone, so a selection, a scroll position or an opened schema stays as it is. A tick
        that a user's event overtook (another page, another Space) leaves alone what that
        event replaced.
        """
        shown = [table, summary, report, action, observation, manifest]
        updated = self.catalog.hub.with_cached_details(envs)
        self.catalog.watch(updated)
        if env is not None:
            env = next((row for row in updated if row.repo_id == env.repo_id), env)
        current, *detail = self._detail(env, read_results=False)
        fresh = [self._table(updated, self.sent.query(request)), *detail]
        sent, *changed = [
            gr.skip() if _same(new, old) else new for new, old in zip(fresh, shown, strict=True)
        ]
        listing: list[Any] = [sent, updated]
        if not self.sent.is_latest(request, "rows", _ids(envs)):
            listing = [gr.skip(), gr.skip()]
        if not self.sent.is_latest(request, "space", env.repo_id if env else None):
            current, changed = gr.skip(), [gr.skip()] * len(changed)
        return [*listing, current, *changed]

    # -- rendering --------------------------------------------------------------------------

    def _table(self, envs: Sequence[Environment], query: CatalogQuery) -> str:
        return table_html(CatalogPage(query, tuple(envs)), envs, self.catalog.badge)

    def _detail(
        self, env: Environment | None, problem: str = "", *, read_results: bool = True
    ) -> list[Any]:
        """The detail view; ``read_results=False`` (the timer) shows the leaderboard last read,
        never asking the Hub."""
        if env is None:
            return [None, detail_html(None, None, problem), "", None, None, ""]
        evaluations = self.catalog.evaluations
        board = evaluations.of(env.repo_id) if read_results else evaluations.cached(env.repo_id)
        validation = self.catalog.validations.get(env.repo_id)
        schemas = dict(validation.schemas or {}) if validation else {}
        manifest = env.details.manifest_text if env.details else None
        return [
            env,
            detail_html(env, self.catalog.badge(env), board=board),
            report_html(validation, env.running),
            schemas.get("action"),
            schemas.get("observation"),
            # stripped, as gr.Code shows it and sends it back: a tick can tell it is unchanged
            (manifest or "# This Space has no openenv.yaml.").strip(),
        ]


_CHANGING = object()


class _Sent:
    """What each open page (a Gradio session) was sent last by a user's event: its rows and
    its chosen Space, or that an event is changing them.

    The page's timer reads the rows and the Space from the page when it fires; if a user's
    event replaces them meanwhile, the tick's answer would put the old ones back (events of a
    session run concurrently). :meth:`is_latest` tells the tick so. The newest
    :attr:`LIMIT` sessions are kept; a page not among them is answered as if it were.
    """

    LIMIT = 1024

    def __init__(self) -> None:
        self._pages: OrderedDict[str, dict[str, object]] = OrderedDict()
        self._lock = threading.Lock()

    def changing(self, request: gr.Request | None, key: str) -> None:
        self.record(request, key, _CHANGING)

    def record(self, request: gr.Request | None, key: str, value: object) -> None:
        session = getattr(request, "session_hash", None)
        if session is None:
            return
        with self._lock:
            self._pages.setdefault(session, {})[key] = value
            self._pages.move_to_end(session)
            while len(self._pages) > self.LIMIT:
                self._pages.popitem(last=False)

    def query(self, request: gr.Request | None) -> CatalogQuery:
        """The query of the page last sent to this session (its sort, search and tag)."""
        session = getattr(request, "session_hash", None)
        with self._lock:
            sent = self._pages.get(session, {}) if session is not None else {}
            found = sent.get("query")
        return found if isinstance(found, CatalogQuery) else CatalogQuery()

    def is_latest(self, request: gr.Request | None, key: str, value: object) -> bool:
        session = getattr(request, "session_hash", None)
        with self._lock:
            sent = self._pages.get(session, {}) if session is not None else {}
            return key not in sent or sent[key] == value


def _ids(envs: Sequence[Environment]) -> tuple[str, ...]:
    return tuple(env.repo_id for env in envs)


def _same(new: Any, old: Any) -> bool:
    """Whether ``new`` is what the page shows already, as the browser sends it back (an empty
    component as ``None`` or empty, a JSON value as a plain dict)."""
    return (new or None) == (old or None)


def _dropdown(choices: list[str], value: str) -> Any:
    return gr.Dropdown(choices=_with(choices, value), value=value)


def _with(choices: Sequence[Any], value: str | None) -> list[Any]:
    """``choices`` (values, or ``(label, value)`` pairs) with ``value`` among them."""
    values = [choice[1] if isinstance(choice, tuple) else choice for choice in choices]
    return [*values, value] if value and value not in values else values
