"""HTML of the catalog: the table of environments, a Space's summary, a validation report.

Pure functions of the data, every value escaped and every link ``http(s)``; the page's look is
:data:`CSS`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from urllib.parse import quote

from openenv_hub.validation import CheckResult

from .catalog import Badge
from .checks import Validation
from .evaluations import EvalResult, Leaderboard
from .models import CatalogPage, Environment, web_link
from .quality import header_cells, quality_html, row_cells

__all__ = ["CSS", "detail_html", "leaderboard_html", "report_html", "table_html"]

CSS = """
.oc-table { width: 100%; border-collapse: collapse; font-size: 0.92rem; }
.oc-table th { text-align: left; padding: 0.45rem 0.5rem;
  border-bottom: 2px solid var(--border-color-primary); }
.oc-table td { vertical-align: top; padding: 0.55rem 0.5rem;
  border-bottom: 1px solid var(--border-color-primary); }
.oc-id { color: var(--body-text-color-subdued); font-size: 0.82rem; }
.oc-desc { margin: 0.2rem 0; }
.oc-meta, .oc-when { color: var(--body-text-color-subdued); font-size: 0.8rem; }
.oc-install { font-size: 0.8rem; word-break: break-all; user-select: all; }
.oc-badge, .oc-stage { display: inline-block; border-radius: 999px; padding: 0.1rem 0.55rem;
  font-size: 0.8rem; font-weight: 600; white-space: nowrap; border: 1px solid; }
.oc-passed { background: #ecfdf5; border-color: #a7f3d0; color: #065f46; }
.oc-failed, .oc-not-running { background: #fef2f2; border-color: #fecaca; color: #991b1b; }
.oc-checking { background: #f8fafc; border-color: #cbd5e1; color: #334155; }
.oc-stage { font-weight: 500; background: #f8fafc; border-color: #cbd5e1; color: #334155; }
.oc-stage-running { background: #eff6ff; border-color: #bfdbfe; color: #1e3a8a; }
.oc-banner { border-radius: 8px; padding: 0.55rem 0.8rem; border: 1px solid;
  background: #fef2f2; border-color: #fecaca; color: #991b1b; }
.oc-empty { color: var(--body-text-color-subdued); padding: 0.8rem 0; }
.oc-sort { color: inherit; text-decoration: underline dotted; }
.oc-q, .oc-q-none, .oc-q-badge { text-align: center; white-space: nowrap; }
.oc-q a { text-decoration: none; font-weight: 600; }
.oc-q-pass a { color: #065f46; } .oc-q-fail a { color: #991b1b; }
.oc-q-skip a, .oc-q-none { color: var(--body-text-color-subdued); } .oc-q-error a { color: #92400e; }
.oc-leaderboard td, .oc-leaderboard th,
.oc-report td, .oc-report th { padding: 0.3rem 0.5rem; text-align: left; vertical-align: top;
  border-bottom: 1px solid var(--border-color-primary); }
"""


def table_html(
    page: CatalogPage, environments: Sequence[Environment], badge: Callable[[Environment], Badge]
) -> str:
    """The page's table, or why there is none."""
    if page.error:
        return f'<div class="oc-banner" role="alert">{_e(page.error)}</div>'
    if not environments:
        return '<p class="oc-empty">No environment matches.</p>'
    head = "".join(
        f'<th scope="col">{name}</th>'
        for name in ("Environment", "Stage", "Versions", "Install", "Validation")
    ) + header_cells(page.query)
    rows = "".join(_row(env, badge(env)) for env in environments)
    return (
        f'<table class="oc-table" aria-label="Environments"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _row(env: Environment, badge: Badge) -> str:
    details = env.details
    links = [f'<a href="?space={quote(env.repo_id, safe="")}">Details</a>']
    if env.web_url:
        links.insert(0, _link(env.web_url, "Web UI"))
    versions = ", ".join(details.versions) if details and details.versions else "—"
    install = f'<code class="oc-install">{_e(details.install)}</code>' if details else "…"
    return (
        f'<tr data-space="{_e(env.repo_id)}">'
        f"<td>{_link(env.page_url, env.title, css='oc-name')}"
        f'<div class="oc-id">{_e(env.repo_id)}</div>'
        f'<div class="oc-desc">{_e(env.description)}</div>'
        f'<div class="oc-meta">{_meta(env)}</div>'
        f'<div class="oc-links">{" · ".join(links)}</div></td>'
        f"<td>{_stage(env)}</td>"
        f'<td class="oc-versions">{_e(versions)}</td>'
        f"<td>{install}</td>"
        f"<td>{badge_html(badge)}</td>{row_cells(env)}</tr>"
    )


def _meta(env: Environment) -> str:
    parts = [f"♥ {env.likes}"]
    if env.last_modified:
        parts.append(f"updated {env.last_modified:%Y-%m-%d}")
    if env.tags:
        parts.append("tags: " + ", ".join(env.tags))
    return _e(" · ".join(parts))


def _stage(env: Environment) -> str:
    kind = "oc-stage oc-stage-running" if env.running else "oc-stage"
    title = f' title="{_e(env.error_message)}"' if env.error_message else ""
    return f'<span class="{kind}"{title}>{_e(env.stage)}</span>'


def badge_html(badge: Badge) -> str:
    """A badge, with when it was checked (and whether a newer check is on its way)."""
    when = f"checked {badge.checked_at:%Y-%m-%d %H:%M:%S} UTC" if badge.checked_at else ""
    if badge.refreshing and badge.checked_at:
        when += " · re-checking…"
    return (
        f'<span class="oc-badge oc-{badge.state}" title="{_e(badge.detail)}">{_e(badge.label)}'
        f'</span><div class="oc-when">{_e(when)}</div>'
    )


def detail_html(
    env: Environment | None,
    badge: Badge | None,
    problem: str = "",
    board: Leaderboard | None = None,
) -> str:
    """The summary above a Space's manifest and schemas, with its leaderboard when read."""
    if env is None:
        text = problem or "Choose an environment to see its manifest, schemas and validation."
        role = ' role="alert"' if problem else ""
        return f'<p class="oc-empty"{role}>{_e(text)}</p>'
    details = env.details
    lines = [
        f'<h3>{_link(env.page_url, env.title)} <span class="oc-id">{_e(env.repo_id)}</span></h3>',
        f'<p class="oc-desc">{_e(env.description)}</p>',
        f"<p>Stage: {_stage(env)}"
        + (f" — {_e(env.error_message)}" if env.error_message else "")
        + "</p>",
    ]
    if details:
        versions = ", ".join(details.versions) or "none yet"
        lines += [
            f"<p>Versions: {_e(versions)}</p>",
            f'<p>Install: <code class="oc-install">{_e(details.install)}</code></p>',
            f"<p>App: {_link(details.app_url, details.app_url)} · "
            f"{_link(env.web_url, 'Web UI')}</p>",
        ]
        if details.problem:
            lines.append(f'<p class="oc-meta">Could not read everything: {_e(details.problem)}</p>')
    if badge is not None:
        lines.append(f"<p>Validation: {badge_html(badge)}</p>")
    if board is not None:
        lines.append(leaderboard_html(board))
    lines.append(quality_html(env))
    return "".join(lines)


def leaderboard_html(board: Leaderboard) -> str:
    """The evaluation results pushed for an environment, best pass@1 first: the complete runs
    played under the same conditions; runs under other conditions, and the incomplete ones
    (with infrastructure errors or rollouts missing), folded away below them."""
    title = "<h4>Evaluations</h4>"
    if board.error:
        return f'{title}<p class="oc-meta" role="alert">{_e(board.error)}</p>'
    if not board.results:
        text = "No evaluation results yet: openenv eval --space NS/NAME --push-to-hub pushes them."
        return f'{title}<p class="oc-empty">{_e(text)}</p>'
    shown = title
    if board.ranked:
        shown += _results_table(board.ranked, "Evaluations")
    else:
        shown += '<p class="oc-empty">No complete evaluation yet.</p>'
    if board.other_conditions:
        count = len(board.other_conditions)
        shown += (
            f'<details class="oc-other-conditions"><summary>{count} run'
            f"{'s' if count > 1 else ''} under other conditions (another taskset, pass "
            "threshold or turn limit: not comparable with the table above)</summary>"
            f"{_results_table(board.other_conditions, 'Evaluations under other conditions')}"
            "</details>"
        )
    if board.incomplete:
        count = len(board.incomplete)
        shown += (
            f'<details class="oc-incomplete"><summary>{count} incomplete run'
            f"{'s' if count > 1 else ''} (infrastructure errors or rollouts missing: their "
            "figures are not the model's)</summary>"
            f"{_results_table(board.incomplete, 'Incomplete evaluations')}</details>"
        )
    return shown


def _results_table(results: tuple[EvalResult, ...], label: str) -> str:
    head = "".join(
        f'<th scope="col">{name}</th>'
        for name in ("Model", "Mean return", "pass@1", "Rollouts", "Date", "Results")
    )
    rows = "".join(
        f'<tr data-results="{_e(r.repo_id)}"><td>{_e(r.model)}</td>'
        f"<td>{_figure(r.mean_return)}</td><td>{_figure(r.pass_at_1)}</td>"
        f"<td>{_e(r.rollouts if r.rollouts is not None else '—')}</td>"
        f"<td>{_e(r.date.isoformat() if r.date else '—')}</td>"
        f"<td>{_link(r.url, r.repo_id)}</td></tr>"
        for r in results
    )
    return (
        f'<table class="oc-leaderboard" aria-label="{_e(label)}"><thead><tr>{head}</tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def report_html(validation: Validation | None, running: bool) -> str:
    """The latest validation report, one row per check."""
    if validation is None:
        text = "Not validated yet." if running else "Validated once the Space runs."
        return f'<p class="oc-empty">{_e(text)}</p>'
    rows = "".join(_check_row(result) for result in validation.results)
    return (
        f'<p class="oc-meta">openenv validate {_e(validation.url)} · commit '
        f"{_e((validation.sha or '?')[:7])}</p>"
        '<table class="oc-report" aria-label="Validation report"><thead><tr>'
        '<th scope="col">Check</th><th scope="col">Result</th><th scope="col">Details</th>'
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def _check_row(result: CheckResult) -> str:
    outcome = "skip" if result.skipped else "pass" if result.ok else "FAIL"
    hint = f"<br><em>{_e(result.hint)}</em>" if result.hint and not result.ok else ""
    return (
        f'<tr data-check="{_e(result.name)}"><td>{_e(result.name)}</td>'
        f"<td>{outcome}</td><td>{_e(result.message)}{hint}</td></tr>"
    )


def _link(url: str | None, text: str, *, css: str = "") -> str:
    """A link opening in a new tab, or the text alone when ``url`` is not ``http(s)``."""
    target = web_link(url)
    if target is None:
        return _e(text)
    kind = f' class="{css}"' if css else ""
    return f'<a{kind} href="{_e(target)}" target="_blank" rel="noopener">{_e(text)}</a>'


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
