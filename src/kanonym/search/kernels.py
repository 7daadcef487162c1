"""Compiled kernels for rolling up equivalence classes (numba).

One pass over the source classes maps each class's codes to the target levels,
packs them into a mixed-radix key and adds the class size to that key's
counter, in a dense array when the key space is small or an open-addressing
hash table otherwise; the distinct keys are then split back into codes. This
fuses what the NumPy path does in several passes with temporaries, and avoids
sorting. ``benchmarks/README.md`` records the measurements that chose it.
Compiled functions are cached on disk (``cache=True``), so only the first run
on a machine pays for compilation.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

IntArray = npt.NDArray[np.int64]

_EMPTY = -1
# Fibonacci hashing multiplier (2**64 / golden ratio), as a signed 64-bit value.
_GOLDEN = np.int64(-7046029254386353131)


@njit(cache=True, nogil=True)
def _keys(codes: IntArray, maps: IntArray, offsets: IntArray, radices: IntArray) -> IntArray:
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
def rollup_dense(
    codes: IntArray,
    sizes: IntArray,
    maps: IntArray,
    offsets: IntArray,
    radices: IntArray,
    space: int,
) -> tuple[IntArray, IntArray]:
    """Merge classes by key with a dense counter of ``space`` slots."""
    keys = _keys(codes, maps, offsets, radices)
    counter = np.zeros(space, dtype=np.int64)
    for i in range(keys.shape[0]):
        counter[keys[i]] += sizes[i]
    distinct = 0
    for key in range(space):
        if counter[key] > 0:
            distinct += 1
    out_keys = np.empty(distinct, dtype=np.int64)
    out_sizes = np.empty(distinct, dtype=np.int64)
    j = 0
    for key in range(space):
        if counter[key] > 0:
            out_keys[j] = key
            out_sizes[j] = counter[key]
            j += 1
    return _decode(out_keys, radices), out_sizes


@njit(cache=True, nogil=True)
def rollup_hashed(
    codes: IntArray,
    sizes: IntArray,
    maps: IntArray,
    offsets: IntArray,
    radices: IntArray,
) -> tuple[IntArray, IntArray]:
    """Merge classes by key with an open-addressing hash table (linear probing)."""
    keys = _keys(codes, maps, offsets, radices)
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
