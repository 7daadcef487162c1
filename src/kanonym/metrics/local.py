"""Information loss of releases whose cells are recoded one class at a time.

A local recoding (Mondrian, LeFevre, DeWitt & Ramakrishnan 2006) gives every
equivalence class its own generalized value per quasi-identifier: a numeric
range or a hierarchy node. Measures over levels (precision, height, entropy)
do not apply; these do:

* **NCP**, the normalized certainty penalty (Xu, Wang, Pei, Wang, Shi & Fu
  2006, "Utility-based anonymization using local recoding", KDD). A cell
  generalized to the numeric range [y, z] of a column whose values span
  [min, max] costs (z − y) / (max − min). Mondrian prints ranges whose edges
  lie on the column's grid or between its values, never on a member's value
  alone (:mod:`kanonym.recoding.edges`): such a cell costs the width of the
  range as printed, [y, z), over that of the grid's domain, [min, max) rounded
  out to grid cells, the whole domain costing 1; a cell printing one value
  costs 0 (Xu et al. score what is published). A cell generalized to a hierarchy
  node covering u of the column's |A| distinct values costs
  (u − 1) / (|A| − 1): Xu et al. write u / |A| with 0 for a single value,
  which jumps from 0 to 2/|A| between one value and two; the form used here
  agrees with it at a single value (0) and at the root (1) and equals the
  per-cell cost of Iyengar's loss metric (``loss``). A suppressed cell costs
  1. The table's NCP is the weighted mean over all cells, in [0, 1] (Xu et
  al. sum; Ghinita et al. 2007's GCP divides that sum by cells, as here).
* **DM**, discernibility (Bayardo & Agrawal 2005): Σ over classes of |E|²,
  plus n for each suppressed row; with nothing suppressed it equals DM*.
* **C_AVG** (LeFevre et al. 2006): released rows / classes / k.

Example (two classes of 2 rows, ranges 2-4 and 6-10 of a column spanning 2..10):
    >>> import numpy as np
    >>> penalties = numeric_penalty(np.array([2.0, 6.0]), np.array([4.0, 10.0]), 8.0)
    >>> penalties.tolist()
    [0.25, 0.5]
    >>> ncp(penalties[:, None], np.array([2, 2]), (1.0,))
    0.375
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedAttribute
from kanonym.metrics.base import ClassView

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def numeric_penalty(low: FloatArray, high: FloatArray, span: float) -> FloatArray:
    """NCP of cells holding the ranges [low, high] of a column spanning ``span``.

    Xu et al. 2006: (z − y) / |A|, with |A| = max − min over the column; 0
    for every cell when the column holds a single number.

    Example:
        >>> numeric_penalty(np.array([30.0]), np.array([39.0]), 90.0).tolist()
        [0.1]
    """
    if span <= 0:
        return np.zeros(len(low), dtype=np.float64)
    return np.asarray((high - low) / span, dtype=np.float64)


def categorical_penalty(leaves_under: IntArray, leaves: int) -> FloatArray:
    """NCP of cells holding hierarchy nodes that cover ``leaves_under`` of ``leaves`` values.

    (u − 1) / (|A| − 1): 0 for an original value, 1 for the root (see the
    module docstring for how this relates to Xu et al.'s u / |A|).

    Example:
        >>> categorical_penalty(np.array([1, 3, 5]), 5).tolist()
        [0.0, 0.5, 1.0]
    """
    if leaves <= 1:
        return np.zeros(len(leaves_under), dtype=np.float64)
    return np.asarray((leaves_under - 1) / (leaves - 1), dtype=np.float64)


def ncp(
    penalties: FloatArray,
    sizes: IntArray,
    weights: Sequence[float],
    *,
    suppressed_rows: int = 0,
) -> float:
    """The table's NCP: weighted mean over all cells, suppressed cells costing 1.

    ``penalties[c, a]`` is the penalty of class c's cell of quasi-identifier
    a, ``sizes[c]`` the class's released rows, ``weights[a]`` the attribute's
    weight (Xu et al. weigh attributes the same way). 0 when every weight is 0.

    Example:
        >>> ncp(np.array([[0.0, 1.0]]), np.array([4]), (1.0, 3.0), suppressed_rows=4)
        0.875
    """
    weight = np.asarray(weights, dtype=np.float64)
    total_weight = float(weight.sum())
    rows = int(sizes.sum()) + suppressed_rows
    if not total_weight or not rows:
        return 0.0
    released = float(np.dot(penalties @ weight, sizes.astype(np.float64)))
    return (released + total_weight * suppressed_rows) / (rows * total_weight)


def hierarchy_penalties(
    attribute: EncodedAttribute, level: int, values: FloatArray | None
) -> FloatArray:
    """NCP of each value of ``attribute`` generalized to ``level`` (by dense code).

    ``values`` holds the number of each leaf code for a numeric attribute (a
    node then costs the range of the leaves under it, over the column's
    range); None treats the attribute as categorical. Used to score
    full-domain releases on the same scale as local recodings.

    Example:
        >>> import polars as pl
        >>> from kanonym.encode import encode
        >>> from kanonym.hierarchy import Hierarchy
        >>> h = Hierarchy("age", (("30", "34", "50"), ("30-39", "30-39", "50-59"), ("*",) * 3))
        >>> a = encode(pl.DataFrame({"age": ["30", "34", "50"]}), {"age": h}).attributes[0]
        >>> hierarchy_penalties(a, 1, np.array([30.0, 34.0, 50.0])).tolist()
        [0.2, 0.0]
        >>> hierarchy_penalties(a, 1, None).tolist()
        [0.5, 0.0]
    """
    codes = attribute.level_maps[level]
    cardinality = attribute.cardinality(level)
    if values is None:
        return categorical_penalty(np.bincount(codes, minlength=cardinality), len(codes))
    low = np.full(cardinality, np.inf)
    high = np.full(cardinality, -np.inf)
    np.minimum.at(low, codes, values)
    np.maximum.at(high, codes, values)
    return numeric_penalty(low, high, float(values.max() - values.min()))


def generalization_ncp(
    attributes: Sequence[EncodedAttribute],
    node: Sequence[int],
    classes: ClassView,
    weights: Sequence[float],
    numeric_values: Sequence[FloatArray | None],
) -> float:
    """NCP of a full-domain release at ``node`` whose classes are ``classes``.

    Each class's cell of attribute a costs :func:`hierarchy_penalties` of its
    value at the node's level; rows of failing classes are suppressed (cost 1).

    Example:
        >>> import polars as pl
        >>> from kanonym.encode import encode
        >>> from kanonym.hierarchy import Hierarchy
        >>> h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*",) * 3))
        >>> a = encode(pl.DataFrame({"x": ["a", "b", "c"]}), {"x": h}).attributes[0]
        >>> codes = np.array([[0], [1]])
        >>> view = ClassView(np.array([2, 1]), np.array([True, False]), lambda: codes)
        >>> generalization_ncp([a], (1,), view, (1.0,), (None,))
        0.6666666666666666
    """
    penalties = np.column_stack(
        [
            hierarchy_penalties(attribute, level, values)[classes.codes[:, a]]
            for a, (attribute, level, values) in enumerate(
                zip(attributes, node, numeric_values, strict=True)
            )
        ]
    )
    kept = np.where(classes.satisfied, classes.sizes, 0)
    return ncp(penalties, kept, weights, suppressed_rows=classes.suppressed_rows)


def local_recoding_measures(
    class_sizes: IntArray, *, k: int, ncp_value: float
) -> dict[str, object]:
    """The ``metrics`` object of a local-recoding release (nothing suppressed).

    ``ncp``, ``dm`` and ``dm-star`` (equal: no row is suppressed), ``aecs``
    (C_AVG) and ``average-class-size`` (ARX's AECS, rows per class),
    ``equivalence_classes`` and ``completeness`` (1); the measures defined
    over hierarchy levels (``precision``, ``precision_by_attribute``,
    ``height``, ``entropy``, ``non-monotonic-entropy``, ``loss``, ``arx-loss``) are None.

    Example:
        >>> m = local_recoding_measures(np.array([3, 3, 4]), k=3, ncp_value=0.25)
        >>> m["dm"], m["aecs"], m["equivalence_classes"], m["precision"]
        (34, 1.1111111111111112, 3, None)
    """
    discernibility = int(np.dot(class_sizes, class_sizes))
    rows = int(class_sizes.sum())
    return {
        "precision": None,
        "precision_by_attribute": None,
        "completeness": 1.0,
        "equivalence_classes": len(class_sizes),
        "dm": discernibility,
        "dm-star": discernibility,
        "entropy": None,
        "loss": None,
        "aecs": rows / len(class_sizes) / k if len(class_sizes) else None,
        "average-class-size": rows / len(class_sizes) if len(class_sizes) else None,
        "non-monotonic-entropy": None,
        "arx-loss": None,
        "height": None,
        "ncp": ncp_value,
    }
