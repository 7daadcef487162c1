"""mu-Argus's cell suppression: protect the rare combinations of one, two and three attributes.

mu-Argus (Hundepool & Willenborg 1996, "mu- and tau-Argus: software for
statistical disclosure control"), as Sweeney describes and simulates it
("Achieving k-anonymity privacy protection using generalization and
suppression", IJUFKS 10(5), 2002, section 4.2), checks every single attribute
and every combination of two and three quasi-identifiers: a combination of
values held by fewer than k rows is *rare* (unsafe). After generalization it
suppresses cells: in each row holding rare combinations, the cell involved in
the most of them. A combination that includes a suppressed cell no longer
identifies anybody (mu-Argus treats the cell as missing), so it stops counting.
Sweeney shows that this leaves combinations of four or more attributes unchecked,
so the result need not be k-anonymous; :func:`kanonym.evaluation.cell_choice.suppress_cells`
completes it (see :mod:`kanonym.search.muargus`).

Choices made here where the descriptions leave room: all sets of one to three
attributes are checked (mu-Argus restricts them by the attributes'
identification levels, which kanonym does not ask for); in each round every row
with a rare combination loses one cell, all rows at once (a row's rare
combinations are counted before the round); ties between cells go to the
cheapest cell (its LM loss to the root), then to column order. Each round
blanks one more attribute of each such row, so at most as many rounds run as
there are attributes. Only rows of classes smaller than k hold rare
combinations (a class of k rows holds k rows of each of its sub-combinations).

Example (the two rows (a, x) and (b, x) each hold a rare value of the first
attribute, k = 2; blanking it leaves (*, x) twice):
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [1, 0], [2, 1]])
    >>> mask = suppress_rare_combinations(codes, np.array([1, 1, 3]), k=2,
    ...                                   suppressible=np.ones(2, bool), cost=np.ones((3, 2)))
    >>> mask.astype(int).tolist()
    [[1, 0], [1, 0], [0, 0]]
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import numpy.typing as npt

from kanonym.evaluation.cell_choice import group_rows

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

# mu-Argus checks combinations of up to three attributes.
WIDTH = 3


def rare_involvement(
    codes: IntArray, sizes: IntArray, mask: BoolArray, *, k: int, attributes: list[int]
) -> IntArray:
    """Per class and attribute, how many rare combinations of 1..3 attributes include its cell.

    A combination counts only over rows none of whose cells in it is blanked.
    """
    involvement = np.zeros(codes.shape, dtype=np.int64)
    for width in range(1, min(WIDTH, len(attributes)) + 1):
        for subset in combinations(attributes, width):
            columns = np.asarray(subset, dtype=np.int64)
            valid = np.flatnonzero(~mask[:, columns].any(axis=1))
            if not len(valid):
                continue
            group, n_groups = group_rows(codes[np.ix_(valid, columns)])
            counts = np.bincount(group, weights=sizes[valid], minlength=n_groups)
            rare = valid[counts[group] < k]
            involvement[np.ix_(rare, columns)] += 1
    return involvement


def suppress_rare_combinations(
    codes: IntArray,
    sizes: IntArray,
    *,
    k: int,
    suppressible: BoolArray,
    cost: FloatArray,
) -> BoolArray:
    """The cells mu-Argus blanks: rounds of "the cell in most rare combinations" per row.

    Args:
        codes: ``(classes, attributes)`` codes of a node's classes.
        sizes: rows per class.
        k: combinations held by fewer rows are rare.
        suppressible: attributes that may be blanked (those below their root;
            an attribute at its root holds one value and is never rare alone).
        cost: ``(classes, attributes)`` cost of blanking a cell (ties).

    Returns:
        ``(classes, attributes)``: the blanked cells.
    """
    mask = np.zeros(codes.shape, dtype=np.bool_)
    attributes = np.flatnonzero(suppressible).tolist()
    for _ in range(len(attributes)):
        involvement = rare_involvement(codes, sizes, mask, k=k, attributes=attributes)
        hit = np.flatnonzero(involvement.any(axis=1))
        if not len(hit):
            break
        most = involvement[hit] == involvement[hit].max(axis=1, keepdims=True)
        # argmin keeps the first of equal costs: column order breaks the last ties.
        choice = np.argmin(np.where(most, cost[hit], np.inf), axis=1)
        mask[hit, choice] = True
    return mask
