"""Two plays of the same episode, compared: first observation, then each step's observation,
reward, end and refusal. Fields the observation class names in ``replay_ignores`` (timings) are
left out, as forks leave them out.

Layer: client.
"""

from __future__ import annotations

import json
from typing import Any

from openenv_hub.validation.quality.episodes import Episode, Step

__all__ = ["differences", "field_difference", "short"]


def differences(first: Episode, second: Episode, volatile: frozenset[str]) -> list[str]:
    """Where ``second`` differs from ``first`` (empty when they agree), first difference first."""
    found = []
    if (first.refused is None) != (second.refused is None):
        return [f"the reset was refused once only ({first.refused or second.refused})"]
    start = field_difference(first.first, second.first, volatile)
    if start:
        found.append(f"first observation: {start}")
    if first.first_reward != second.first_reward:
        found.append(f"reset reward {_g(first.first_reward)} then {_g(second.first_reward)}")
    for number, (one, two) in enumerate(zip(first.steps, second.steps, strict=False), 1):
        found += [f"step {number}: {what}" for what in _step_difference(one, two, volatile)]
    if len(first.steps) != len(second.steps):
        found.append(f"{len(first.steps)} steps then {len(second.steps)}")
    return found


def _step_difference(one: Step, two: Step, volatile: frozenset[str]) -> list[str]:
    if (one.refused is None) != (two.refused is None):
        return [f"refused once only ({short(one.refused or two.refused)})"]
    found = []
    observed = field_difference(one.observation, two.observation, volatile)
    if observed:
        found.append(f"observation {observed}")
    if one.reward != two.reward:
        same = " for the same observation" if not observed else ""
        found.append(f"reward {_g(one.reward)} then {_g(two.reward)}{same}")
    if one.done != two.done:
        found.append(f"done {one.done} then {two.done}")
    return found


def field_difference(
    one: dict[str, Any] | None, two: dict[str, Any] | None, volatile: frozenset[str]
) -> str:
    """The first field where two observations differ, as ``name: A then B`` ("" if none)."""
    one, two = one or {}, two or {}
    for name in sorted(set(one) | set(two)):
        if name in volatile:
            continue
        if _canonical(one.get(name)) != _canonical(two.get(name)):
            return f"{name}: {short(one.get(name))} then {short(two.get(name))}"
    return ""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _g(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


def short(value: Any, limit: int = 80) -> str:
    """``value`` as JSON, cut to ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
