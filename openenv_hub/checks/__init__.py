"""The checks of an environment folder that read its files only, and the one result type every
check returns (:class:`CheckResult`).

:mod:`openenv_hub.validation` (``openenv validate``) runs these first, then the checks that
import, serve or build the environment; ``push`` runs them on what it uploads.

Example:
    >>> from pathlib import Path
    >>> passed(check_folder(Path("envs/echo_env")))  # doctest: +SKIP
    True

Layer: model.
"""

from openenv_hub.checks.result import Check, CheckResult, passed, report, report_json, run_checks
from openenv_hub.checks.static import (
    ENVIRONMENT_TAGS,
    check_folder,
    read_front_matter,
    static_checks,
)
from openenv_hub.checks.target import EnvTarget

__all__ = [
    "ENVIRONMENT_TAGS",
    "Check",
    "CheckResult",
    "EnvTarget",
    "check_folder",
    "passed",
    "read_front_matter",
    "report",
    "report_json",
    "run_checks",
    "static_checks",
]
