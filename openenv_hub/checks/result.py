"""The one result type of every check, and its table and JSON renderings.

Layer: model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

__all__ = ["Check", "CheckResult", "passed", "report", "report_json", "run_checks"]

T = TypeVar("T")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check. ``hint`` says what to do when it failed."""

    name: str
    ok: bool
    message: str
    hint: str = ""
    skipped: bool = False
    level: str = "static"

    @classmethod
    def skip(cls, name: str, reason: str, *, level: str = "static") -> CheckResult:
        return cls(name, True, f"skipped: {reason}", skipped=True, level=level)


Check = Callable[[T], CheckResult]


def run_checks(checks: Iterable[Check[T]], target: T, *, level: str) -> list[CheckResult]:
    """Run each check; one that raises becomes a failed result naming the exception."""
    results = []
    for check in checks:
        name = check.__name__.removeprefix("check_")
        try:
            result = check(target)
        except Exception as exc:  # a check must never take the report down with it
            result = CheckResult(name, False, f"{type(exc).__name__}: {exc}")
        results.append(CheckResult(**{**asdict(result), "level": level}))
    return results


def passed(results: Iterable[CheckResult]) -> bool:
    return all(result.ok for result in results)


def report(target: str, level: str, results: list[CheckResult]) -> dict[str, Any]:
    """The JSON report of ``openenv validate --json``."""
    failed = [r.name for r in results if not r.ok]
    return {
        "target": target,
        "level": level,
        "passed": not failed,
        "summary": {
            "passed_count": sum(r.ok for r in results),
            "total_count": len(results),
            "failed": failed,
        },
        "checks": [asdict(r) for r in results],
    }


def report_json(target: str, level: str, results: list[CheckResult]) -> str:
    return json.dumps(report(target, level, results), indent=2)
