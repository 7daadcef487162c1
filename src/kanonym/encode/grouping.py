"""Grouping integer keys in one pass: an open-addressing hash table (numba).

Used wherever rows are grouped by an integer key: building the frequency set
from packed quasi-identifier codes, and counting a lattice node's classes when
its key space is too large for a dense counter (:mod:`kanonym.evaluation.kernels`).
A search reuses one table for every node (:class:`HashTable`); only the slots a
call fills are cleared after it. Compiled once and cached on disk
(``cache=True``).

Example:
    >>> import numpy as np
    >>> keys = np.array([7, 3, 7, 9], dtype=np.int64)
    >>> first, sizes, group = count_hashed(keys, np.ones(4, np.int64), np.arange(4))
    >>> first.tolist(), sizes.tolist(), group.tolist()
    ([0, 1, 3], [2, 1, 1], [0, 1, 0, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl
from numba import njit

IntArray = npt.NDArray[np.int64]

_EMPTY = -1
# Fibonacci hashing multiplier: 2**64 / golden ratio.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class HashTable:
    """A reusable table for :func:`count_into`, for up to ``rows`` keys a call.

    Its capacity is the power of two at least twice ``rows`` (load at most
    one half). Each slot is a pair (key, sum) in one array, so a probe reads
    one cache line (about 1.3 times faster than two arrays on fars' 60,806
    tuples); ``scratch`` holds a call's working arrays.
    """

    def __init__(self, rows: int) -> None:
        bits = 1
        while (1 << bits) < 2 * rows:
            bits += 1
        self.slots = np.zeros((1 << bits, 2), dtype=np.int64)
        self.slots[:, 0] = _EMPTY
        self.scratch = np.empty((2, max(rows, 1)), dtype=np.int64)


@njit(cache=True, nogil=True)
def _slot(slots: IntArray, key: int, shift: np.uint64, mask: int) -> int:
    """The slot holding ``key``, or the empty slot where it belongs (linear probing)."""
    slot = np.int64((np.uint64(key) * _GOLDEN) >> shift)
    while True:
        held = slots[slot, 0]
        if held == _EMPTY:
            return int(slot)
        if held == key:
            return int(slot)
        slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def count_into(
    keys: IntArray,
    sizes: IntArray,
    members: IntArray,
    slots: IntArray,
    scratch: IntArray,
    class_of: IntArray,
) -> tuple[IntArray, IntArray]:
    """Group rows by key in a reusable table (empty on entry and on return).

    Returns one member (from ``members``) and the summed ``sizes`` of each
    distinct key, in order of first appearance; writes each row's group into
    ``class_of`` unless it is empty. Each row costs one probe: sizes are
    added in the key's slot, or, when rows' groups are wanted, the slot holds
    the group's number and sizes are summed by group.

    The slot is the top bits of the key times 2**64 / golden ratio (Fibonacci
    hashing, Knuth), computed in unsigned arithmetic: the signed version of the
    same expression measured five times slower (benchmarks/README.md).
    """
    n = keys.shape[0]
    capacity = slots.shape[0]
    bits = 0
    while (1 << bits) < capacity:
        bits += 1
    mask = capacity - 1
    shift = np.uint64(64 - bits)
    filled = scratch[0]
    group_members = scratch[1]
    distinct = 0
    if class_of.shape[0] > 0:
        # Every row's group is wanted: the slots hold group numbers and the
        # sizes are summed by group, in one pass (two passes, summing in the
        # slots first, measured 1.4 times slower on fars' 100,937 rows).
        group_sizes = np.zeros(n, dtype=np.int64)
        for i in range(n):
            key = keys[i]
            slot = _slot(slots, key, shift, mask)
            if slots[slot, 0] == _EMPTY:
                slots[slot, 0] = key
                slots[slot, 1] = distinct
                filled[distinct] = slot
                group_members[distinct] = members[i]
                distinct += 1
            group = slots[slot, 1]
            group_sizes[group] += sizes[i]
            class_of[i] = group
        group_sizes = group_sizes[:distinct].copy()
    else:
        for i in range(n):
            key = keys[i]
            slot = _slot(slots, key, shift, mask)
            if slots[slot, 0] == _EMPTY:
                slots[slot, 0] = key
                filled[distinct] = slot
                group_members[distinct] = members[i]
                distinct += 1
            slots[slot, 1] += sizes[i]
        group_sizes = np.empty(distinct, dtype=np.int64)
        for j in range(distinct):
            group_sizes[j] = slots[filled[j], 1]
    for j in range(distinct):
        slots[filled[j], 0] = _EMPTY
        slots[filled[j], 1] = 0
    return group_members[:distinct].copy(), group_sizes


def count_hashed(
    keys: IntArray, sizes: IntArray, members: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Group rows by key: one member and the summed sizes of each distinct key,
    in order of first appearance, and each row's group (a fresh table)."""
    table = HashTable(len(keys))
    group = np.empty(len(keys), dtype=np.int64)
    first, group_sizes = count_into(keys, sizes, members, table.slots, table.scratch, group)
    return first, group_sizes, group


@dataclass(frozen=True, eq=False)
class Grouped:
    """Distinct raw tuples of some columns with their row counts: what an engine's
    ``GROUP BY`` returns, the only result of a pass over every row.

    Attributes:
        values: one row per distinct tuple, the grouped columns as strings, in
            the order the tuples first appear in the rows.
        counts: rows per tuple.
    """

    values: pl.DataFrame
    counts: IntArray


def group_frame(frame: pl.DataFrame, columns: Sequence[str]) -> tuple[Grouped, IntArray]:
    """Group ``frame``'s rows on the raw values of ``columns`` (compared as strings).

    Returns the grouping and each row's group index. With no column, every
    row is in one group (none for an empty table).

    Example:
        >>> grouped, row_group = group_frame(pl.DataFrame({"a": ["x", "y", "x"]}), ["a"])
        >>> grouped.values.get_column("a").to_list(), grouped.counts.tolist(), row_group.tolist()
        (['x', 'y'], [2, 1], [0, 1, 0])
    """
    if not columns:
        one = frame.height > 0
        return (
            Grouped(pl.DataFrame(height=int(one)), np.full(int(one), frame.height, np.int64)),
            np.zeros(frame.height, dtype=np.int64),
        )
    keyed = frame.select(pl.col(c).cast(pl.String) for c in columns).with_row_index("_row")
    groups = keyed.group_by(list(columns), maintain_order=True).agg(pl.col("_row"), pl.len())
    counts = groups.get_column("len").to_numpy().astype(np.int64)
    members = groups.get_column("_row").explode().to_numpy()
    # Each row's group: group numbers repeated by size, scattered to the rows' places.
    row_group = np.empty(frame.height, dtype=np.int64)
    row_group[members] = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return Grouped(groups.drop("_row", "len"), counts), row_group
