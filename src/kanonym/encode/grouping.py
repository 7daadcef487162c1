"""Grouping integer keys in one pass: an open-addressing hash table (numba).

Used wherever rows are grouped by an integer key: building the frequency set
from packed quasi-identifier codes, and counting a lattice node's classes when
its key space is too large for a dense counter (:mod:`kanonym.search.kernels`).
Compiled once and cached on disk (``cache=True``).

Example:
    >>> import numpy as np
    >>> keys = np.array([7, 3, 7, 9], dtype=np.int64)
    >>> first, sizes, group = count_hashed(keys, np.ones(4, np.int64), np.arange(4))
    >>> first.tolist(), sizes.tolist(), group.tolist()
    ([0, 1, 3], [2, 1, 1], [0, 1, 0, 2])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

IntArray = npt.NDArray[np.int64]

_EMPTY = -1
# Fibonacci hashing multiplier: 2**64 / golden ratio.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def count_hashed(
    keys: IntArray, sizes: IntArray, members: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Group rows by key with a hash table (linear probing).

    Returns one member (from ``members``) and the summed ``sizes`` of each
    distinct key, in order of first appearance, and each row's group.

    The slot is the top bits of the key times 2**64 / golden ratio (Fibonacci
    hashing, Knuth), computed in unsigned arithmetic: the signed version of the
    same expression measured five times slower (benchmarks/README.md).
    """
    n = keys.shape[0]
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    capacity = 1 << bits
    mask = capacity - 1
    shift = np.uint64(64 - bits)
    table_keys = np.full(capacity, _EMPTY, dtype=np.int64)
    table_class = np.empty(capacity, dtype=np.int64)
    class_members = np.empty(n, dtype=np.int64)
    class_sizes = np.zeros(n, dtype=np.int64)
    class_of = np.empty(n, dtype=np.int64)
    distinct = 0
    for i in range(n):
        key = keys[i]
        slot = np.int64((np.uint64(key) * _GOLDEN) >> shift)
        while True:
            held = table_keys[slot]
            if held == key:
                break
            if held == _EMPTY:
                table_keys[slot] = key
                table_class[slot] = distinct
                class_members[distinct] = members[i]
                distinct += 1
                break
            slot = (slot + 1) & mask
        number = table_class[slot]
        class_of[i] = number
        class_sizes[number] += sizes[i]
    return class_members[:distinct].copy(), class_sizes[:distinct].copy(), class_of
