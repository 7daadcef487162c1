"""Compiled kernels for grouping tuples into equivalence classes (numba).

A node's classes are found in one pass that builds a mixed-radix key per input
row (a frequency-set tuple, or a class of a specialization being rolled up) and
adds the row's size to that key's counter: a dense array when the key space is
small, an open-addressing hash table otherwise. The distinct keys are then
split back into one code per attribute. Two key builders feed the counters:

* ``keys_direct`` reads each tuple's code at the node's level from arrays
  precomputed per attribute and level (contiguous ``int32`` streams);
* ``keys_rolled`` maps a specialization's class codes up the hierarchies.

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
Int32Array = npt.NDArray[np.int32]

_EMPTY = -1
# Fibonacci hashing multiplier (2**64 / golden ratio), as a signed 64-bit value.
_GOLDEN = np.int64(-7046029254386353131)


@njit(cache=True, nogil=True)
def keys_rolled(codes: IntArray, maps: IntArray, offsets: IntArray, radices: IntArray) -> IntArray:
    """Keys of classes whose codes are mapped up by ``maps`` (offset -1: unchanged)."""
    n, m = codes.shape
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        key = 0
        for a in range(m):
            code = codes[i, a]
            if offsets[a] >= 0:
                code = maps[offsets[a] + code]
            key = key * radices[a] + code
        keys[i] = key
    return keys


@njit(cache=True, nogil=True)
def keys_direct(generalized: Int32Array, levels: IntArray, radices: IntArray) -> IntArray:
    """Keys of tuples from ``generalized[attribute, level, tuple]`` at the given levels."""
    m, _, n = generalized.shape
    keys = np.zeros(n, dtype=np.int64)
    for a in range(m):
        radix = radices[a]
        column = generalized[a, levels[a]]
        for i in range(n):
            keys[i] = keys[i] * radix + column[i]
    return keys


@njit(cache=True, nogil=True)
def _decode(keys: IntArray, radices: IntArray) -> IntArray:
    n = keys.shape[0]
    m = radices.shape[0]
    codes = np.empty((n, m), dtype=np.int64)
    for i in range(n):
        rest = keys[i]
        for a in range(m - 1, -1, -1):
            codes[i, a] = rest % radices[a]
            rest //= radices[a]
    return codes


@njit(cache=True, nogil=True)
def count_dense(
    keys: IntArray, sizes: IntArray, radices: IntArray, counter: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Group rows by key with a dense array ``counter`` (all zero, >= key space).

    Returns each class's codes and size, and each row's class. The counter
    holds class number + 1 for the keys seen; only those slots are visited
    again, and zeroed before returning, so one counter serves every call at a
    cost independent of the key space.
    """
    n = keys.shape[0]
    class_keys = np.empty(n, dtype=np.int64)
    class_sizes = np.zeros(n, dtype=np.int64)
    class_of = np.empty(n, dtype=np.int64)
    distinct = 0
    for i in range(n):
        key = keys[i]
        number = counter[key]
        if number == 0:
            class_keys[distinct] = key
            distinct += 1
            number = distinct
            counter[key] = number
        class_of[i] = number - 1
        class_sizes[number - 1] += sizes[i]
    for j in range(distinct):
        counter[class_keys[j]] = 0
    return _decode(class_keys[:distinct], radices), class_sizes[:distinct].copy(), class_of


@njit(cache=True, nogil=True)
def count_hashed(
    keys: IntArray, sizes: IntArray, radices: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Group rows by key with a hash table (linear probing); as :func:`count_dense`."""
    n = keys.shape[0]
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    capacity = 1 << bits
    mask = capacity - 1
    table_keys = np.full(capacity, _EMPTY, dtype=np.int64)
    table_class = np.empty(capacity, dtype=np.int64)
    class_keys = np.empty(n, dtype=np.int64)
    class_sizes = np.zeros(n, dtype=np.int64)
    class_of = np.empty(n, dtype=np.int64)
    distinct = 0
    for i in range(n):
        key = keys[i]
        slot = ((key * _GOLDEN) >> (64 - bits)) & mask
        while table_keys[slot] != _EMPTY and table_keys[slot] != key:
            slot = (slot + 1) & mask
        if table_keys[slot] == _EMPTY:
            table_keys[slot] = key
            table_class[slot] = distinct
            class_keys[distinct] = key
            distinct += 1
        number = table_class[slot]
        class_of[i] = number
        class_sizes[number] += sizes[i]
    return _decode(class_keys[:distinct], radices), class_sizes[:distinct].copy(), class_of


@njit(cache=True, nogil=True)
def sum_rows(class_of: IntArray, rows: IntArray, n_classes: int) -> IntArray:
    """Add the rows of ``rows`` (e.g. sensitive-value histograms) up per class."""
    out = np.zeros((n_classes, rows.shape[1]), dtype=np.int64)
    for i in range(rows.shape[0]):
        c = class_of[i]
        for v in range(rows.shape[1]):
            out[c, v] += rows[i, v]
    return out
