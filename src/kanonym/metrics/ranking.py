"""How searches compare utility scores: which scores tie, and which node wins a tie.

Definition. Lower scores are better. Two kinds of metric:

* metrics with *exact scores* (:attr:`UtilityMetric.exact_scores`: ``height``,
  ``precision``, ``dm``, ``dm-star``, ``aecs``): every score is a rational
  number (weights read as the decimals they are written as, e.g. 0.3 is
  3/10) rounded once to the nearest float. Equal values are then equal
  floats, and rounding never inverts the order of two values, so scores tie
  when they are equal and are otherwise compared as they are. (Only values
  closer than one part in 2**53 could round to one float and tie.) DM and DM*
  are integers, exact while ``n^2 < 2**53``; height and precision are exact
  while their weights, scaled to integers, stay below 2**53 (weights written
  with a few decimals do). Past either limit a metric's scores compare with
  the tolerance below.
* the others (``loss``, ``entropy``: sums of logarithms, or of many float
  products whose rounding depends on the order of the terms) compare with a
  relative tolerance, :data:`SCORE_TOLERANCE` (1e-12): a score ``s`` ties the
  lowest score ``m`` when ``s <= m + 1e-12 * |m|``.

The chosen node is the lexicographically smallest distance vector among the
satisfying nodes whose score ties the lowest score (the rule the documentation's metrics page
promises; Samarati 2001, "Protecting respondents' identities in microdata
release", leaves the choice among equally good minimal generalizations to a
preference criterion, and this one makes the answer reproducible). Under a
monotone metric a tied generalization never wins: it is lexicographically
larger than its specialization, so searches may still skip non-minimal nodes.

A lower bound prunes a node only when it exceeds the lowest score by more than
twice the tolerance, ``2e-12 * |m|``: a node within the tolerance ties, and a
bound computed another way than the score (``loss``'s over all rows, DM*'s
``n^2 / classes``) may lie a few rounding steps above an equal score.

Example (0.1 + 0.2 rounds above 0.3, yet under a tolerance they tie, and the
smaller vector wins):
    >>> from types import SimpleNamespace as N
    >>> best_of([N(node=(1, 0, 0), score=0.3), N(node=(0, 1, 1), score=0.1 + 0.2)],
    ...         SCORE_TOLERANCE).node
    (0, 1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final, Generic, Protocol, TypeVar

from kanonym.lattice import Node
from kanonym.metrics.base import UtilityMetric

SCORE_TOLERANCE: Final = 1e-12
"""Relative difference within which two scores of a metric without exact scores tie."""


class Scored(Protocol):
    """A node with its metric score (e.g. :class:`kanonym.search.NodeEvaluation`)."""

    @property
    def node(self) -> Node: ...

    @property
    def score(self) -> float | None: ...


T = TypeVar("T", bound=Scored)


def score_tolerance(metric: UtilityMetric) -> float:
    """The relative tolerance within which ``metric``'s scores tie: 0 for exact scores."""
    return 0.0 if metric.exact_scores else SCORE_TOLERANCE


def tie_limit(lowest: float, tolerance: float) -> float:
    """The highest score that ties ``lowest``: ``lowest + tolerance * |lowest|``.

    Example:
        >>> tie_limit(0.3, SCORE_TOLERANCE) >= 0.1 + 0.2 > tie_limit(0.3, 0.0)
        True
    """
    # Exact scores need no margin, and an infinite lowest score none either (0 * inf is nan).
    return lowest if not tolerance or math.isinf(lowest) else lowest + tolerance * abs(lowest)


def ties_lowest(score: float, lowest: float, tolerance: float) -> bool:
    """Whether ``score`` ties ``lowest``, the lowest score seen (``score >= lowest``).

    Example:
        >>> ties_lowest(0.1 + 0.2, 0.3, SCORE_TOLERANCE), ties_lowest(0.1 + 0.2, 0.3, 0.0)
        (True, False)
    """
    return score <= tie_limit(lowest, tolerance)


def prune_limit(lowest: float) -> float:
    """The bound above which a node cannot tie ``lowest`` (see the module docstring)."""
    return tie_limit(lowest, 2 * SCORE_TOLERANCE)


def _score(candidate: Scored) -> float:
    score = candidate.score
    if score is None:
        raise ValueError(f"node {candidate.node} has no score to rank by")
    return score


class Leader(Generic[T]):
    """The winner among scored nodes offered one at a time, and the lowest score.

    Keeps every node offered that ties the lowest score so far, so that the
    winner does not depend on the order of the offers: a later, lower score
    can leave an earlier node out of the tie.

    Attributes:
        lowest: the lowest score offered (None before any offer).
        best: the winner so far: the smallest vector among those tying ``lowest``.
        limit: :func:`prune_limit` of ``lowest``, kept for searches that read
            it for every node (None before any offer).
    """

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        self.lowest: float | None = None
        self.best: T | None = None
        self.limit: float | None = None
        self._tie_limit = math.inf
        self._tied: list[T] = []

    def offer(self, candidate: T) -> None:
        """Take ``candidate`` (which must have a score) into account."""
        score = _score(candidate)
        if not score <= self._tie_limit:
            # Most offers: no better than the incumbent, and no tie (nor nan).
            return
        lowest = self.lowest
        if lowest is None or score < lowest:
            self.lowest = score
            self.limit = prune_limit(score)
            self._tie_limit = tie_limit(score, self.tolerance)
            self._tied = [c for c in self._tied if _score(c) <= self._tie_limit]
            self._tied.append(candidate)
            self.best = min(self._tied, key=lambda c: c.node)
        else:
            self._tied.append(candidate)
            assert self.best is not None
            if candidate.node < self.best.node:
                self.best = candidate


def best_of(candidates: Iterable[T], tolerance: float) -> T | None:
    """The winner among ``candidates`` (None if there are none)."""
    leader: Leader[T] = Leader(tolerance)
    for candidate in candidates:
        leader.offer(candidate)
    return leader.best


def ranked(candidates: Iterable[T], tolerance: float) -> list[T]:
    """``candidates`` best first: the winner, then the rest by score and vector."""
    pool = list(candidates)
    best = best_of(pool, tolerance)
    rest = sorted((c for c in pool if c is not best), key=lambda c: (_score(c), c.node))
    return [] if best is None else [best, *rest]
