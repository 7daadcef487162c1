"""Compiled walks over the lattice's node numbering (numba): box updates and upward paths.

In the mixed-radix numbering of :class:`~kanonym.lattice.Lattice`, the nodes
above (or below) a node form a box: a range of levels per attribute. Inference
by monotonicity tags such a box, and a bound inherited by every generalization
raises one. Each kernel walks the box row by row (the last attribute varies
fastest, with stride 1), touching no node outside it; one call costs about a
microsecond plus the box's size, against several for the same update with
NumPy's boolean masks on an n-d view. An upward path of undecided nodes, the
unit of Flash's search, is found by the same index arithmetic.

Example:
    >>> import numpy as np
    >>> values = np.zeros(6, dtype=np.int8)  # the lattice (1, 2): spans 2 and 3
    >>> tag_box(values, 1, np.array([2, 2]), np.array([3, 1]), 1)
    >>> values.tolist()
    [0, 1, 1, 0, 1, 1]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

IntArray = npt.NDArray[np.int64]

UNKNOWN = 0


@njit(cache=True, nogil=True)
def _row_starts(start: int, extents: IntArray, strides: IntArray) -> IntArray:
    """The first node index of every row of the box (its last attribute's run),
    in index order; empty when some extent is not positive."""
    m = extents.shape[0]
    rows = 1 if extents[m - 1] > 0 else 0
    for d in range(m - 1):
        rows *= max(extents[d], 0)
    out = np.empty(rows, dtype=np.int64)
    corner = np.zeros(m, dtype=np.int64)
    index = start
    for r in range(rows):
        out[r] = index
        # Odometer step: the last varying attribute before the run moves up.
        for d in range(m - 2, -1, -1):
            corner[d] += 1
            index += strides[d]
            if corner[d] < extents[d]:
                break
            index -= strides[d] * extents[d]
            corner[d] = 0
    return out


@njit(cache=True, nogil=True)
def tag_box(
    values: npt.NDArray[np.int8], start: int, extents: IntArray, strides: IntArray, tag: int
) -> None:
    """Set the UNKNOWN nodes of the box to ``tag``.

    The box starts at node index ``start`` and spans ``extents[d]`` levels of
    attribute d; ``strides`` are the lattice's.
    """
    run = extents[extents.shape[0] - 1]
    for index in _row_starts(start, extents, strides):
        for i in range(index, index + run):
            if values[i] == UNKNOWN:
                values[i] = tag


@njit(cache=True, nogil=True)
def raise_box(
    bounds: npt.NDArray[np.float64], start: int, extents: IntArray, strides: IntArray, bound: float
) -> None:
    """Raise every bound in the box (as for :func:`tag_box`) to at least ``bound``."""
    run = extents[extents.shape[0] - 1]
    for index in _row_starts(start, extents, strides):
        for i in range(index, index + run):
            if bounds[i] < bound:
                bounds[i] = bound


@njit(cache=True, nogil=True)
def upward_path(
    values: npt.NDArray[np.int8],
    bounds: npt.NDArray[np.float64],
    start: int,
    lowest: IntArray,
    spans: IntArray,
    strides: IntArray,
    limit: float,
) -> tuple[IntArray, IntArray]:
    """An upward path of UNKNOWN nodes from node index ``start``.

    Each step raises the first attribute whose step up leads to an UNKNOWN
    node with bound at most ``limit`` (Kohlmayer et al. 2012, "Flash":
    paths are built greedily in attribute order). Returns the path's node
    indices and levels, ``(length, attributes)``, in a lattice whose levels
    start at ``lowest``.

    Example:
        >>> values, bounds = np.zeros(6, dtype=np.int8), np.zeros(6)
        >>> values[3] = 1  # lattice (1, 2): node (1, 0) is decided
        >>> upward_path(values, bounds, 0, np.array([0, 0]), np.array([2, 3]),
        ...             np.array([3, 1]), np.inf)[1].tolist()
        [[0, 0], [0, 1], [1, 1], [1, 2]]
    """
    m = spans.shape[0]
    digits = np.empty(m, dtype=np.int64)
    rest = start
    for d in range(m):
        digits[d] = rest // strides[d]
        rest -= digits[d] * strides[d]
    longest = 1
    for d in range(m):
        longest += spans[d] - 1 - digits[d]
    indices = np.empty(longest, dtype=np.int64)
    path = np.empty((longest, m), dtype=np.int64)
    index = start
    length = 0
    while True:
        indices[length] = index
        path[length] = digits + lowest
        length += 1
        up = -1
        for d in range(m):
            if digits[d] + 1 < spans[d]:
                above = index + strides[d]
                if values[above] == UNKNOWN and not bounds[above] > limit:
                    up = d
                    break
        if up < 0:
            return indices[:length], path[:length]
        digits[up] += 1
        index += strides[up]
