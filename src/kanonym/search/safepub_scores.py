"""SafePub's score functions: node utilities of sensitivity 1, for the exponential mechanism.

SafePub (Bild, Kuhn & Prasser 2018, "SafePub: A Truthful Data Anonymization
Algorithm With Strong Privacy Guarantees", PoPETs 2018(1), section 5) searches
the generalization lattice with the exponential mechanism (McSherry & Talwar
2007, "Mechanism Design via Differential Privacy", FOCS), which needs scores
whose *sensitivity* is bounded: adding one record to the input table D, or
removing one, must change any node's score by at most a known amount. SafePub
turns common quality models into such scores. A node g is scored on D as the
(k, beta)-anonymization releases it: the sample S (each record of D drawn with
probability beta) generalized by g, classes of S holding fewer than k records
suppressed; the records of D outside S count as suppressed (they are never
released). Higher is better. With N = |D| input rows, d quasi-identifiers,
c the sample rows of a class, "kept" the classes of at least k sample rows,
and ``s`` the suppressed records (sample rows of suppressed classes plus the
N - |S| records not drawn):

* ``granularity`` (Iyengar's loss, 2002): a kept record costs, per
  quasi-identifier, the share of the hierarchy's leaves its value covers; a
  suppressed record costs 1 per quasi-identifier.
  ``-(sum_j (sum_kept c * share_j + s)) / d``, sensitivity ``max(1, k - 1)``.
* ``intensity`` (Sweeney's precision, 2002): a kept record costs
  ``level_j / height_j``, a suppressed one 1.
  ``-(sum_j (kept rows * level_j / height_j + s)) / d``, sensitivity ``max(1, k - 1)``.
* ``discernibility`` (Bayardo & Agrawal 2005): ``-(sum_kept c^2 + N * s) / N``,
  sensitivity ``5`` for k = 1 and ``k^2 / (k - 1) + 1`` above.
* ``entropy`` (SafePub's score for non-uniform entropy, Gionis & Tassa 2009):
  per quasi-identifier, kept records whose generalized value is not the root
  are grouped by that value, a group of c records adding ``c^2``; every other
  record (suppressed, or generalized to the root) adds N.
  ``-(total) / (N * d)``, sensitivity as discernibility's.
* ``group-size`` (the average class size, LeFevre, DeWitt & Ramakrishnan
  2006): the number of kept classes, plus one when any record is suppressed
  (they form one class ``*``); sensitivity 1.

Each score is given already divided by its sensitivity, exactly: the
numerators and denominators are integers, the quotient is one rational rounded
once to the nearest float. These are the formulas of ARX's implementation of
SafePub (``Metric.getScore`` of ``MetricMDNMLoss``, ``MetricMDNMPrecision``,
``MetricSDNMDiscernability``, ``MetricMDNUNMEntropy``, ``MetricSDAECS``): a
share is the hierarchy's leaves under a value over all its leaves (ARX's
``DomainShareMaterialized``), and the root is the hierarchy's single top value.
SafePub's sixth score (classification accuracy) is not provided.

Example (6 records, 5 drawn into classes of 2, 2 and 1; k = 2 suppresses the 1):
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.metrics import ClassView
    >>> h = Hierarchy("x", (("a", "b", "c"), ("*",) * 3))
    >>> tables = ScoreTables.of(encode(pl.DataFrame({"x": ["a", "b", "c"]}), {"x": h}))
    >>> view = ClassView(np.array([2, 2, 1]), np.array([True, True, False]),
    ...                  lambda: np.array([[0], [1], [2]]))
    >>> score_node("group-size", tables, (0,), view, k=2, input_rows=6)
    3.0
    >>> score_node("discernibility", tables, (0,), view, k=2, input_rows=6)
    -0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable
from kanonym.errors import InputError, echo
from kanonym.lattice import Node
from kanonym.metrics import ClassView

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

SCORES = ("granularity", "intensity", "discernibility", "entropy", "group-size")
"""SafePub's score functions provided here (see the module docstring)."""

METRIC_SCORES: dict[str, str] = {
    "loss": "granularity",
    "precision": "intensity",
    "dm": "discernibility",
    "dm-star": "discernibility",
    "entropy": "entropy",
    "non-monotonic-entropy": "entropy",
    "average-class-size": "group-size",
    "aecs": "group-size",
}
"""The score SafePub (and ARX) uses for a search optimizing kanonym's metric of that name."""


@dataclass(frozen=True)
class ScoreTables:
    """What the scores read of the hierarchies, per quasi-identifier and level.

    Attributes:
        shares: ``shares[j][level][code]``: the share of the hierarchy's leaves
            under the value with that level code (1 at the root).
        leaves: leaves of each hierarchy (the share's denominator).
        leaf_counts: ``leaf_counts[j][level][code]``: the share's numerator.
        roots: ``roots[j][level][code]``: whether the value is the root.
        heights: each hierarchy's height.
    """

    shares: tuple[tuple[npt.NDArray[np.float64], ...], ...]
    leaves: tuple[int, ...]
    leaf_counts: tuple[tuple[IntArray, ...], ...]
    roots: tuple[tuple[BoolArray, ...], ...]
    heights: tuple[int, ...]

    @classmethod
    def of(cls, encoded: EncodedTable) -> ScoreTables:
        """The tables of ``encoded``'s quasi-identifiers (their hierarchies and dictionaries).

        Example:
            >>> import polars as pl
            >>> from kanonym.hierarchy import Hierarchy
            >>> from kanonym.encode import encode
            >>> h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*",) * 3))
            >>> tables = ScoreTables.of(encode(pl.DataFrame({"x": ["a", "c"]}), {"x": h}))
            >>> tables.leaf_counts[0][1].tolist(), tables.roots[0][2].tolist()
            ([2, 1], [True])
        """
        shares = []
        counts = []
        roots = []
        leaves = []
        for attribute in encoded.attributes:
            levels = attribute.hierarchy.levels
            root = levels[-1][0]
            per_level_counts = []
            per_level_roots = []
            for level, labels in enumerate(attribute.level_labels):
                # Leaves of the hierarchy (not only those in the data) under each label.
                under: dict[str | None, int] = {}
                for label in levels[level]:
                    under[label] = under.get(label, 0) + 1
                per_level_counts.append(
                    np.array([under.get(label, 0) for label in labels], dtype=np.int64)
                )
                per_level_roots.append(np.array([label == root for label in labels], dtype=bool))
            size = len(levels[0])
            leaves.append(size)
            counts.append(tuple(per_level_counts))
            shares.append(tuple(c / size for c in per_level_counts))
            roots.append(tuple(per_level_roots))
        return cls(
            shares=tuple(shares),
            leaves=tuple(leaves),
            leaf_counts=tuple(counts),
            roots=tuple(roots),
            heights=tuple(a.height for a in encoded.attributes),
        )


def check_score(name: object) -> str:
    """``name`` if it is one of :data:`SCORES`, else an :class:`InputError` naming ``score``.

    Example:
        >>> check_score("granularity")
        'granularity'
    """
    if not isinstance(name, str) or name not in SCORES:
        raise InputError(f"`score` must be one of {', '.join(SCORES)}; got {echo(name)}")
    return name


def sensitivity(name: str, k: int) -> Fraction:
    """The sensitivity SafePub proves for score ``name`` with classes of at least k records.

    Example:
        >>> sensitivity("granularity", 5), sensitivity("discernibility", 2)
        (Fraction(4, 1), Fraction(5, 1))
    """
    name = check_score(name)
    if name in ("granularity", "intensity"):
        return Fraction(max(1, k - 1))
    if name in ("discernibility", "entropy"):
        return Fraction(5) if k == 1 else Fraction(k * k, k - 1) + 1
    return Fraction(1)


def _suppressed(sizes: IntArray, kept: BoolArray, input_rows: int) -> tuple[int, int]:
    """Rows of the kept classes, and the suppressed records (sample or not drawn)."""
    released = int(sizes[kept].sum())
    return released, input_rows - released


def _granularity(
    tables: ScoreTables, node: Node, view: ClassView, kept: BoolArray, input_rows: int
) -> Fraction:
    released, suppressed = _suppressed(view.sizes, kept, input_rows)
    total = Fraction(0)
    if released:
        codes = view.codes[kept]
        sizes = view.sizes[kept]
        for j, level in enumerate(node):
            # Integers: sample rows times leaves under their value, over the hierarchy's leaves.
            covered = int(np.dot(sizes, tables.leaf_counts[j][level][codes[:, j]]))
            total += Fraction(covered, tables.leaves[j])
    return -(total + suppressed * len(node)) / len(node)


def _intensity(
    tables: ScoreTables, node: Node, view: ClassView, kept: BoolArray, input_rows: int
) -> Fraction:
    released, suppressed = _suppressed(view.sizes, kept, input_rows)
    total = Fraction(suppressed * len(node))
    for level, height in zip(node, tables.heights, strict=True):
        if height:
            total += Fraction(released * level, height)
    return -total / len(node)


def _discernibility(
    tables: ScoreTables, node: Node, view: ClassView, kept: BoolArray, input_rows: int
) -> Fraction:
    _, suppressed = _suppressed(view.sizes, kept, input_rows)
    sizes = view.sizes[kept]
    penalty = int(np.dot(sizes, sizes)) + input_rows * suppressed
    return -Fraction(penalty, input_rows)


def _entropy(
    tables: ScoreTables, node: Node, view: ClassView, kept: BoolArray, input_rows: int
) -> Fraction:
    total = 0
    codes = view.codes if kept.any() else None
    for j, level in enumerate(node):
        informative = kept.copy()
        if codes is not None:
            informative &= ~tables.roots[j][level][codes[:, j]]
        grouped = 0
        informative_rows = 0
        if codes is not None and informative.any():
            weights = view.sizes[informative]
            per_value = np.bincount(codes[informative, j], weights=weights).astype(np.int64)
            grouped = int(np.dot(per_value, per_value))
            informative_rows = int(per_value.sum())
        total += grouped + input_rows * (input_rows - informative_rows)
    return -Fraction(total, input_rows * len(node))


def _group_size(
    tables: ScoreTables, node: Node, view: ClassView, kept: BoolArray, input_rows: int
) -> Fraction:
    _, suppressed = _suppressed(view.sizes, kept, input_rows)
    classes = int(np.count_nonzero(kept & (view.sizes > 0)))
    return Fraction(classes + (1 if suppressed else 0))


_RAW: dict[str, Callable[[ScoreTables, Node, ClassView, BoolArray, int], Fraction]] = {
    "granularity": _granularity,
    "intensity": _intensity,
    "discernibility": _discernibility,
    "entropy": _entropy,
    "group-size": _group_size,
}


def raw_score(
    name: str, tables: ScoreTables, node: Node, view: ClassView, *, k: int, input_rows: int
) -> Fraction:
    """Score ``name`` of ``node`` before the division by its sensitivity, exactly.

    ``view`` holds the node's classes of the sample (sizes: sample rows) and
    which of them are kept; they must be those of at least ``k`` rows.
    ``input_rows`` is N, the rows of the table the sample was drawn from.

    Example:
        >>> from kanonym.metrics import ClassView
        >>> view = ClassView(np.array([3]), np.array([True]), lambda: np.array([[0]]))
        >>> tables = ScoreTables(shares=((np.array([1.0]),),), leaves=(1,),
        ...                      leaf_counts=((np.array([1]),),), roots=((np.array([True]),),),
        ...                      heights=(0,))
        >>> raw_score("discernibility", tables, (0,), view, k=3, input_rows=4)
        Fraction(-13, 4)
    """
    kept = np.asarray(view.satisfied, dtype=bool)
    if not np.array_equal(kept, view.sizes >= k):
        raise InputError(
            "`evaluator` must keep exactly the classes of at least `k` sample rows "
            f"(k = {k}), as SafePub's (k, beta)-anonymization does"
        )
    return _RAW[check_score(name)](tables, node, view, kept, input_rows)


def score_node(
    name: str, tables: ScoreTables, node: Node, view: ClassView, *, k: int, input_rows: int
) -> float:
    """Score ``name`` of ``node`` divided by its sensitivity (:func:`sensitivity`), as a float.

    The exponential mechanism draws with these scores as they are (sensitivity 1).

    Example:
        >>> from kanonym.metrics import ClassView
        >>> view = ClassView(np.array([3]), np.array([True]), lambda: np.array([[0]]))
        >>> tables = ScoreTables(shares=((np.array([1.0]),),), leaves=(1,),
        ...                      leaf_counts=((np.array([1]),),), roots=((np.array([True]),),),
        ...                      heights=(0,))
        >>> score_node("discernibility", tables, (0,), view, k=3, input_rows=4)
        -0.5909090909090909
    """
    value = raw_score(name, tables, node, view, k=k, input_rows=input_rows)
    return float(value / sensitivity(name, k))


def scores_of(
    names: Sequence[str],
    tables: ScoreTables,
    node: Node,
    view: ClassView,
    *,
    k: int,
    input_rows: int,
) -> dict[str, float]:
    """Every score in ``names`` of one node (see :func:`score_node`), for reports."""
    return {n: score_node(n, tables, node, view, k=k, input_rows=input_rows) for n in names}
