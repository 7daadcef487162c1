"""Utility metrics of a release with blanked cells (cell suppression, AG_CS and _CS).

Under cell suppression no row is removed: some cells show the hierarchy's root
instead of their generalized value, and classes are the groups of rows that
show the same values. Each metric keeps its definition
(:mod:`kanonym.metrics.utility`), applied cell by cell:

* ``loss`` (Iyengar 2002): a blanked cell costs 1, like a suppressed one; the
  rest cost their generalization's (M_g - 1)/(M - 1). Weighted mean over cells.
* ``entropy`` (non-uniform entropy, Gionis & Tassa 2009): a blanked cell of
  original value v costs log2(n / cnt(v)), its value generalized to the root.
* ``precision`` (Sweeney 2002): a blanked cell counts as climbed to the top of
  its hierarchy (level/height 1); ``1 - precision`` is the weighted mean over
  cells of level/height, computed exactly like the metric itself (so equal
  values stay equal floats, see :mod:`kanonym.metrics.ranking`).
* ``dm-star`` and ``dm`` (Bayardo & Agrawal 2005): the sum over released
  classes of size^2 (nothing is removed, so DM's penalty term is 0 and both agree).
* ``aecs`` (LeFevre et al. 2006): rows per released class over k.
* ``height``: the weighted sum of levels; blanking is not a generalization step.
* ``arx-loss`` (ARX's Loss): a blanked cell costs 1, like a suppressed record's cell.

Blanking only adds cost, and released classes are unions of the node's
classes, so each metric's lower bounds for a node (and its generalizations)
still hold.

Example (one class of two rows at level 0 with one cell blanked; value losses 0):
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode, FrequencySet
    >>> from kanonym.metrics import MetricContext, Loss
    >>> h = Hierarchy("x", (("a", "b"), ("*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b", "b"]}), {"x": h})
    >>> fs = enc.frequency_set
    >>> ctx = MetricContext(encoded=enc, frequency_set=fs)
    >>> view = CellView(sizes=np.array([2, 2]), codes=np.array([[0], [1]]),
    ...                 blanked=np.array([[False], [True]]), released_sizes=np.array([2, 2]))
    >>> cell_score(Loss(ctx), (0,), view)
    0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.lattice import Node
from kanonym.metrics.base import ClassView, UtilityMetric
from kanonym.metrics.utility import (
    ArxLoss,
    AverageClassSize,
    AverageEquivalenceClassSize,
    Discernibility,
    DiscernibilityStar,
    Height,
    Loss,
    NonUniformEntropy,
    Precision,
)

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class CellView:
    """A node's classes with blanked cells, as a metric sees them.

    Attributes:
        sizes: rows per class of the node.
        codes: ``(classes, attributes)``: each class's codes at the node's levels.
        blanked: ``(classes, attributes)``: cells shown as the root instead.
        released_sizes: rows per class of the released table.
    """

    sizes: IntArray
    codes: IntArray
    blanked: npt.NDArray[np.bool_]
    released_sizes: IntArray

    def unsuppressed(self) -> ClassView:
        """The node's classes as if nothing were blanked or removed."""
        return ClassView(self.sizes, np.ones(len(self.sizes), dtype=np.bool_), lambda: self.codes)

    def blanked_rows(self, attribute: int) -> IntArray:
        """Per class, its rows whose cell of ``attribute`` is blanked."""
        return np.where(self.blanked[:, attribute], self.sizes, 0)


def cell_score(metric: UtilityMetric, node: Node, view: CellView) -> float:
    """``metric``'s value at ``node`` with ``view.blanked`` cells (see the module docstring)."""
    if isinstance(metric, DiscernibilityStar | Discernibility):
        released = view.released_sizes.astype(np.float64)
        return float(np.dot(released, released))
    if isinstance(metric, AverageClassSize):
        if not len(view.released_sizes):
            return math.inf
        return float(view.released_sizes.sum()) / len(view.released_sizes) / metric.context.k
    if isinstance(metric, AverageEquivalenceClassSize):
        # No row is suppressed: every row is in a released class.
        if not len(view.released_sizes):
            return math.inf
        return int(view.released_sizes.sum()) / len(view.released_sizes)
    if isinstance(metric, ArxLoss):
        per_attribute = [view.blanked_rows(a).astype(np.float64) for a in range(len(node))]
        return metric.blanked_score(node, view.codes, view.sizes, per_attribute)
    base = metric.score(node, view.unsuppressed())
    if isinstance(metric, Height):
        return base
    if isinstance(metric, Loss):
        if not metric.total_weight:
            return 0.0
        # A blanked cell costs 1 instead of its value's loss at the node's level.
        kept_loss = [metric.value_loss[a][level][view.codes[:, a]] for a, level in enumerate(node)]
        extra = math.fsum(
            w * float(np.dot(view.blanked_rows(a), 1.0 - kept_loss[a]))
            for a, w in enumerate(metric.context.weights)
        )
        return base + extra / (metric.context.n_rows * metric.total_weight)
    if isinstance(metric, NonUniformEntropy):
        context = metric.context
        extra = 0.0
        for a, (w, level) in enumerate(zip(context.weights, node, strict=True)):
            generalized = context.level_counts(a, level).astype(np.float64)[view.codes[:, a]]
            extra += w * float(np.dot(view.blanked_rows(a), np.log2(context.n_rows / generalized)))
        return base + extra
    if isinstance(metric, Precision):
        context = metric.context
        if metric.scaled is not None and context.n_rows:
            # Exactly, like the metric itself (ties stay ties): a blanked cell
            # counts at its attribute's top level, the last entry of its table.
            integers, denominator = metric.scaled
            n = context.n_rows
            numerator = 0
            for a, (table, level) in enumerate(zip(integers, node, strict=True)):
                blanked = int(view.blanked_rows(a).sum())
                numerator += table[level] * (n - blanked) + table[-1] * blanked
            return numerator / (n * denominator)
        total = float(sum(context.weights))
        if not total:
            return base
        heights = context.encoded.heights
        extra = math.fsum(
            w * (1.0 - level / height) * float(view.blanked_rows(a).sum())
            for a, (w, level, height) in enumerate(zip(context.weights, node, heights, strict=True))
            if height
        )
        return base + extra / (context.n_rows * total)
    raise TypeError(f"no cell-suppression form of metric {metric.name!r}")


def precision_by_attribute(
    node: Node, heights: tuple[int, ...], names: tuple[str, ...], view: CellView
) -> dict[str, float]:
    """Per quasi-identifier, 1 - the mean over its cells of level/height (blanked cells: 1).

    Example:
        >>> import numpy as np
        >>> view = CellView(sizes=np.array([3, 1]), codes=np.array([[0], [1]]),
        ...                 blanked=np.array([[False], [True]]), released_sizes=np.array([3, 1]))
        >>> precision_by_attribute((1,), (2,), ("zip",), view)
        {'zip': 0.375}
    """
    n_rows = float(view.sizes.sum())
    result = {}
    for a, (name, level, height) in enumerate(zip(names, node, heights, strict=True)):
        if not height or not n_rows:
            result[name] = 1.0
            continue
        blanked = float(view.blanked_rows(a).sum())
        climbed = (level / height) * (n_rows - blanked) + blanked
        result[name] = 1.0 - climbed / n_rows
    return result
