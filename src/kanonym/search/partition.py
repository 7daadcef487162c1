"""Equivalence classes of lattice nodes, computed by roll-up.

The classes of a node are the groups of frequency-set tuples that share all
generalized quasi-identifier values. Computing them from the whole frequency
set costs one pass over every distinct tuple. But when a specialization of the
node (a node below it) has already been computed, its classes can be *rolled
up*: each class's values are mapped up the hierarchies to the node's levels and
equal classes merged, summing their sizes. Classes of a specialization are
never split by generalization, so this gives exactly the same classes, from a
set that is often far smaller than the frequency set (the roll-up of Incognito,
LeFevre et al. 2005, and the snapshots of Flash, Kohlmayer et al. 2012).

A :class:`Partition` keeps, per class, its size and one code per attribute at
the node's levels. A :class:`PartitionCache` keeps recent partitions within a
memory budget and picks, for a new node, the cached specialization with the
fewest classes.

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode, FrequencySet
    >>> h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*", "*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "b", "c", "c"]}), {"x": h})
    >>> fs = FrequencySet.from_codes(enc.row_code_matrix())
    >>> rollup = Rollup(enc, fs)
    >>> p = rollup.partition((1,), rollup.base)
    >>> p.sizes.tolist(), p.codes.tolist()
    ([2, 2], [[0], [1]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable, FrequencySet, pack_codes
from kanonym.encode.frequency import KEY_LIMIT
from kanonym.lattice import Node

IntArray = npt.NDArray[np.int64]

# A bincount over the whole key space beats sorting while the space is at most
# this many times the number of groups being merged.
_DENSE_FACTOR = 8


@dataclass(frozen=True, eq=False)
class Partition:
    """The classes of one node.

    Attributes:
        node: the node's levels.
        codes: ``(classes, attributes)`` codes of each class at the node's levels.
        sizes: rows per class.
    """

    node: Node
    codes: IntArray
    sizes: IntArray

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.sizes)


class Rollup:
    """Computes partitions of nodes from the partition of any specialization."""

    def __init__(self, encoded: EncodedTable, frequency_set: FrequencySet) -> None:
        self.encoded = encoded
        self.base = Partition(
            node=tuple(0 for _ in encoded.attributes),
            codes=np.ascontiguousarray(frequency_set.codes, dtype=np.int64),
            sizes=frequency_set.counts,
        )
        # up[a][(low, high)] maps a level-`low` code of attribute a to its level-`high` code.
        self.up: list[dict[tuple[int, int], IntArray]] = []
        for attribute in encoded.attributes:
            maps: dict[tuple[int, int], IntArray] = {}
            for low in range(attribute.height + 1):
                some_leaf = np.zeros(attribute.cardinality(low), dtype=np.int64)
                some_leaf[attribute.level_maps[low]] = np.arange(attribute.cardinality(0))
                for high in range(low + 1, attribute.height + 1):
                    maps[(low, high)] = attribute.level_maps[high][some_leaf]
            self.up.append(maps)

    def partition(self, node: Node, source: Partition) -> Partition:
        """The partition of ``node``, rolled up from ``source`` (a specialization of it)."""
        columns = []
        for a, (low, high) in enumerate(zip(source.node, node, strict=True)):
            column = source.codes[:, a]
            columns.append(column if low == high else self.up[a][(low, high)][column])
        radices = [
            a.cardinality(level) for a, level in zip(self.encoded.attributes, node, strict=True)
        ]
        space = 1
        for radix in radices:
            space *= radix
        if space >= KEY_LIMIT:
            # Too many combinations for one integer key: group the code rows directly.
            stacked = np.column_stack(columns) if columns else np.zeros((len(source.sizes), 0))
            codes, inverse = np.unique(stacked, axis=0, return_inverse=True)
            sizes = np.bincount(inverse.reshape(-1), weights=source.sizes).astype(np.int64)
            return Partition(node=node, codes=codes.astype(np.int64), sizes=sizes)
        keys, space = pack_codes(columns, radices)
        if space <= _DENSE_FACTOR * max(len(keys), 1024):
            all_sizes = np.bincount(keys, weights=source.sizes, minlength=space)
            distinct = np.flatnonzero(all_sizes)
            sizes = all_sizes[distinct].astype(np.int64)
        else:
            distinct, inverse = np.unique(keys, return_inverse=True)
            sizes = np.bincount(inverse.reshape(-1), weights=source.sizes).astype(np.int64)
        return Partition(node=node, codes=_decode(distinct, radices), sizes=sizes)


def _decode(keys: IntArray, radices: list[int]) -> IntArray:
    """Split mixed-radix keys back into one code per attribute."""
    codes = np.empty((len(keys), len(radices)), dtype=np.int64)
    rest = keys.astype(np.int64, copy=True)
    for a in range(len(radices) - 1, -1, -1):
        rest, codes[:, a] = np.divmod(rest, radices[a])
    return codes


class PartitionCache:
    """Recently computed partitions, within a budget of stored codes.

    Only partitions smaller than the frequency set are worth keeping: rolling up
    from the frequency set itself is the fallback. Cached nodes and class counts
    are kept in arrays so that finding the best source is one vectorized test.
    """

    def __init__(self, base: Partition, *, budget: int = 20_000_000, slots: int = 128) -> None:
        self.base = base
        self.budget = budget
        self._partitions: list[Partition | None] = [None] * slots
        self._nodes = np.zeros((slots, len(base.node)), dtype=np.int16)
        # Empty slots hold an impossible class count, so they are never chosen.
        self._classes = np.full(slots, np.iinfo(np.int64).max, dtype=np.int64)
        self._next = 0
        self._stored = 0

    def best_source(self, node: Node) -> Partition:
        """The cached specialization of ``node`` with the fewest classes (or the base)."""
        below = np.all(self._nodes <= np.asarray(node, dtype=np.int16), axis=1)
        candidates = np.where(below, self._classes, np.iinfo(np.int64).max)
        slot = int(np.argmin(candidates))
        chosen = self._partitions[slot]
        if chosen is None or candidates[slot] >= self.base.n_classes:
            return self.base
        return chosen

    def add(self, partition: Partition) -> None:
        """Keep ``partition`` if it is worth it, replacing the oldest entry."""
        size = partition.codes.size
        if partition.n_classes >= self.base.n_classes // 2 or size > self.budget:
            return
        slot = self._next
        self._next = (slot + 1) % len(self._partitions)
        old = self._partitions[slot]
        if old is not None:
            self._stored -= old.codes.size
        self._partitions[slot] = partition
        self._nodes[slot] = partition.node
        self._classes[slot] = partition.n_classes
        self._stored += size
        # Over budget: forget the largest entries until it fits.
        while self._stored > self.budget:
            largest = int(
                np.argmax(np.where(self._classes < np.iinfo(np.int64).max, self._classes, -1))
            )
            dropped = self._partitions[largest]
            assert dropped is not None
            self._stored -= dropped.codes.size
            self._partitions[largest] = None
            self._classes[largest] = np.iinfo(np.int64).max
