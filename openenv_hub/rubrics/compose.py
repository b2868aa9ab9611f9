"""Rubrics made of rubrics: weighted sums, all-of, any-of and gates.

Each composite names its children in the reward breakdown (``"parent.child"``). A composite
holding a trajectory rubric is itself delayed: on steps before the end, that child counts at its
intermediate value. A composite's :attr:`~openenv_hub.rubrics.Rubric.range` follows from its
parts' ranges (a weighted sum of rubrics in [0, 1] with weights 0.5 and 0.25 lies in
[0, 0.75]), unless it is given one.

Example:
    >>> from openenv_hub.rubrics import AllOf, Gate, WeightedSum, rubric
    >>> @rubric
    ... def valid(action) -> float:
    ...     return 1.0 if action["move"] in ("hit", "stand") else 0.0
    >>> @rubric
    ... def bold(action) -> float:
    ...     return 1.0 if action["move"] == "hit" else 0.0
    >>> from openenv_hub.rubrics import Step, Trajectory
    >>> from openenv_hub import Observation
    >>> step = Step(action={"move": "hit"}, observation=Observation())
    >>> Gate(valid, WeightedSum([bold, valid], weights=[0.5, 0.25])).evaluate_sync(Trajectory([step])).reward
    0.75

Layer: model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from openenv_hub.errors import ConfigurationError
from openenv_hub.rubrics.base import Rubric, Step, _Evaluation

__all__ = ["AllOf", "AnyOf", "Gate", "WeightedSum"]


def _named(rubrics: Sequence[Rubric] | Mapping[str, Rubric], owner: str) -> dict[str, Rubric]:
    """Children keyed by name; a repeated name gets a suffix (``score``, ``score_2``)."""
    items = list(rubrics.items()) if isinstance(rubrics, Mapping) else [(None, r) for r in rubrics]
    if not items:
        raise ConfigurationError(f"{owner} needs at least one rubric")
    named: dict[str, Rubric] = {}
    for key, child in items:
        if not isinstance(child, Rubric):
            raise ConfigurationError(
                f"{owner} takes rubrics, got {type(child).__name__}; wrap a function with "
                "@rubric or @trajectory_rubric"
            )
        base = key or child.name
        name, n = base, 1
        while name in named:
            n += 1
            name = f"{base}_{n}"
        named[name] = child
    return named


Range = tuple[float, float]


class _Composite(Rubric):
    def __init__(
        self,
        rubrics: Sequence[Rubric] | Mapping[str, Rubric],
        name: str | None,
        range: Range | None = None,
    ) -> None:
        super().__init__(name=name, range=range)
        self._children = _named(rubrics, type(self).__name__)

    @property
    def children(self) -> dict[str, Rubric]:
        return dict(self._children)

    def score(self, step: Step) -> float:
        raise TypeError(f"{type(self).__name__} is evaluated with evaluate(trajectory)")

    async def _values(self, evaluation: _Evaluation, path: str) -> list[float]:
        return [
            await child._evaluate(evaluation, _join(path, name))
            for name, child in self._children.items()
        ]

    async def _evaluate(self, evaluation: _Evaluation, path: str) -> float:
        value = self._combine(await self._values(evaluation, path))
        evaluation.record(path, value)
        return value

    def _combine(self, values: list[float]) -> float:
        raise NotImplementedError


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class WeightedSum(_Composite):
    """``sum(weight_i * score_i)``. Weights default to 1 and need not sum to 1.

    Args:
        rubrics: The parts, as a list (named by their own names) or a ``{name: rubric}`` dict.
        weights: One weight per part, in order.
        name: The key of this sum in breakdowns that contain it.
        range: The ``(low, high)`` its scores lie in; default: the weighted sum of the parts'.
    """

    def __init__(
        self,
        rubrics: Sequence[Rubric] | Mapping[str, Rubric],
        weights: Sequence[float] | None = None,
        *,
        name: str | None = None,
        range: Range | None = None,
    ) -> None:
        super().__init__(rubrics, name, range)
        if weights is None:
            weights = [1.0] * len(self._children)
        if len(weights) != len(self._children):
            raise ConfigurationError(
                f"WeightedSum got {len(self._children)} rubrics and {len(weights)} weights; "
                "give one weight per rubric"
            )
        self.weights = [float(w) for w in weights]

    def _combine(self, values: list[float]) -> float:
        return sum(w * v for w, v in zip(self.weights, values, strict=True))

    def _derived_range(self) -> Range:
        low = high = 0.0
        for weight, child in zip(self.weights, self._children.values(), strict=True):
            if weight == 0:
                continue  # 0 * inf is not a number: a part weighted 0 adds nothing
            ends = (weight * child.range[0], weight * child.range[1])
            low, high = low + min(ends), high + max(ends)
        return low, high


class AllOf(_Composite):
    """The lowest score of its parts: for pass/fail rubrics (0 or 1), 1 only if all pass."""

    def __init__(
        self, *rubrics: Rubric, name: str | None = None, range: Range | None = None
    ) -> None:
        super().__init__(rubrics, name, range)

    def _combine(self, values: list[float]) -> float:
        return min(values)

    def _derived_range(self) -> Range:
        ranges = [child.range for child in self._children.values()]
        return min(r[0] for r in ranges), min(r[1] for r in ranges)


class AnyOf(_Composite):
    """The highest score of its parts: for pass/fail rubrics (0 or 1), 1 if any passes."""

    def __init__(
        self, *rubrics: Rubric, name: str | None = None, range: Range | None = None
    ) -> None:
        super().__init__(rubrics, name, range)

    def _combine(self, values: list[float]) -> float:
        return max(values)

    def _derived_range(self) -> Range:
        ranges = [child.range for child in self._children.values()]
        return max(r[0] for r in ranges), max(r[1] for r in ranges)


class Gate(_Composite):
    """``then``'s score when ``condition`` scores at least ``threshold``, else ``otherwise``.

    ``then`` is not evaluated while the gate is shut, so an expensive rubric (an LLM judge)
    runs only for steps that pass a cheap check. Without ``then``, an open gate is worth
    ``condition``'s own score.

    Args:
        condition: The rubric that opens the gate.
        then: The rubric scored once the gate is open.
        threshold: The lowest score of ``condition`` that opens the gate.
        otherwise: The value while the gate is shut.
        name: The key of this gate in breakdowns that contain it.
        range: The ``(low, high)`` its scores lie in; default: ``otherwise`` and the range of
            what an open gate is worth.
    """

    def __init__(
        self,
        condition: Rubric,
        then: Rubric | None = None,
        *,
        threshold: float = 1.0,
        otherwise: float = 0.0,
        name: str | None = None,
        range: Range | None = None,
    ) -> None:
        super().__init__([condition] if then is None else [condition, then], name, range)
        self._condition, self._then = condition, then
        self.threshold = threshold
        self.otherwise = otherwise

    async def _evaluate(self, evaluation: _Evaluation, path: str) -> float:
        names = list(self._children)
        opened = await self._condition._evaluate(evaluation, _join(path, names[0]))
        if opened < self.threshold:
            value = self.otherwise
        elif self._then is None:
            value = opened
        else:
            value = await self._then._evaluate(evaluation, _join(path, names[1]))
        evaluation.record(path, value)
        return value

    def _derived_range(self) -> Range:
        if self._then is not None:
            low, high = self._then.range
        else:  # an open gate is worth the condition's score, at least the threshold
            low, high = max(self._condition.range[0], self.threshold), self._condition.range[1]
        if low > high:  # the gate can never open
            return self.otherwise, self.otherwise
        return min(low, self.otherwise), max(high, self.otherwise)
