"""Utility metrics for choosing among anonymizations (lower is better).

Each class states its formula and source. All are bound to one dataset through
a :class:`~kanonym.metrics.base.MetricContext`; per-attribute tables are
precomputed once so that scoring a node costs a few array operations.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode, FrequencySet
    >>> from kanonym.metrics.base import MetricContext, ClassView
    >>> h = Hierarchy("x", (("a", "b"), ("*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b"]}), {"x": h})
    >>> fs = enc.frequency_set
    >>> ctx = MetricContext(encoded=enc, frequency_set=fs)
    >>> import numpy as np
    >>> view = ClassView(np.array([3]), np.array([True]), lambda: np.array([[0]]))
    >>> DiscernibilityStar(ctx).score((1,), view)
    9.0
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from kanonym.lattice import Node
from kanonym.metrics.base import ClassView, FloatArray, IntArray, MetricContext

# Every integer below this is a float64; sums kept below it convert exactly.
_EXACT_INTEGERS = 2**53


def _level_columns(levels: npt.NDArray[np.int16]) -> npt.NDArray[np.intp]:
    """``levels`` as one contiguous index column per attribute (gathers by a
    strided int16 column cost about twice as much)."""
    return np.ascontiguousarray(levels.T, dtype=np.intp)


def _class_count_bound(context: MetricContext, levels: npt.NDArray[np.int16]) -> FloatArray:
    """For every node, ``n^2 / (most classes it can have)``: a lower bound on DM*.

    Sizes summing to n over C classes have squares summing to at least n^2/C
    (convexity), and a node has at most as many classes as it has combinations
    of generalized values, and no more than the frequency set has tuples. That
    count never grows under generalization, so the bound is monotone.
    """
    columns = _level_columns(levels)
    combinations = np.ones(levels.shape[0], dtype=np.float64)
    for a, attribute in enumerate(context.encoded.attributes):
        per_level = np.array(
            [attribute.cardinality(level) for level in range(attribute.height + 1)],
            dtype=np.float64,
        )
        combinations *= per_level.take(columns[a])
    most_classes = np.minimum(combinations, float(len(context.frequency_set.counts)))
    return float(context.n_rows) ** 2 / most_classes


def _per_level_sums(
    tables: list[list[float]], weights: tuple[float, ...], levels: npt.NDArray[np.int16]
) -> FloatArray:
    """Sum over attributes of ``weights[a] * tables[a][level_a]`` for every row of ``levels``."""
    columns = _level_columns(levels)
    total = np.zeros(levels.shape[0], dtype=np.float64)
    for a, table in enumerate(tables):
        total += weights[a] * np.asarray(table, dtype=np.float64).take(columns[a])
    return total


def decimal_weight(weight: float) -> Fraction:
    """``weight`` as the decimal it is written as: 0.3 is 3/10, not the binary
    float nearest to 3/10, so that weights 0.1 and 0.2 add up to 0.3.

    Example:
        >>> decimal_weight(0.1) + decimal_weight(0.2) == decimal_weight(0.3)
        True
    """
    return Fraction(*_decimal(float(weight)))


@functools.lru_cache(maxsize=1024)
def _decimal(weight: float) -> tuple[int, int]:
    """:func:`decimal_weight` as (numerator, denominator); a handful of distinct
    weights recur across searches, and parsing costs more than the rest of a
    metric's set-up."""
    # repr gives the shortest decimal that reads back as the same float.
    return Fraction(repr(weight)).as_integer_ratio()


def _scaled_steps(
    steps: list[tuple[int, int]], heights: list[int]
) -> tuple[list[list[int]], int] | None:
    """Integer tables ``tables[a][level] = level * steps[a] * denominator`` (each
    step a ``(numerator, denominator)`` pair) and the least common denominator
    that makes them integers.

    None when a node's sum (or the denominator) could reach 2**53: past it,
    float64 no longer holds every integer and the division would round twice.

    Example:
        >>> _scaled_steps([(3, 10), (1, 4)], [1, 2])
        ([[0, 6], [0, 5, 10]], 20)
    """
    denominator = math.lcm(*(den for _, den in steps))
    scaled = [num * (denominator // den) for num, den in steps]
    common = math.gcd(denominator, *scaled)
    denominator //= common
    scaled = [c // common for c in scaled]
    largest = sum(abs(c) * h for c, h in zip(scaled, heights, strict=True))
    if largest >= _EXACT_INTEGERS or denominator >= _EXACT_INTEGERS:
        return None
    tables = [[c * level for level in range(h + 1)] for c, h in zip(scaled, heights, strict=True)]
    return tables, denominator


class _LevelTableMetric:
    """A metric that adds, over attributes, a weighted value per level.

    Such a metric depends on the levels alone: its node bound is its exact
    score, and it is monotone whenever each table never decreases with the
    level. Subclasses fill ``tables[attribute][level]`` (unweighted floats) and,
    when each table is ``level * step`` for a rational step, ``steps`` (height:
    1; precision: ``1 / (height_a * sum of weights)``). The score is then
    computed exactly, weights read as decimals (:func:`decimal_weight`): the
    weighted steps scaled to integers over one common denominator, summed as
    integers, divided once. Equal scores are then equal floats
    (``exact_scores``), whatever the terms: 0.1 + 0.2 ties 0.3.
    """

    monotone_with_suppression = True
    monotone_without_suppression = True

    def __init__(
        self,
        context: MetricContext,
        tables: list[list[float]],
        steps: list[tuple[int, int]] | None = None,
    ) -> None:
        self.context = context
        self.tables = tables
        self.scaled: tuple[list[list[int]], int] | None = None
        if steps is not None:
            weights = [_decimal(w) for w in context.weights]
            self.scaled = _scaled_steps(
                [(p * num, q * den) for (p, q), (num, den) in zip(weights, steps, strict=True)],
                [len(table) - 1 for table in tables],
            )
        self.exact_scores = self.scaled is not None
        self._scaled_arrays: list[IntArray] = (
            [] if self.scaled is None else [np.array(t, dtype=np.int64) for t in self.scaled[0]]
        )

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """The exact score of every node."""
        if self.scaled is None:
            return _per_level_sums(self.tables, self.context.weights, levels)
        columns = _level_columns(levels)
        total = np.zeros(levels.shape[0], dtype=np.int64)
        for a, table in enumerate(self._scaled_arrays):
            total += table.take(columns[a])
        # Below 2**53 both convert exactly: one correctly rounded division, as in score().
        return total / float(self.scaled[1])

    def inherited_bound(self, classes: ClassView) -> float | None:
        """None: the node bound is already exact."""
        return None

    def score(self, node: Node, classes: ClassView) -> float:
        """Weighted sum over attributes of the table value at the node's level.

        Computed as :meth:`node_bounds` computes it, so that the bound equals
        the score exactly: a bound one rounding step above the score would
        prune an optimal node that ties with the incumbent.
        """
        if self.scaled is not None:
            integers, denominator = self.scaled
            numerator = sum(t[level] for t, level in zip(integers, node, strict=True))
            # int / int below 2**53: float(numerator) / float(denominator), rounded once.
            return numerator / denominator
        total = 0.0
        for w, t, level in zip(self.context.weights, self.tables, node, strict=True):
            total += w * t[level]
        return total


class DiscernibilityStar:
    """DM*: the sum of squared sizes of all classes, suppressed rows counted in their classes.

    ``DM* = sum over every equivalence class E of |E|^2``. This is ARX's
    monotonic variant of the discernibility metric (Bayardo & Agrawal 2005,
    "Data privacy through optimal k-anonymization"; Kohlmayer et al. 2012,
    "Flash"), monotone with and without suppression because merging classes
    only grows the sum of squares. Its value at a node bounds from below its
    value at every generalization. An integer, exact in float64 (``exact_scores``)
    while ``n^2 < 2^53`` (n below 94 million rows).
    """

    name = "dm-star"
    monotone_with_suppression = True
    monotone_without_suppression = True

    def __init__(self, context: MetricContext) -> None:
        self.context = context
        self.exact_scores = context.n_rows**2 < _EXACT_INTEGERS

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """``n^2`` over the most classes each node can have (see ``_class_count_bound``)."""
        return _class_count_bound(self.context, levels)

    def inherited_bound(self, classes: ClassView) -> float | None:
        """DM* itself, since it is monotone."""
        return classes.sum_of_squares

    def score(self, node: Node, classes: ClassView) -> float:
        """``sum(|E|^2)`` over all classes."""
        return classes.sum_of_squares


class Discernibility:
    """DM (Bayardo & Agrawal 2005): released rows cost their class size, suppressed rows n.

    ``DM = sum over released classes E of |E|^2 + n * (suppressed rows)``.
    Not monotone with suppression (generalizing can release suppressed rows
    into large classes, or keep them suppressed); monotone without. Because a
    suppressed class of s < k <= n rows costs n*s >= s^2, DM >= DM*, so the
    DM* of a checked node bounds the DM of all its generalizations. An integer
    of at most ``n^2``, exact in float64 (``exact_scores``) while ``n^2 < 2^53``.
    """

    name = "dm"
    monotone_with_suppression = False
    monotone_without_suppression = True

    def __init__(self, context: MetricContext) -> None:
        self.context = context
        self.exact_scores = context.n_rows**2 < _EXACT_INTEGERS

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """DM*'s bound, since DM >= DM*."""
        return _class_count_bound(self.context, levels)

    def inherited_bound(self, classes: ClassView) -> float | None:
        """DM* of the node, a lower bound on DM of every generalization."""
        return classes.sum_of_squares

    def score(self, node: Node, classes: ClassView) -> float:
        """``sum(|E|^2 for kept E) + n * suppressed``."""
        return classes.released_sum_of_squares + self.context.n_rows * classes.suppressed_rows


class NonUniformEntropy(_LevelTableMetric):
    """Non-uniform entropy (Gionis & Tassa 2009; ARX's precomputed entropy metric).

    For each quasi-identifier and each original value v,
    ``cnt(v) * log2(cnt(g(v)) / cnt(v))``, summed, where g(v) is v generalized
    to the node's level and counts are over the whole input (suppression does
    not change it). It depends on the levels alone, so it is its own exact,
    monotone lower bound. Attribute weights multiply each attribute's part.
    Logarithms are not rationals: scores tie within
    :data:`~kanonym.metrics.ranking.SCORE_TOLERANCE`.
    """

    name = "entropy"

    def __init__(self, context: MetricContext) -> None:
        tables: list[list[float]] = []
        for a, attribute in enumerate(context.encoded.attributes):
            leaf = context.level_counts(a, 0).astype(np.float64)
            per_level = []
            for level in range(attribute.height + 1):
                generalized = context.level_counts(a, level).astype(np.float64)
                # A value of a population absent from its sample (count 0) adds nothing.
                held = leaf > 0
                ratio = generalized[attribute.level_maps[level]][held] / leaf[held]
                per_level.append(float(np.sum(leaf[held] * np.log2(ratio))))
            tables.append(per_level)
        super().__init__(context, tables)


class Loss:
    """Iyengar's loss metric LM (Iyengar 2002, "Transforming data to satisfy privacy constraints").

    A cell generalized to a value covering M_g of the M distinct values the
    column has in the data costs ``(M_g - 1) / (M - 1)`` (0 when M = 1); a
    suppressed cell costs 1. LM is the weighted mean over all cells, in [0, 1].
    Not monotone with suppression; monotone without. Its generalization part
    over all rows, suppressed or not, is a monotone lower bound (a suppressed
    cell's cost of 1 is at least its generalization cost). Its float sums round
    by the order of their terms: scores tie within
    :data:`~kanonym.metrics.ranking.SCORE_TOLERANCE`.
    """

    name = "loss"
    monotone_with_suppression = False
    monotone_without_suppression = True
    exact_scores = False

    def __init__(self, context: MetricContext) -> None:
        self.context = context
        self.total_weight = float(sum(context.weights))
        # value_loss[a][level][code]: the loss of one cell holding that value.
        self.value_loss: list[list[FloatArray]] = []
        self.tables: list[list[float]] = []
        for a, attribute in enumerate(context.encoded.attributes):
            distinct = attribute.cardinality(0)
            per_level = []
            per_level_total = []
            for level in range(attribute.height + 1):
                leaves_under = np.bincount(
                    attribute.level_maps[level], minlength=attribute.cardinality(level)
                )
                value_loss = (
                    (leaves_under - 1) / (distinct - 1)
                    if distinct > 1
                    else np.zeros(len(leaves_under))
                ).astype(np.float64)
                per_level.append(value_loss)
                per_level_total.append(float(np.dot(value_loss, context.level_counts(a, level))))
            self.value_loss.append(per_level)
            self.tables.append(per_level_total)

    def _normalizer(self) -> float:
        return self.context.n_rows * self.total_weight

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """Generalization loss of all rows, as if none were suppressed."""
        if not self.total_weight:
            return np.zeros(levels.shape[0])
        return _per_level_sums(self.tables, self.context.weights, levels) / self._normalizer()

    def inherited_bound(self, classes: ClassView) -> float | None:
        """None: the node bound serves."""
        return None

    def score(self, node: Node, classes: ClassView) -> float:
        """Weighted mean cell loss, suppressed cells costing 1."""
        if not self.total_weight:
            return 0.0
        # Every row of a class holds the same values, so cell losses add up per class.
        class_loss = np.zeros(len(classes.sizes), dtype=np.float64)
        for a, (w, per_level, level) in enumerate(
            zip(self.context.weights, self.value_loss, node, strict=True)
        ):
            class_loss += w * per_level[level][classes.codes[:, a]]
        kept = np.where(classes.satisfied, classes.sizes, 0).astype(np.float64)
        total = float(np.dot(class_loss, kept)) + self.total_weight * classes.suppressed_rows
        return total / self._normalizer()


class Precision(_LevelTableMetric):
    """Precision loss, ``1 - Prec`` (Sweeney 2002, "Achieving k-anonymity privacy protection").

    ``1 - Prec = (sum over QIs of w_a * level_a / height_a) / sum(w_a)``;
    suppression is not counted. It depends on the levels alone and is
    monotone. Reports show ``precision`` itself (1 minus this score). Computed
    exactly (weights as decimals), so that equal values tie: with four
    height-3 hierarchies, [2, 2, 1, 1] and [0, 0, 3, 3] both score 1/2.

    Example:
        >>> import polars as pl
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.encode import encode
        >>> h = Hierarchy("x", (("a", "b"), ("ab", "ab"), ("c", "c"), ("*", "*")))
        >>> enc = encode(pl.DataFrame({q: ["a", "b"] for q in "pqrs"}), dict.fromkeys("pqrs", h))
        >>> ctx = MetricContext(encoded=enc, frequency_set=enc.frequency_set)
        >>> view = ClassView(np.array([2]), np.array([True]), lambda: np.zeros((1, 4), np.int64))
        >>> Precision(ctx).score((2, 2, 1, 1), view), Precision(ctx).score((0, 0, 3, 3), view)
        (0.5, 0.5)
    """

    name = "precision"

    def __init__(self, context: MetricContext) -> None:
        total = float(sum(context.weights))
        tables = [
            [
                level / a.height / total if a.height and total else 0.0
                for level in range(a.height + 1)
            ]
            for a in context.encoded.attributes
        ]
        steps = None
        # A weight of inf or nan has no decimal: such scores stay floats.
        if all(math.isfinite(w) for w in context.weights):
            # The decimal total weight P / Q; a level step is then Q / (height * P).
            weights = [_decimal(w) for w in context.weights]
            q = math.lcm(*(den for _, den in weights))
            p = sum(num * (q // den) for num, den in weights)
            steps = [
                (q, a.height * p) if a.height and p else (0, 1) for a in context.encoded.attributes
            ]
        super().__init__(context, tables, steps)


class _ClassSizeMetric:
    """A metric of class sizes alone (C_AVG, ARX's AECS): one correctly rounded
    division, no bound before the classes are known; not monotone with suppression
    (generalizing can release more rows), monotone without (classes only merge)."""

    monotone_with_suppression = False
    monotone_without_suppression = True
    exact_scores = True

    def __init__(self, context: MetricContext) -> None:
        self.context = context

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """None: it needs the classes."""
        return None

    def inherited_bound(self, classes: ClassView) -> float | None:
        """None."""
        return None


class AverageClassSize(_ClassSizeMetric):
    """C_AVG, the normalized average equivalence-class size (LeFevre, DeWitt & Ramakrishnan 2006).

    ``C_AVG = (released rows / released classes) / k``; infinite when nothing is
    released. Not monotone with suppression (generalizing can release more
    rows); monotone without (classes only merge). Each division is correctly
    rounded, so equal ratios give equal floats (``exact_scores``).
    """

    name = "aecs"

    def score(self, node: Node, classes: ClassView) -> float:
        """Released rows per released class, over k."""
        kept = classes.sizes[classes.satisfied]
        if not len(kept):
            return math.inf
        return float(kept.sum()) / len(kept) / self.context.k


class Height(_LevelTableMetric):
    """Generalization height: the weighted sum of levels (Samarati 2001's absolute distance).

    ``height = sum over QIs of w_a * level_a``. Depends on the levels alone;
    monotone. Computed exactly, weights read as decimals, so that with weights
    0.3, 0.1 and 0.2 the nodes [1, 0, 0] and [0, 1, 1] both score 0.3.
    """

    name = "height"

    def __init__(self, context: MetricContext) -> None:
        tables = [
            [float(level) for level in range(a.height + 1)] for a in context.encoded.attributes
        ]
        finite = all(math.isfinite(w) for w in context.weights)
        super().__init__(context, tables, [(1, 1)] * len(tables) if finite else None)


class NonMonotonicEntropy(NonUniformEntropy):
    """ARX's non-monotonic non-uniform entropy (Prasser, Bild & Kuhn 2016; Gionis & Tassa 2009).

    Non-uniform entropy (:class:`NonUniformEntropy`) of the node's levels,
    plus, for the suppressed rows, what releasing them as ``*`` loses beyond
    that: per quasi-identifier, the entropy of the suppressed rows' values at
    the node's levels, ``sum over values v of c_v * log2(S / c_v)`` for S
    suppressed rows of which c_v hold v. This is ARX's
    ``createEntropyMetric(false)`` ("Non-monotonic non-uniform entropy",
    F. Prasser, R. Bild, K. Kuhn, "A generic method for assessing the quality
    of de-identified health data", Stud Health Technol Inform 228, 2016),
    which its tests score with. Not monotone with suppression (generalizing
    can suppress fewer rows); without suppression it is the monotone entropy.
    Attribute weights multiply each attribute's part.

    Example (no row suppressed: the monotone entropy; 2 suppressed rows with
    different values add 2 bits):
        >>> import polars as pl
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.encode import encode
        >>> h = Hierarchy("x", (("a", "b", "c"), ("*",) * 3))
        >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b", "c"]}), {"x": h})
        >>> ctx = MetricContext(encoded=enc, frequency_set=enc.frequency_set)
        >>> m = NonMonotonicEntropy(ctx)
        >>> kept = ClassView(np.array([2, 1, 1]), np.array([True, True, True]),
        ...                  lambda: np.array([[0], [1], [2]]))
        >>> some = ClassView(np.array([2, 1, 1]), np.array([True, False, False]),
        ...                  lambda: np.array([[0], [1], [2]]))
        >>> m.score((0,), kept), m.score((0,), some)
        (0.0, 2.0)
    """

    name = "non-monotonic-entropy"
    monotone_with_suppression = False
    monotone_without_suppression = True

    def __init__(self, context: MetricContext) -> None:
        super().__init__(context)
        # The monotone part is no exact rational, and neither is the sum.
        self.exact_scores = False

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """The monotone entropy: the suppressed rows' part is never negative."""
        return super().node_bounds(levels)

    def score(self, node: Node, classes: ClassView) -> float:
        """The monotone entropy plus the suppressed rows' entropy per attribute."""
        total = super().score(node, classes)
        failing = ~classes.satisfied
        suppressed = float(classes.sizes[failing].sum())
        if not suppressed:
            return total
        codes = classes.codes[failing]
        sizes = classes.sizes[failing].astype(np.float64)
        for a, weight in enumerate(self.context.weights):
            counts = np.bincount(codes[:, a], weights=sizes)
            counts = counts[counts > 0]
            total += weight * float(np.sum(counts * np.log2(suppressed / counts)))
        return total


class AverageEquivalenceClassSize(_ClassSizeMetric):
    """ARX's average equivalence class size (AECS; LeFevre, DeWitt & Ramakrishnan 2006).

    ``AECS = rows / classes``, every row of the input counted and the
    suppressed rows, released as ``*``, counted as one class of their own:
    ARX's ``createAECSMetric()`` ("Average equivalence class size"), which its
    tests score with. kanonym's ``aecs`` (:class:`AverageClassSize`) is
    LeFevre et al.'s normalized C_AVG over the released rows alone. Not
    monotone with suppression; monotone without (classes only merge). One
    correctly rounded division (``exact_scores``).

    Example (4 rows: a kept class of 2, two suppressed rows, one class more):
        >>> view = ClassView(np.array([2, 1, 1]), np.array([True, False, False]),
        ...                  lambda: np.zeros((3, 1), np.int64))
        >>> AverageEquivalenceClassSize(None).score((0,), view)  # type: ignore[arg-type]
        2.0
    """

    name = "average-class-size"

    def score(self, node: Node, classes: ClassView) -> float:
        """All rows over the released classes plus one for the suppressed rows."""
        released = classes.released_classes + (1 if classes.suppressed_rows else 0)
        return int(classes.sizes.sum()) / released


_ARX_STEP = 1e-10
"""The step of ARX's rounding (:func:`_arx_round`)."""


def _arx_round(value: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """ARX's ``Metric.round``: ``floor(x * 1e10) / 1e10``, per attribute."""
    return np.floor(value * 1e10) / 1e10


class ArxLoss:
    """ARX's Loss metric (``Metric.createLossMetric()``; Iyengar 2002, as ARX computes it).

    Per quasi-identifier j, a kept record whose value w covers a share
    ``share_j(w)`` of its hierarchy's leaves (leaves under w over all leaves
    of the hierarchy, whether in the data or not) costs that share; a
    suppressed record costs 1. With T records and m_j leaves,
    ``L_j = (sum of costs - T / m_j) / (T - T / m_j)``, clamped at 0 and
    rounded down to 10 decimals as ARX rounds it; the score is the geometric
    mean ``prod_j (1 + L_j)^(1/n) - 1`` over the n quasi-identifiers (ARX's
    ``MetricMDNMLoss`` with gs-factor 0.5, which weighs generalization and
    suppression alike, and its geometric-mean aggregate; attribute weights
    divided by the largest multiply each factor, as ARX's). Not monotone with
    suppression; without, it is. The loss of every record as if kept is its
    bound. Its per-class loss, the same geometric mean of the class's
    ``rows * share_j`` (:meth:`class_losses`), orders the classes a
    sample-based model suppresses, as in ARX.

    Example (one attribute of 4 leaves, generalized in pairs: 4 rows at share
    1/2 cost 2 against a minimum of 1 and a maximum of 4):
        >>> import polars as pl
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.encode import encode
        >>> h = Hierarchy("x", (("a", "b", "c", "d"), ("ab", "ab", "cd", "cd"), ("*",) * 4))
        >>> enc = encode(pl.DataFrame({"x": ["a", "b", "c", "d"]}), {"x": h})
        >>> ctx = MetricContext(encoded=enc, frequency_set=enc.frequency_set)
        >>> view = ClassView(np.array([2, 2]), np.array([True, True]),
        ...                  lambda: np.array([[0], [1]]))
        >>> round(ArxLoss(ctx).score((1,), view), 10)  # (2 - 1) / (4 - 1), cut at 10 places
        0.3333333333
    """

    name = "arx-loss"
    monotone_with_suppression = False
    monotone_without_suppression = True
    exact_scores = False

    def __init__(self, context: MetricContext) -> None:
        self.context = context
        highest = max(context.weights, default=1.0) or 1.0
        self.weights = tuple(w / highest for w in context.weights)
        # shares[a][level][code]: the share of the hierarchy's leaves under that value.
        self.shares: list[list[FloatArray]] = []
        self.leaves: list[int] = []
        # kept[a][level]: the summed share of every record, as if none were suppressed.
        kept: list[list[float]] = []
        for a, attribute in enumerate(context.encoded.attributes):
            hierarchy = attribute.hierarchy
            size = len(hierarchy.leaves)
            per_level = []
            for level, labels in enumerate(attribute.level_labels):
                under: dict[str | None, int] = {}
                for label in hierarchy.levels[level]:
                    under[label] = under.get(label, 0) + 1
                per_level.append(np.array([under[label] / size for label in labels]))
            self.shares.append(per_level)
            self.leaves.append(size)
            kept.append(
                [
                    float(np.dot(context.level_counts(a, level), share))
                    for level, share in enumerate(per_level)
                ]
            )
        self.kept = kept

    def _combine(self, losses: list[npt.NDArray[np.float64]]) -> npt.NDArray[np.float64]:
        """ARX's geometric mean, multiplied in attribute order as ARX does."""
        product = np.ones_like(losses[0]) if losses else np.zeros(0)
        exponent = 1.0 / len(losses) if losses else 0.0
        for loss, weight in zip(losses, self.weights, strict=True):
            product = product * np.power((loss + 1.0) * weight, exponent)
        return np.asarray(product - 1.0)

    def _normalized(self, a: int, total: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        rows = float(self.context.n_rows)
        least = rows / self.leaves[a]
        if rows == least:
            # A hierarchy of one leaf: nothing to lose (ARX would divide 0 by 0).
            return np.zeros_like(total)
        return _arx_round(np.maximum((total - least) / (rows - least), 0.0))

    def node_bounds(self, levels: npt.NDArray[np.int16]) -> FloatArray | None:
        """The loss with every record kept: a suppressed record costs 1, never less."""
        if not self.shares or not self.context.n_rows:
            return None
        columns = _level_columns(levels)
        # The bound sums each level's shares at once, the score each class's: the two
        # floats of an equal loss may differ in the last bits, and ARX's floor at 10
        # decimals can turn that into a whole 1e-10 step up, enough to prune an optimum
        # tied with the incumbent. One step lower keeps the bound under the score.
        losses = [
            np.maximum(
                self._normalized(a, np.asarray(self.kept[a], dtype=np.float64)[columns[a]])
                - _ARX_STEP,
                0.0,
            )
            for a in range(len(self.shares))
        ]
        return self._combine(losses)

    def inherited_bound(self, classes: ClassView) -> float | None:
        """None: the node bound serves."""
        return None

    def class_losses(self, node: Node, codes: IntArray, sizes: IntArray) -> FloatArray:
        """Each class's loss as ARX orders suppression by it: the geometric mean of
        ``rows * share_j`` over the quasi-identifiers (not normalized)."""
        values = [sizes * self.shares[a][level][codes[:, a]] for a, level in enumerate(node)]
        return self._combine([np.asarray(v, dtype=np.float64) for v in values])

    def blanked_score(
        self, node: Node, codes: IntArray, sizes: IntArray, blanked: list[FloatArray]
    ) -> float:
        """The score with no row suppressed but ``blanked[a]`` cells of attribute a per
        class shown as ``*`` (cell suppression): each costs 1, as a suppressed cell."""
        if not self.shares or not self.context.n_rows:
            return 0.0
        losses = []
        for a, level in enumerate(node):
            share = self.shares[a][level][codes[:, a]]
            total = float(np.sum((sizes - blanked[a]) * share)) + float(np.sum(blanked[a]))
            losses.append(self._normalized(a, np.array([total])))
        return float(self._combine(losses)[0])

    def score(self, node: Node, classes: ClassView) -> float:
        """The geometric mean of the attributes' normalized losses."""
        if not self.shares or not self.context.n_rows:
            return 0.0
        sizes = classes.sizes.astype(np.float64)
        suppressed = float(classes.sizes[~classes.satisfied].sum())
        losses = []
        for a, level in enumerate(node):
            share = self.shares[a][level][classes.codes[:, a]]
            total = float(np.sum(np.where(classes.satisfied, sizes * share, 0.0))) + suppressed
            losses.append(self._normalized(a, np.array([total])))
        return float(self._combine(losses)[0])
