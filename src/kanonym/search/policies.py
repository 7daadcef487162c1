"""Preference policies for choosing among minimal generalizations.

Samarati & Sweeney (1998, section 5, "Preferred generalizations") list policies
a data holder may apply when several k-minimal generalizations exist:

* ``min-absolute-distance``: fewest generalization steps in total,
  ``sum(d_i)``.
* ``min-relative-distance``: fewest relative steps, each step divided by the
  height of its hierarchy, ``sum(d_i / h_i)``.
* ``max-distribution``: most distinct tuples; kanonym counts the distinct
  quasi-identifier tuples of the released table, after suppression.
* ``min-suppression``: fewest suppressed tuples.

Ties are broken by one rule everywhere: the lexicographically smallest
distance vector wins. Relative distances are compared as exact fractions, so
ties are real ties, not floating-point accidents.

Example:
    >>> from kanonym.evaluation.evaluator import NodeEvaluation
    >>> a = NodeEvaluation((1, 0), 2, 2, True)
    >>> b = NodeEvaluation((0, 1), 2, 3, True)
    >>> [e.node for e in rank([a, b], "min-relative-distance", (1, 2))]
    [(0, 1), (1, 0)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction

from kanonym.evaluation.evaluator import NodeEvaluation

Heights = tuple[int, ...]


def _absolute(e: NodeEvaluation, heights: Heights) -> Fraction:
    return Fraction(sum(e.node))


def _relative(e: NodeEvaluation, heights: Heights) -> Fraction:
    # A hierarchy of height 0 admits no step, so it contributes nothing.
    return sum(
        (Fraction(d, h) for d, h in zip(e.node, heights, strict=True) if h),
        start=Fraction(0),
    )


def _distribution(e: NodeEvaluation, heights: Heights) -> Fraction:
    return Fraction(-e.released_classes)


def _suppression(e: NodeEvaluation, heights: Heights) -> Fraction:
    return Fraction(e.suppressed_rows)


POLICIES: dict[str, Callable[[NodeEvaluation, Heights], Fraction]] = {
    "min-absolute-distance": _absolute,
    "min-relative-distance": _relative,
    "max-distribution": _distribution,
    "min-suppression": _suppression,
}
DEFAULT_POLICY = "min-relative-distance"


def rank(
    solutions: Iterable[NodeEvaluation], policy: str, heights: Heights
) -> list[NodeEvaluation]:
    """Order ``solutions`` best first by ``policy``, ties by smallest vector."""
    cost = POLICIES[policy]
    return sorted(solutions, key=lambda e: (cost(e, heights), e.node))
