"""``openenv validate --level quality``: a scorecard of the environment as a training signal.

Seven checks, each with its evidence (:class:`~openenv_hub.checks.scorecard.Scorecard`):
``solvable``, ``floor``, ``no_leakage``, ``determinism``, ``seeds``, ``isolation`` and ``cost``.
The episodes they read are played once against a running server (:mod:`.run`), by the
manifest's oracle and by non-solutions made from the environment's tools (:mod:`.policies`).
See docs/quality.md.

Example:
    >>> card = scorecard("http://127.0.0.1:8000", QualitySpec())  # doctest: +SKIP
    >>> [check.status for check in card.checks]  # doctest: +SKIP

Layer: client.
"""

from openenv_hub.validation.quality.runner import QUALITY_CHECKS, TOTAL_TIMEOUT_S, scorecard
from openenv_hub.validation.quality.spec import QualitySpec, load_function, task_row

__all__ = [
    "QUALITY_CHECKS",
    "TOTAL_TIMEOUT_S",
    "QualitySpec",
    "load_function",
    "scorecard",
    "task_row",
]
