"""Compiled kernels for grouping tuples into equivalence classes (numba).

A node's classes are found in one pass that builds a mixed-radix key per input
row (a frequency-set tuple, or a class of a specialization being rolled up) and
adds the row's size to that key's counter: a dense array when the key space is
small, an open-addressing hash table otherwise
(:func:`kanonym.encode.grouping.count_hashed`, which also builds the frequency
set). A class is represented by one
of its member tuples (an index into the frequency set), never by decoded
values: every tuple's code at every level is precomputed, so a member tuple
gives the class's codes at any higher level by lookup, and a specialization's
classes roll up by reading their members' codes at the node's levels.

This fuses what NumPy would do in several passes with temporaries, and avoids
sorting. ``benchmarks/README.md`` records the measurements that chose it.
Compiled functions are cached on disk (``cache=True``), so only the first run
on a machine pays for compilation.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

IntArray = npt.NDArray[np.int64]
# Codes per level are uint16 when every level has at most 65,536 values (half
# the memory traffic of int32); keys are int32 when the key space allows
# (AVX2 multiplies 32-bit lanes, not 64-bit ones: about 1.7 times faster).
CodeArray = npt.NDArray[np.uint16] | npt.NDArray[np.int32]
KeyArray = npt.NDArray[np.int32] | IntArray


@njit(cache=True, nogil=True)
def generalize_column(codes: IntArray, column: int, level_maps: IntArray, out: CodeArray) -> None:
    """``out[level, t] = level_maps[level, codes[t, column]]``: every tuple's
    code at every level of one attribute, in one pass over the tuples."""
    levels = level_maps.shape[0]
    for t in range(codes.shape[0]):
        leaf = codes[t, column]
        for level in range(levels):
            out[level, t] = level_maps[level, leaf]


@njit(cache=True, nogil=True)
def class_keys(
    generalized: CodeArray, levels: IntArray, members: IntArray, radices: KeyArray, keys: KeyArray
) -> None:
    """Write into ``keys[:len(members)]`` the keys at the given levels of the
    tuples ``members`` (frequency-set indices).

    ``generalized[attribute, level, tuple]`` holds every tuple's code at every
    level; a class of a specialization is read through one member tuple, since
    all its members share their codes at the node's (higher) levels. ``keys``
    is a reusable buffer, so no call allocates.
    """
    m = generalized.shape[0]
    n = members.shape[0]
    keys[:n] = 0
    for a in range(m):
        radix = radices[a]
        if radix == 1:
            continue  # one value (the root): adds nothing to any key
        column = generalized[a, levels[a]]
        if n == column.shape[0]:
            # Every tuple, in order (the frequency set itself: members are
            # 0..n-1): a contiguous stream, about 1 ns a row against 5 gathered.
            for i in range(n):
                keys[i] = keys[i] * radix + column[i]
        else:
            for i in range(n):
                keys[i] = keys[i] * radix + column[members[i]]


@njit(cache=True, nogil=True)
def count_dense(
    keys: KeyArray,
    sizes: IntArray,
    members: IntArray,
    counter: IntArray,
    scratch: IntArray,
    class_of: IntArray,
) -> tuple[IntArray, IntArray]:
    """Group the first ``len(sizes)`` keys with a dense array ``counter``
    (all zero, at least the key space).

    The dense twin of :func:`kanonym.encode.grouping.count_hashed`.

    Returns one member tuple and the size of each class, in order of first
    appearance, and writes each row's class into ``class_of`` unless it is
    empty (searches need only the classes). Sizes are added straight into the
    counter slot of their key (sizes are positive, so a zero slot is a key
    not seen yet); that is one dependent memory access a row, against two
    when the slot holds a class number, about 1.4 times faster. Only the
    slots seen are visited again, and zeroed before returning, so one counter
    serves every call at a cost independent of the key space. ``scratch`` is
    a reusable ``(2, n)`` buffer.
    """
    n = sizes.shape[0]
    seen = scratch[0]
    class_members = scratch[1]
    distinct = 0
    for i in range(n):
        key = keys[i]
        held = counter[key]
        if held == 0:
            seen[distinct] = key
            class_members[distinct] = members[i]
            distinct += 1
        counter[key] = held + sizes[i]
    class_sizes = np.empty(distinct, dtype=np.int64)
    for j in range(distinct):
        class_sizes[j] = counter[seen[j]]
    if class_of.shape[0] > 0:
        # A second pass over the keys, with the slots holding class numbers.
        for j in range(distinct):
            counter[seen[j]] = j
        for i in range(n):
            class_of[i] = counter[keys[i]]
    for j in range(distinct):
        counter[seen[j]] = 0
    return class_members[:distinct].copy(), class_sizes


@njit(cache=True, nogil=True)
def dense_classes(
    generalized: CodeArray,
    cardinalities: IntArray,
    levels: IntArray,
    members: IntArray,
    sizes: IntArray,
    counter: IntArray,
    keys: npt.NDArray[np.int32],
    scratch: IntArray,
    class_of: IntArray,
) -> tuple[IntArray, IntArray, int]:
    """The classes at ``levels`` of the rows ``members`` (with ``sizes``), by
    :func:`class_keys` and :func:`count_dense`, in one call.

    ``cardinalities[attribute, level]`` gives the radices. Returns the
    classes' members and sizes, and 0; or, when the key space exceeds the
    counter, empty arrays and the key space (capped just above 2**31, beyond
    int32 keys), for the caller to grow the counter or hash instead.
    """
    m = levels.shape[0]
    radices = np.empty(m, dtype=np.int32)
    space = 1
    for a in range(m):
        radices[a] = cardinalities[a, levels[a]]
        space = min(space * radices[a], 1 << 31)
    if space > counter.shape[0]:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), space
    class_keys(generalized, levels, members, radices, keys)
    class_members, class_sizes = count_dense(keys, sizes, members, counter, scratch, class_of)
    return class_members, class_sizes, 0


@njit(cache=True, nogil=True)
def fewest_below(nodes: IntArray, classes: IntArray, node: IntArray) -> int:
    """The row of ``nodes`` at or below ``node`` with the fewest ``classes`` (-1: none).

    Rows are the nodes of kept partitions; ties go to the first row.
    """
    best = -1
    for s in range(nodes.shape[0]):
        if best >= 0 and classes[s] >= classes[best]:
            continue
        below = True
        for a in range(nodes.shape[1]):
            if nodes[s, a] > node[a]:
                below = False
                break
        if below:
            best = s
    return best


@njit(cache=True, nogil=True)
def sum_rows(class_of: IntArray, rows: IntArray, n_classes: int) -> IntArray:
    """Add the rows of ``rows`` (e.g. sensitive-value histograms) up per class."""
    out = np.zeros((n_classes, rows.shape[1]), dtype=np.int64)
    for i in range(rows.shape[0]):
        c = class_of[i]
        for v in range(rows.shape[1]):
            out[c, v] += rows[i, v]
    return out
