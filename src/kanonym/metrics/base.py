"""The protocol every utility metric implements, and what metrics may read.

A utility metric scores a generalization: lower is better (information loss).
Searches use three things from a metric:

* ``score``: the exact value for a checked node, from its classes;
* ``node_bounds``: optionally, a lower bound for every node of the lattice at
  once, computed from the levels alone, that never decreases under
  generalization (so a node whose bound exceeds the best score found can be
  skipped together with all its generalizations);
* ``inherited_bound``: optionally, a value computed from a checked node's
  classes that bounds from below the score of every generalization of it.

Each metric also declares whether it is *monotone*: whether generalizing never
lowers the score, with and without tuple suppression. For a monotone metric the
optimum is always a minimal satisfying node, which lets searches stop early.
And whether its scores are *exact* (``exact_scores``): rationals rounded once,
so that equal values are equal floats; :mod:`kanonym.metrics.ranking` says how
searches compare scores, and which node wins a tie.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np
import numpy.typing as npt
from numba import njit

from kanonym.encode import EncodedTable, FrequencySet
from kanonym.lattice import Node

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@njit(cache=True, nogil=True)
def class_totals(
    sizes: IntArray, satisfied: npt.NDArray[np.bool_]
) -> tuple[int, int, float, float]:
    """Rows in failing classes, passing classes, and ``sum(|E|^2)`` over all
    classes and over passing ones, in one pass (NumPy's masked sums cost about
    four times more on the many classes of nodes low in the lattice).

    Example:
        >>> class_totals(np.array([3, 1, 2]), np.array([True, False, True]))
        (1, 2, 14.0, 13.0)
    """
    suppressed = 0
    released = 0
    squares = 0.0
    released_squares = 0.0
    for c in range(sizes.shape[0]):
        size = sizes[c]
        square = float(size) * float(size)
        squares += square
        if satisfied[c]:
            released += 1
            released_squares += square
        else:
            suppressed += size
    return suppressed, released, squares, released_squares


@dataclass(frozen=True, eq=False)
class ClassView:
    """The classes of one node, as a metric sees them.

    Attributes:
        sizes: rows per equivalence class (suppressed classes included).
        satisfied: per class, whether it satisfies the privacy models (is kept).
        class_codes: computes :attr:`codes`; called at most once, and only by
            metrics that read values (most need the sizes alone).
    """

    sizes: IntArray
    satisfied: npt.NDArray[np.bool_]
    class_codes: Callable[[], IntArray]

    @cached_property
    def codes(self) -> IntArray:
        """``(classes, attributes)``: each class's value code per quasi-identifier
        at the node's levels (dense codes of ``EncodedAttribute.level_labels``)."""
        return self.class_codes()

    @cached_property
    def _totals(self) -> tuple[int, int, float, float]:
        return class_totals(self.sizes, self.satisfied)

    @property
    def suppressed_rows(self) -> int:
        """Rows in classes that fail the models."""
        return self._totals[0]

    @property
    def released_classes(self) -> int:
        """Classes that satisfy the models."""
        return self._totals[1]

    @property
    def sum_of_squares(self) -> float:
        """``sum(|E|^2)`` over all classes (DM*)."""
        return self._totals[2]

    @property
    def released_sum_of_squares(self) -> float:
        """``sum(|E|^2)`` over the classes that satisfy the models (DM's released part)."""
        return self._totals[3]


@dataclass(frozen=True, eq=False)
class MetricContext:
    """What a metric may precompute from.

    Attributes:
        encoded: the encoded quasi-identifiers (hierarchies, per-row codes).
        frequency_set: distinct tuples and counts.
        k: the k of the job (for C_AVG).
        weights: one weight per quasi-identifier, in order (default all 1).
    """

    encoded: EncodedTable
    frequency_set: FrequencySet
    k: int = 1
    weights: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.weights:
            object.__setattr__(self, "weights", (1.0,) * len(self.encoded.attributes))
        if len(self.weights) != len(self.encoded.attributes):
            raise ValueError("one weight per quasi-identifier is needed")

    @property
    def n_rows(self) -> int:
        """Rows of the input table."""
        return self.encoded.n_rows

    def level_counts(self, attribute: int, level: int) -> IntArray:
        """Rows per generalized value of ``attribute`` at ``level`` (by dense code)."""
        a = self.encoded.attributes[attribute]
        return np.bincount(
            a.level_maps[level], weights=self.leaf_counts[attribute], minlength=a.cardinality(level)
        ).astype(np.int64)

    @cached_property
    def leaf_counts(self) -> tuple[IntArray, ...]:
        """Rows per original value of each quasi-identifier (by dense code)."""
        fs = self.frequency_set
        return tuple(
            np.bincount(fs.codes[:, j], weights=fs.counts, minlength=a.cardinality(0)).astype(
                np.int64
            )
            for j, a in enumerate(self.encoded.attributes)
        )


class UtilityMetric(Protocol):
    """A utility metric bound to one dataset (see module docstring)."""

    @property
    def name(self) -> str:
        """The name used on the command line and in reports, e.g. ``"dm-star"``."""
        ...

    @property
    def monotone_with_suppression(self) -> bool:
        """Generalizing never lowers the score when failing classes are suppressed."""
        ...

    @property
    def monotone_without_suppression(self) -> bool:
        """Generalizing never lowers the score when nothing is suppressed."""
        ...

    @property
    def exact_scores(self) -> bool:
        """Every score is an exact rational rounded once to the nearest float.

        Equal values are then equal floats and rounding never inverts two
        values, so searches compare such scores as they are; the scores of
        other metrics tie within :data:`kanonym.metrics.ranking.SCORE_TOLERANCE`.
        """
        ...

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """Lower bounds for the nodes whose levels are the rows of ``levels``, or None."""
        ...

    def inherited_bound(self, classes: ClassView) -> float | None:
        """A lower bound on the score of every generalization of the node, or None."""
        ...

    def score(self, node: Node, classes: ClassView) -> float:
        """The metric's value for ``node`` (lower is better)."""
        ...
