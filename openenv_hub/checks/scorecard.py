"""The quality scorecard: what ``openenv validate --level quality`` found, check by check, each
with its evidence; kept as ``quality.json`` in the environment folder, shown on the Space card.

A check's ``status`` is ``pass`` or ``fail`` (a finding about the environment), ``skip`` (there
was nothing to check it against, or it does not apply: the summary says which) or ``error``
(the check could not run: the server died, a request timed out). An error is never a pass or a
fail of the environment.

Example:
    >>> card = Scorecard("my_env", "0.1.0", checks=(QualityCheck("floor", "pass", "held"),))
    >>> card.counts()["pass"], card.failed
    (1, False)
    >>> Scorecard.from_json(card.to_json()) == card
    True

Layer: model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from openenv_hub.checks.result import CheckResult

__all__ = [
    "CARD_KEY",
    "CHECK_NAMES",
    "COULD_NOT_CHECK",
    "SCORECARD_FILE",
    "STATUSES",
    "QualityCheck",
    "Scorecard",
    "Status",
]

Status = Literal["pass", "fail", "skip", "error"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "skip", "error")
#: The checks, in the order a scorecard lists them.
CHECK_NAMES = ("solvable", "floor", "no_leakage", "determinism", "seeds", "isolation", "cost")
#: The scorecard's file in an environment folder, which ``openenv push`` reads.
SCORECARD_FILE = "quality.json"
#: The key of the Space card's metadata (README front matter) that holds the scorecard.
CARD_KEY = "openenv_quality"
#: How a check that could not run is worded.
COULD_NOT_CHECK = "could not check"
SCHEMA_VERSION = 1
#: Bounds of what a Space card holds: evidence lines per check, and characters per line.
CARD_EVIDENCE_LINES = 12
CARD_LINE_CHARS = 300


@dataclass(frozen=True)
class QualityCheck:
    """One check of the scorecard.

    Attributes:
        name: One of :data:`CHECK_NAMES`.
        status: ``pass``, ``fail``, ``skip`` or ``error``.
        summary: One line: what was found.
        evidence: What was seen, a line each (the failures first).
        measured: The figures behind it (returns, latencies, counts).
        hint: What to do about a failure, a skip or an error.
    """

    name: str
    status: Status
    summary: str
    evidence: tuple[str, ...] = ()
    measured: Mapping[str, Any] = field(default_factory=dict)
    hint: str = ""

    def result(self) -> CheckResult:
        """The check as ``openenv validate`` reports every check (level ``quality``)."""
        if self.status == "error":
            message = f"{COULD_NOT_CHECK}: {self.summary}"
            return CheckResult(self.name, True, message, self.hint, skipped=True, level="quality")
        if self.status == "skip":
            return CheckResult.skip(self.name, self.summary, level="quality")
        return CheckResult(
            self.name, self.status == "pass", self.summary, self.hint, level="quality"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "evidence": list(self.evidence),
            "measured": dict(self.measured),
            "hint": self.hint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QualityCheck:
        """Raises ValueError for anything that is not a check."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a check is a mapping, not {type(data).__name__}")
        status = data.get("status")
        if status not in STATUSES:
            raise ValueError(f"a check's status is one of {', '.join(STATUSES)}, not {status!r}")
        evidence = data.get("evidence") or []
        measured = data.get("measured") or {}
        if not isinstance(evidence, list) or not isinstance(measured, Mapping):
            raise ValueError("a check's evidence is a list and its measures a mapping")
        return cls(
            name=str(data.get("name") or ""),
            status=cast(Status, status),
            summary=str(data.get("summary") or ""),
            evidence=tuple(str(line) for line in evidence),
            measured=dict(measured),
            hint=str(data.get("hint") or ""),
        )


@dataclass(frozen=True)
class Scorecard:
    """What the quality checks found about one environment.

    Attributes:
        environment: Its name.
        version: Its version (the manifest's).
        checks: The checks, in the order of :data:`CHECK_NAMES`.
        target: What was checked: a folder or a URL.
        checked_at: When, as an ISO 8601 time in UTC.
        digest: The digest of the folder's published files it was made for (None for a URL).
        settings: The tasks, oracle and thresholds the checks used.
        duration_s: How long the checks took.
    """

    environment: str
    version: str
    checks: tuple[QualityCheck, ...] = ()
    target: str = ""
    checked_at: str = ""
    digest: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0

    def check(self, name: str) -> QualityCheck | None:
        return next((check for check in self.checks if check.name == name), None)

    def counts(self) -> dict[str, int]:
        """How many checks have each status."""
        return {status: sum(c.status == status for c in self.checks) for status in STATUSES}

    @property
    def failed(self) -> bool:
        return any(check.status == "fail" for check in self.checks)

    @property
    def incomplete(self) -> bool:
        """Some check could not run."""
        return any(check.status == "error" for check in self.checks)

    def results(self) -> list[CheckResult]:
        return [check.result() for check in self.checks]

    def badge(self) -> str:
        """The badge's text: ``5/5 passed``, ``1 failed``, ..."""
        counts = self.counts()
        if counts["fail"]:
            return f"{counts['fail']} failed"
        decided = counts["pass"] + counts["fail"]
        return f"{counts['pass']}/{decided} passed" if decided else "not checked"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "environment": self.environment,
            "version": self.version,
            "target": self.target,
            "checked_at": self.checked_at,
            "digest": self.digest,
            "duration_s": self.duration_s,
            "settings": dict(self.settings),
            "checks": [check.to_json() for check in self.checks],
        }

    @classmethod
    def from_json(cls, data: Any) -> Scorecard:
        """A scorecard from its JSON (``quality.json``, or a Space card's metadata).

        Raises:
            ValueError: It is not one.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("checks"), list):
            raise ValueError("a scorecard is a mapping with a list of checks")
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise ValueError(f"scorecard schema {version!r} is not {SCHEMA_VERSION}")
        settings = data.get("settings") or {}
        duration = data.get("duration_s") or 0.0
        return cls(
            environment=str(data.get("environment") or ""),
            version=str(data.get("version") or ""),
            checks=tuple(QualityCheck.from_json(check) for check in data["checks"]),
            target=str(data.get("target") or ""),
            checked_at=str(data.get("checked_at") or ""),
            digest=str(data["digest"]) if data.get("digest") else None,
            settings=dict(settings) if isinstance(settings, Mapping) else {},
            duration_s=float(duration) if _finite(duration) else 0.0,
        )

    def card_metadata(self) -> dict[str, Any]:
        """What a Space card's metadata holds: every check with its summary, its first
        evidence lines and its figures, each cut to a bound (the whole is ``quality.json``)."""
        data = self.to_json()
        data["checks"] = [
            {
                **check.to_json(),
                "summary": check.summary[:CARD_LINE_CHARS],
                "hint": check.hint[:CARD_LINE_CHARS],
                "evidence": [line[:CARD_LINE_CHARS] for line in check.evidence][
                    :CARD_EVIDENCE_LINES
                ],
                "measured": _scalars(check.measured),
            }
            for check in self.checks
        ]
        data["settings"] = _scalars(self.settings)
        return data


def _scalars(values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries that are plain numbers, booleans or short strings."""
    kept: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
            kept[str(key)] = value
        elif isinstance(value, str):
            kept[str(key)] = value[:CARD_LINE_CHARS]
    return kept


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
