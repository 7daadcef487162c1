"""Per-class measures of a sensitive attribute's distribution.

Each sensitive privacy model thresholds one of these quantities, and
``kanonym check`` reports their extremes over all classes: sharing the
functions means a model with parameter x accepts a table exactly when the
measured value is within x.

Every function works on all equivalence classes at once. ``counts`` is an
integer matrix with one row per class and one column per value code of the
attribute (entry [i, j]: rows of class i holding value j; see
:class:`~kanonym.models.ClassStatistics`); ``overall`` counts each value code in
the whole table. A class's distribution Q is its row divided by the row's sum;
the table's distribution P is ``overall`` divided by its sum. Logarithms are
natural. No function fails on zero classes.

Example:
    >>> import numpy as np
    >>> counts = np.array([[2, 0], [1, 1]])
    >>> distinct_values(counts).tolist(), largest_share(counts).tolist()
    ([1, 2], [1.0, 0.5])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# Shares and logarithms carry rounding errors near 1e-16; a class exactly at a
# model's bound (say l equally frequent values against entropy l-diversity) must
# not fail because of them. Real differences between shares of a table of n rows
# are at least 1/n^2, far above this for any table that fits in memory.
ROUNDING = 1e-12


def at_most(values: FloatArray, bound: FloatArray | float) -> BoolArray:
    """``values <= bound``, up to floating-point rounding.

    Example:
        >>> at_most(np.array([0.1 + 0.2, 0.31]), 0.3).tolist()
        [True, False]
    """
    slack = ROUNDING * np.maximum(1.0, np.abs(bound))
    return np.asarray(values <= bound + slack)


def at_least(values: FloatArray, bound: float) -> BoolArray:
    """``values >= bound``, up to floating-point rounding.

    Example:
        >>> at_least(np.array([math.log(3) - 1e-15]), math.log(3)).tolist()
        [True]
    """
    return at_most(-values, -bound)


def class_shares(counts: IntArray) -> FloatArray:
    """Q for every class: each row divided by its sum (a row of zeros stays zeros).

    Example:
        >>> class_shares(np.array([[3, 1]])).tolist()
        [[0.75, 0.25]]
    """
    totals = counts.sum(axis=1, keepdims=True)
    return np.asarray(counts / np.maximum(totals, 1), dtype=np.float64)


def table_shares(overall: IntArray) -> FloatArray:
    """P: the overall counts divided by their sum.

    Example:
        >>> table_shares(np.array([1, 3])).tolist()
        [0.25, 0.75]
    """
    return np.asarray(overall / max(int(overall.sum()), 1), dtype=np.float64)


def distinct_values(counts: IntArray) -> IntArray:
    """How many different values each class holds (distinct l-diversity's l).

    Example:
        >>> distinct_values(np.array([[2, 0, 1]])).tolist()
        [2]
    """
    return np.asarray((counts > 0).sum(axis=1), dtype=np.int64)


def entropy(counts: IntArray) -> FloatArray:
    """Shannon entropy of each class, natural log: −Σ q ln q over the values present.

    Entropy l-diversity (Machanavajjhala et al. 2007) asks for
    entropy ≥ ln l, so exp(entropy) is the largest l a class satisfies.

    Example:
        >>> entropy(np.array([[1, 1, 0]])).round(6).tolist() == [round(math.log(2), 6)]
        True
    """
    return _entropy(np.ascontiguousarray(counts, dtype=np.int64))


@njit(cache=True, nogil=True)
def _entropy(counts: IntArray) -> FloatArray:
    # One pass over the values present: NumPy's masked log over the whole
    # (classes, values) array took 0.4 of the 1.1 s of entropy 5-diversity's
    # exhaustive search on adult (benchmarks/README.md).
    classes, values = counts.shape
    out = np.zeros(classes, dtype=np.float64)
    for c in range(classes):
        total = 0
        for v in range(values):
            total += counts[c, v]
        if total == 0:
            continue
        h = 0.0
        for v in range(values):
            count = counts[c, v]
            if count > 0:
                q = count / total
                h -= q * np.log(q)
        out[c] = h
    return out


def recursive_c(counts: IntArray, l: int) -> FloatArray:  # noqa: E741 - the paper's l
    """The least c each class needs for recursive (c,l)-diversity (an infimum).

    Machanavajjhala et al. 2007: with r_1 ≥ r_2 ≥ … ≥ r_m the
    counts of a class's values in decreasing order, the class is recursive
    (c,l)-diverse when r_1 < c (r_l + r_(l+1) + … + r_m). It is so for every c
    strictly above the value returned: r_1 / (r_l + … + r_m); infinity when the
    class has fewer than l values (no c works); 0 when l = 1, because the paper
    declares 1-diversity always satisfied.

    Example:
        >>> recursive_c(np.array([[4, 2, 2], [3, 0, 0]]), 2).tolist()
        [1.0, inf]
    """
    if l == 1:
        return np.zeros(counts.shape[0], dtype=np.float64)
    ranked = -np.sort(-counts, axis=1)
    tail = ranked[:, l - 1 :].sum(axis=1)
    first = ranked[:, 0] if ranked.shape[1] else np.zeros(counts.shape[0], dtype=np.int64)
    out = np.full(counts.shape[0], np.inf)
    return np.asarray(np.divide(first, tail, out=out, where=tail > 0), dtype=np.float64)


def largest_share(counts: IntArray) -> FloatArray:
    """Each class's largest value share, max q (the α of (α,k)-anonymity).

    Example:
        >>> largest_share(np.array([[3, 1]])).tolist()
        [0.75]
    """
    return np.asarray(class_shares(counts).max(axis=1, initial=0.0), dtype=np.float64)


def emd_equal(counts: IntArray, overall: IntArray) -> FloatArray:
    """Earth Mover's Distance from P to each Q with equal ground distance.

    Every two different values are 1 apart, so the distance is half the L1
    distance: ½ Σ |q_i − p_i| (Li, Li & Venkatasubramanian 2007).

    Example:
        >>> emd_equal(np.array([[2, 0], [1, 1]]), np.array([3, 1])).tolist()
        [0.25, 0.25]
    """
    return _emd_equal(np.ascontiguousarray(counts, dtype=np.int64), table_shares(overall))


@njit(cache=True, nogil=True)
def _emd_equal(counts: IntArray, p: FloatArray) -> FloatArray:
    # One pass instead of NumPy's share, difference, absolute value and sum
    # arrays: 0.6 of the 1.2 s of 0.2-closeness's exhaustive search on adult.
    classes, values = counts.shape
    out = np.empty(classes, dtype=np.float64)
    for c in range(classes):
        total = 0
        for v in range(values):
            total += counts[c, v]
        denominator = max(total, 1)
        distance = 0.0
        for v in range(values):
            distance += abs(counts[c, v] / denominator - p[v])
        out[c] = 0.5 * distance
    return out


def emd_ordered(counts: IntArray, overall: IntArray, order: IntArray) -> FloatArray:
    """Earth Mover's Distance from P to each Q with ordered distance.

    ``order`` lists the value codes from smallest to largest value; the i-th and
    j-th values are |i − j| / (m − 1) apart. With r_i = p_i − q_i in that order,
    the distance is (1 / (m − 1)) Σ_i |r_1 + … + r_i| (Li, Li & Venkatasubramanian
    2007). With one value (m = 1) every class equals P: distance 0.

    Example (the paper's salary example: 9 values, a class with the 3 lowest):
        >>> emd_ordered(np.array([[1, 1, 1, 0, 0, 0, 0, 0, 0]]), np.ones(9, dtype=np.int64),
        ...             np.arange(9)).tolist()
        [0.375]
    """
    m = counts.shape[1]
    if m <= 1:
        return np.zeros(counts.shape[0], dtype=np.float64)
    gap = (table_shares(overall) - class_shares(counts))[:, order]
    moved = np.abs(np.cumsum(gap, axis=1)[:, :-1]).sum(axis=1)
    return np.asarray(moved / (m - 1), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class ValueTree:
    """A sensitive attribute's hierarchy above its value codes.

    Attributes:
        parents: ``parents[0][code]`` is the level-1 node of each value code;
            ``parents[j][node]`` the level-(j + 1) node of each level-j node. Nodes
            of a level are numbered 0, 1, … in order of first appearance.
        height: the hierarchy's height H (``len(parents)``).
    """

    parents: tuple[IntArray, ...]

    @property
    def height(self) -> int:
        """H, the hierarchy's highest level."""
        return len(self.parents)


def value_tree(hierarchy: Hierarchy, values: Sequence[str | None]) -> ValueTree:
    """The part of ``hierarchy`` above ``values`` (the value of each code).

    Raises:
        InputError: a value is not a leaf of the hierarchy, or the hierarchy has
            no level above its leaves (no distance is defined then).

    Example:
        >>> h = Hierarchy("d", (("flu", "cold", "ulcer"), ("resp", "resp", "dig"), ("*",) * 3))
        >>> [p.tolist() for p in value_tree(h, ("ulcer", "flu")).parents]
        [[0, 1], [0, 0]]
    """
    if hierarchy.height < 1:
        raise InputError(f"hierarchy {hierarchy.name}: needs a level above its values")
    row_of = {leaf: row for row, leaf in enumerate(hierarchy.leaves)}
    rows = []
    for value in values:
        if value not in row_of:
            shown = "the missing value" if value is None else repr(value)
            raise InputError(f"hierarchy {hierarchy.name}: {shown} is not one of its values")
        rows.append(row_of[value])
    parents = []
    below = list(range(len(rows)))  # node of each code at the level below
    for level in range(1, hierarchy.height + 1):
        node_of: dict[str | None, int] = {}
        here = [node_of.setdefault(hierarchy.levels[level][row], len(node_of)) for row in rows]
        parent = np.zeros(max(below, default=-1) + 1, dtype=np.int64)
        parent[below] = here
        parents.append(parent)
        below = here
    return ValueTree(tuple(parents))


def emd_hierarchical(counts: IntArray, overall: IntArray, tree: ValueTree) -> FloatArray:
    """Earth Mover's Distance from P to each Q with hierarchical ground distance.

    Two values are level(v_i, v_j) / H apart, the level of their lowest common
    ancestor over the hierarchy's height. Li, Li & Venkatasubramanian 2007
    compute it bottom-up: a leaf's extra is p_i − q_i; an inner
    node N of level j sums its children's extras into pos_extra(N) (positive
    ones) and neg_extra(N) (negative ones, as magnitudes), costs
    (j / H) · min(pos_extra(N), neg_extra(N)), and passes pos − neg upwards. The
    distance is the sum of all costs.

    Example (two sibling values swapped under a root of height 1: distance 1):
        >>> h = Hierarchy("d", (("a", "b"), ("*", "*")))
        >>> emd_hierarchical(np.array([[0, 1]]), np.array([1, 0]), value_tree(h, ("a", "b")))
        array([1.])
    """
    cost = np.zeros(counts.shape[0], dtype=np.float64)
    if counts.shape[1] == 0:
        return cost
    extra = table_shares(overall) - class_shares(counts)
    for level, parent in enumerate(tree.parents, start=1):
        by_parent = np.argsort(parent, kind="stable")
        # Every node has a child (nodes are made from codes), so no segment is empty.
        starts = np.searchsorted(parent[by_parent], np.arange(int(parent.max()) + 1))
        positive = np.add.reduceat(np.clip(extra, 0.0, None)[:, by_parent], starts, axis=1)
        negative = np.add.reduceat(np.clip(-extra, 0.0, None)[:, by_parent], starts, axis=1)
        cost += (level / tree.height) * np.minimum(positive, negative).sum(axis=1)
        extra = positive - negative
    return cost


def share_ratios(counts: IntArray, overall: IntArray) -> FloatArray:
    """q_i / p_i for every class and value.

    Computed from the counts as (c_i · n) / (|class| · o_i), one rounding only, so
    exact ratios such as 3 come out exact. A value in a class but not in P
    (impossible when the classes partition the table) has an infinite ratio; a
    value in neither has ratio 1.

    Example:
        >>> share_ratios(np.array([[1, 0]]), np.array([1, 2])).tolist()
        [[3.0, 0.0]]
    """
    sizes = counts.sum(axis=1, keepdims=True).astype(np.float64)
    above = counts * float(overall.sum())
    below = sizes * overall.astype(np.float64)
    out = np.where(counts > 0, np.inf, 1.0)
    return np.asarray(np.divide(above, below, out=out, where=below > 0), dtype=np.float64)


def relative_gains(counts: IntArray, overall: IntArray) -> FloatArray:
    """D(p_i, q_i) = (q_i − p_i) / p_i = q_i / p_i − 1 for every class and value.

    The relative gain in belief of Cao & Karras 2012; see :func:`share_ratios`
    for values outside P.

    Example:
        >>> relative_gains(np.array([[1, 0]]), np.array([1, 1])).tolist()
        [[1.0, -1.0]]
    """
    return share_ratios(counts, overall) - 1.0


def basic_beta(counts: IntArray, overall: IntArray) -> FloatArray:
    """Each class's largest relative gain over the values with q_i > p_i; 0 if none.

    Basic β-likeness (Cao & Karras 2012) holds for a class when
    this is at most β.

    Example:
        >>> basic_beta(np.array([[3, 1], [1, 3]]), np.array([4, 4])).tolist()
        [0.5, 0.5]
    """
    return np.asarray(relative_gains(counts, overall).max(axis=1, initial=0.0), dtype=np.float64)


def enhanced_beta(counts: IntArray, overall: IntArray) -> FloatArray:
    """The least β each class satisfies enhanced β-likeness with; infinity if none.

    Enhanced β-likeness (Cao & Karras 2012) asks, for every value
    with q_i > p_i, D(p_i, q_i) ≤ min(β, −ln p_i). The cap −ln p_i does not depend
    on β: a class exceeding it for some value fails for every β (infinity);
    otherwise its least β is its basic β.

    Example:
        >>> enhanced_beta(np.array([[3, 1], [4, 0]]), np.array([7, 1])).tolist()
        [1.0, inf]
    """
    gains = relative_gains(counts, overall)
    # A value absent from the table has no cap (its gain is 0 or, impossibly, infinite).
    caps = -np.log(table_shares(overall), out=np.full(counts.shape[1], -np.inf), where=overall > 0)
    capped = (gains > 0) & ~at_most(gains, caps)
    least = gains.max(axis=1, initial=0.0)
    return np.asarray(np.where(capped.any(axis=1), np.inf, least), dtype=np.float64)


def delta_disclosure(counts: IntArray, overall: IntArray) -> FloatArray:
    """Each class's largest |ln(q_i / p_i)| over the values present in it.

    δ-disclosure privacy (Brickell & Shmatikov 2008) holds for a class when this
    is below δ. Values absent from the class are left out, as in ARX's
    ``DDisclosurePrivacy`` and pycanon (read literally the paper's condition
    covers them too, and ln 0 would fail every class lacking a value).

    Example:
        >>> delta_disclosure(np.array([[1, 0], [1, 1]]), np.array([2, 1])).round(4).tolist()
        [0.4055, 0.4055]
    """
    ratio = share_ratios(counts, overall)
    logs = np.abs(np.log(ratio, out=np.zeros_like(ratio), where=counts > 0))
    return np.asarray(logs.max(axis=1, initial=0.0), dtype=np.float64)


def numeric_order(values: Sequence[str | None]) -> IntArray:
    """The value codes sorted by the numbers the values spell (ties by text).

    An attribute is *ordered* for kanonym when every value is a finite decimal
    number (``"76.0"``, ``"3"``, ``"-1e3"``); the ordered distance then follows
    numeric order.

    Raises:
        InputError: a value is missing or not a finite number.

    Example:
        >>> numeric_order(["10", "9", "10.5"]).tolist()
        [1, 0, 2]
    """
    keys = []
    for value in values:
        if value is None:
            raise InputError("the missing value has no place in a numeric order")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"value {value!r} is not a number") from None
        if not math.isfinite(number):
            raise InputError(f"value {value!r} is not a finite number")
        keys.append((number, value))
    return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def listed_order(values: Sequence[str | None], order: Sequence[str | None]) -> IntArray:
    """The value codes sorted by their position in ``order`` (an explicit ranking).

    Raises:
        InputError: a value is not in ``order``.

    Example:
        >>> listed_order(["high", "low"], ["low", "medium", "high"]).tolist()
        [1, 0]
    """
    rank = {value: i for i, value in enumerate(order)}
    for value in values:
        if value not in rank:
            shown = "the missing value" if value is None else repr(value)
            raise InputError(f"{shown} is not in the given order {list(order)}")
    return np.asarray(sorted(range(len(values)), key=lambda code: rank[values[code]]))
