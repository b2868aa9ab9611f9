"""The catalog: pages from the Hub (:mod:`.listing`) joined with the validations that the
background threads keep (:mod:`.checks`), and the badge each row shows.

A running Space is validated at its app's URL; a Space that does not run is not (on the Hub a
request would wake a sleeping one), and its badge says which stage it is in.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

from openenv_hub.validation import report

from .checks import Validation, ValidationCache
from .evaluations import Evaluations
from .listing import HubCatalog
from .models import CatalogPage, CatalogQuery, Environment
from .settings import CatalogSettings

__all__ = ["Badge", "Catalog", "badge_of"]

BadgeState = Literal["passed", "failed", "checking", "not-running"]


@dataclass(frozen=True)
class Badge:
    """What a row says about validation.

    Attributes:
        state: ``passed``, ``failed``, ``checking`` (no result yet) or ``not-running``.
        label: The badge's text, e.g. ``✓ valid`` or ``✗ openapi_version_available``.
        detail: One sentence for a tooltip: when it was checked, what failed.
        checked_at: When the shown validation ran, if one did.
        failed: The names of the failed checks.
        refreshing: A newer validation is on its way.
    """

    state: BadgeState
    label: str
    detail: str
    checked_at: dt.datetime | None = None
    failed: tuple[str, ...] = ()
    refreshing: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "label": self.label,
            "detail": self.detail,
            "checked_at": _iso(self.checked_at),
            "failed": list(self.failed),
            "refreshing": self.refreshing,
        }


def badge_of(env: Environment, validation: Validation | None, *, pending: bool) -> Badge:
    """The badge of ``env`` given its latest validation (and whether a new one is coming)."""
    if not env.running:
        reason = f": {env.error_message.splitlines()[0][:200]}" if env.error_message else ""
        return Badge(
            "not-running",
            f"✗ not running ({env.stage})",
            f"The Space is {env.stage}{reason}. It is validated once it runs.",
        )
    if validation is None:
        return Badge("checking", "… checking", "The app is being validated.", refreshing=pending)
    when = dt.datetime.fromtimestamp(validation.checked_at, dt.timezone.utc)
    stamp = when.strftime("%Y-%m-%d %H:%M:%S UTC")
    if validation.passed:
        count = sum(not result.skipped for result in validation.results)
        return Badge(
            "passed",
            "✓ valid",
            f"{count} checks of openenv validate passed at {stamp}.",
            when,
            refreshing=pending,
        )
    first = validation.failures[0]
    more = len(validation.failures) - 1
    return Badge(
        "failed",
        f"✗ {first.name}" + (f" (+{more})" if more else ""),
        f"{first.name} failed at {stamp}: {first.message}",
        when,
        tuple(result.name for result in validation.failures),
        refreshing=pending,
    )


class Catalog:
    """Pages of environments with their badges; validations run in the background.

    Args:
        settings: What to list and how often to validate.
        hub: Reads the Hub (default: one made from ``settings``).
        validations: The validation cache (default: one made from ``settings``).
    """

    def __init__(
        self,
        settings: CatalogSettings | None = None,
        *,
        hub: HubCatalog | None = None,
        validations: ValidationCache | None = None,
    ) -> None:
        self.settings = settings or CatalogSettings.from_environment()
        self.hub = hub or HubCatalog(
            self.settings, timeout_s=max(20.0, self.settings.check_timeout_s)
        )
        self.validations = validations or ValidationCache(
            _checker(self.settings.check_timeout_s),
            max_age_s=self.settings.refresh_s,
            workers=self.settings.workers,
            recheck_s=self.settings.recheck_s,
        )
        self.evaluations = Evaluations(self.hub, ttl_s=self.hub.details_ttl_s)

    def start(self) -> None:
        """Start validating in the background."""
        self.validations.start()

    def stop(self) -> None:
        """Stop the background work."""
        self.validations.stop()

    def page(self, query: CatalogQuery) -> CatalogPage:
        """A page from the Hub; its running Spaces are queued for validation if needed."""
        page = self.hub.page(query)
        self.watch(page.environments)
        return page

    def environment(self, repo_id: str) -> Environment | None:
        """One environment by id (None if the Space is not tagged for the catalog)."""
        env = self.hub.environment(repo_id)
        if env is not None:
            self.watch([env])
        return env

    def watch(self, environments: Any) -> None:
        """Queue the running ones whose validation is missing or stale."""
        for env in environments:
            if env.running and env.details is not None:
                self.validations.want(env.repo_id, env.details.app_url, env.sha)

    def recheck(self, environments: Any) -> dict[str, float]:
        """Validate these running environments again now (on demand), each at most once per
        ``settings.recheck_s``.

        Returns:
            The Spaces re-checked too recently, with the seconds until they may be again.
        """
        refused = {}
        for env in environments:
            if env.running and env.details is not None:
                wait_s = self.validations.refresh(env.repo_id, env.details.app_url, env.sha)
                if wait_s:
                    refused[env.repo_id] = wait_s
        return refused

    def badge(self, env: Environment) -> Badge:
        return badge_of(
            env,
            self.validations.get(env.repo_id),
            pending=self.validations.is_pending(env.repo_id),
        )

    def row_json(self, env: Environment) -> dict[str, Any]:
        """One environment as the JSON API returns it."""
        details = env.details
        return {
            "id": env.repo_id,
            "title": env.title,
            "description": env.description,
            "stage": env.stage,
            "likes": env.likes,
            "tags": list(env.tags),
            "last_modified": _iso(env.last_modified),
            "versions": list(details.versions) if details else None,
            "install": details.install if details else None,
            "page_url": env.page_url,
            "app_url": details.app_url if details else None,
            "web_url": env.web_url,
            "validation": self.badge(env).as_json(),
            "quality": _quality_row(env),
        }

    def detail_json(self, env: Environment) -> dict[str, Any]:
        """One environment with its manifest, schemas and latest validation report."""
        validation = self.validations.get(env.repo_id)
        schemas = dict(validation.schemas or {}) if validation else {}
        board = self.evaluations.of(env.repo_id)
        return {
            **self.row_json(env),
            "manifest": env.details.manifest_text if env.details else None,
            "action_schema": schemas.get("action"),
            "observation_schema": schemas.get("observation"),
            "report": validation_report(validation),
            "scorecard": env.quality.to_json() if env.quality else None,
            "evaluations": [
                {
                    "dataset": r.repo_id,
                    "model": r.model,
                    "mean_return": r.mean_return,
                    "pass_at_1": r.pass_at_1,
                    "rollouts": r.rollouts,
                    "date": r.date.isoformat() if r.date else None,
                    "url": r.url,
                    "complete": r.complete,
                    "ranked": r in board.ranked,
                    "errors": r.errors,
                }
                for r in board.results
            ],
        }


def validation_report(validation: Validation | None) -> dict[str, Any] | None:
    """The ``openenv validate --json`` report of a validation, with when it ran."""
    if validation is None:
        return None
    checked_at = dt.datetime.fromtimestamp(validation.checked_at, dt.timezone.utc)
    return {
        **report(validation.url, "url", list(validation.results)),
        "checked_at": _iso(checked_at),
        "commit": validation.sha,
    }


def _quality_row(env: Environment) -> dict[str, Any] | None:
    """A row's scorecard: its badge and each check's status (None without one)."""
    card = env.quality
    if card is None:
        return None
    return {"badge": card.badge(), "checks": {check.name: check.status for check in card.checks}}


def _checker(timeout_s: float) -> Any:
    from .checks import check_app

    def check(url: str) -> Any:
        return check_app(url, timeout_s=timeout_s)

    return check


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z") if moment else None
