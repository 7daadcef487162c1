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
) -> tuple[IntArray, IntArray]:
    """Codes and sizes of the distinct keys, counted in ``counter`` (all zero, >= key space).

    Only the slots touched are visited again, and they are zeroed before
    returning, so one counter serves every call at a cost independent of the
    key space.
    """
    touched = np.empty(keys.shape[0], dtype=np.int64)
    distinct = 0
    for i in range(keys.shape[0]):
        key = keys[i]
        if counter[key] == 0:
            touched[distinct] = key
            distinct += 1
        counter[key] += sizes[i]
    out_keys = touched[:distinct].copy()
    out_sizes = np.empty(distinct, dtype=np.int64)
    for j in range(distinct):
        out_sizes[j] = counter[out_keys[j]]
        counter[out_keys[j]] = 0
    return _decode(out_keys, radices), out_sizes


@njit(cache=True, nogil=True)
def count_hashed(keys: IntArray, sizes: IntArray, radices: IntArray) -> tuple[IntArray, IntArray]:
    """Codes and sizes of the distinct keys, counted in a hash table (linear probing)."""
    n = keys.shape[0]
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    capacity = 1 << bits
    mask = capacity - 1
    table_keys = np.full(capacity, _EMPTY, dtype=np.int64)
    table_sizes = np.zeros(capacity, dtype=np.int64)
    distinct = 0
    for i in range(n):
        key = keys[i]
        slot = ((key * _GOLDEN) >> (64 - bits)) & mask
        while table_keys[slot] != _EMPTY and table_keys[slot] != key:
            slot = (slot + 1) & mask
        if table_keys[slot] == _EMPTY:
            table_keys[slot] = key
            distinct += 1
        table_sizes[slot] += sizes[i]
    out_keys = np.empty(distinct, dtype=np.int64)
    out_sizes = np.empty(distinct, dtype=np.int64)
    j = 0
    for slot in range(capacity):
        if table_keys[slot] != _EMPTY:
            out_keys[j] = table_keys[slot]
            out_sizes[j] = table_sizes[slot]
            j += 1
    return _decode(out_keys, radices), out_sizes
