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

A :class:`Partition` keeps, per class, its size and one member tuple (an
index into the frequency set), which gives the class's codes at the node's
levels, or any higher ones, by lookup. A :class:`PartitionCache` keeps recent partitions within a
memory budget and picks, for a new node, the cached specialization with the
fewest classes.

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode, FrequencySet
    >>> h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*", "*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "b", "c", "c"]}), {"x": h})
    >>> fs = enc.frequency_set
    >>> rollup = Rollup(enc, fs)
    >>> p = rollup.partition((1,), rollup.base)
    >>> p.sizes.tolist(), rollup.codes(p).tolist()
    ([2, 2], [[0], [1]])
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable, FrequencySet
from kanonym.encode.frequency import KEY_LIMIT
from kanonym.encode.grouping import HashTable, count_into
from kanonym.evaluation.kernels import (
    class_keys,
    dense_classes,
    fewest_below,
    generalize_column,
    sum_rows,
)
from kanonym.lattice import Node

IntArray = npt.NDArray[np.int64]

_NO_HISTOGRAMS: Mapping[str, IntArray] = MappingProxyType({})

# Key spaces up to this many slots are counted in one reusable dense counter
# (8 MiB), larger ones in a hash table (benchmarks/README.md).
_DENSE_SLOTS = 1 << 20
# Reading a class's codes through its member tuple costs about 5 ns a row,
# reading the frequency set's own codes as a stream about 1 ns, and dense
# counting about 2.5 ns; so a specialization serves as source only when it has
# under half the frequency set's tuples (benchmarks/README.md).
_ROLLUP_ADVANTAGE = 2


@dataclass(frozen=True, eq=False)
class Partition:
    """The classes of one node.

    Attributes:
        node: the node's levels.
        members: per class, the frequency-set index of one of its tuples.
        sizes: rows per class.
        histograms: per sensitive attribute, ``(classes, values)`` counts of
            each sensitive value code in each class (empty without sensitive
            attributes).
    """

    node: Node
    members: IntArray
    sizes: IntArray
    histograms: Mapping[str, IntArray] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.sizes)


class Rollup:
    """Computes partitions of nodes from the partition of any specialization."""

    def __init__(
        self,
        encoded: EncodedTable,
        frequency_set: FrequencySet,
        histograms: Mapping[str, IntArray] | None = None,
    ) -> None:
        self.encoded = encoded
        self.base = Partition(
            node=tuple(0 for _ in encoded.attributes),
            members=np.arange(len(frequency_set.counts), dtype=np.int64),
            sizes=frequency_set.counts,
            histograms=dict(histograms or {}),
        )
        # Grown on demand up to _DENSE_SLOTS.
        self.counter = np.zeros(1024, dtype=np.int64)
        # Reusable buffers sized to the frequency set, the largest possible
        # source: keys (int32 for dense key spaces, int64 for hashed ones) and
        # the dense count's working arrays.
        tuples = len(frequency_set.counts)
        self._keys32 = np.empty(tuples, dtype=np.int32)
        self._keys64 = np.empty(tuples, dtype=np.int64)
        self._scratch = np.empty((2, tuples), dtype=np.int64)
        self._no_classes = np.empty(0, dtype=np.int64)
        self._table: HashTable | None = None
        # Values per attribute and level, for the radices of a node's keys.
        cardinalities = [
            [a.cardinality(level) for level in range(a.height + 1)] for a in encoded.attributes
        ]
        # Every tuple's code at every level, [attribute, level, tuple], padded to
        # the tallest hierarchy: keys are read from contiguous streams, of
        # uint16 when every level has at most 65,536 values (kernels.py).
        tallest = max((a.height for a in encoded.attributes), default=0) + 1
        widest = max((max(c) for c in cardinalities), default=1)
        self._radices = np.ones((len(encoded.attributes), tallest), dtype=np.int64)
        for a, values in enumerate(cardinalities):
            self._radices[a, : len(values)] = values
        self.generalized = np.zeros(
            (len(encoded.attributes), tallest, len(frequency_set.counts)),
            dtype=np.uint16 if widest <= 1 << 16 else np.int32,
        )
        for a, attribute in enumerate(encoded.attributes):
            generalize_column(
                frequency_set.codes, a, np.stack(attribute.level_maps), self.generalized[a]
            )

    def codes(self, partition: Partition) -> IntArray:
        """``(classes, attributes)``: each class's code per attribute at its node's levels."""
        return np.stack(
            [
                self.generalized[a, level, partition.members].astype(np.int64)
                for a, level in enumerate(partition.node)
            ],
            axis=1,
        ).reshape(len(partition.members), len(partition.node))

    def partition(self, node: Node, source: Partition, levels: IntArray | None = None) -> Partition:
        """The partition of ``node``, rolled up from ``source`` (a specialization of it).

        ``levels`` may give ``node`` as an int64 array already made.
        """
        # Rows' classes are needed only to add sensitive-value histograms up.
        return self._group(node, source, bool(source.histograms), levels)[0]

    def group(self, node: Node, source: Partition) -> tuple[Partition, IntArray]:
        """The partition of ``node`` and the class of each row of the source used.

        The source used is ``source``, or the frequency set (``self.base``)
        when ``source`` is too large to pay; grouping from ``self.base`` gives
        every frequency-set tuple's class.
        """
        return self._group(node, source, True, None)

    def _group(
        self, node: Node, source: Partition, with_classes: bool, levels: IntArray | None
    ) -> tuple[Partition, IntArray]:
        if levels is None:
            levels = np.array(node, dtype=np.int64)
        if source.n_classes * _ROLLUP_ADVANTAGE >= self.base.n_classes:
            source = self.base
        class_of = np.empty(source.n_classes, dtype=np.int64) if with_classes else self._no_classes
        members, sizes, space = dense_classes(
            self.generalized,
            self._radices,
            levels,
            source.members,
            source.sizes,
            self.counter,
            self._keys32,
            self._scratch,
            class_of,
        )
        if space > _DENSE_SLOTS:
            members, sizes, class_of = self._sparse_classes(levels, source, class_of)
        elif space > 0:
            # The counter was too small: grow it and count again.
            self.counter = np.zeros(min(max(space, 2 * len(self.counter)), _DENSE_SLOTS), np.int64)
            return self._group(node, source, with_classes, levels)
        if not source.histograms:
            return Partition(node, members, sizes, _NO_HISTOGRAMS), class_of
        # Sensitive-value histograms of merged classes add up.
        histograms = {
            name: sum_rows(class_of, rows, len(sizes)) for name, rows in source.histograms.items()
        }
        return Partition(node, members, sizes, histograms), class_of

    def _sparse_classes(
        self, levels: IntArray, source: Partition, class_of: IntArray
    ) -> tuple[IntArray, IntArray, IntArray]:
        """Classes for key spaces too large for the dense counter: hashed keys,
        or, beyond 64-bit keys, the code rows themselves."""
        counts = self._radices[np.arange(len(levels)), levels]
        if math.prod(counts.tolist()) >= KEY_LIMIT:
            columns = [self.generalized[a, level, source.members] for a, level in enumerate(levels)]
            _, first, inverse = np.unique(
                np.column_stack(columns), axis=0, return_index=True, return_inverse=True
            )
            class_of = inverse.astype(np.int64).reshape(-1)
            sizes = np.bincount(class_of, weights=source.sizes).astype(np.int64)
            return source.members[first], sizes, class_of
        keys = self._keys64[: source.n_classes]
        class_keys(self.generalized, levels, source.members, counts, keys)
        if self._table is None:
            self._table = HashTable(self.base.n_classes)
        table = self._table
        members, sizes = count_into(
            keys, source.sizes, source.members, table.slots, table.scratch, class_of
        )
        return members, sizes, class_of


class PartitionCache:
    """Partitions kept as roll-up sources, within a budget of stored classes.

    Recently computed partitions are kept in a ring of ``slots`` entries, only
    when smaller than half the frequency set (rolling up from the frequency set
    itself is the fallback). Nodes and class
    counts live in arrays so that finding the best source is one vectorized test.
    """

    _NONE = np.iinfo(np.int64).max

    def __init__(self, base: Partition, *, budget: int = 4_000_000, slots: int = 128) -> None:
        self.base = base
        self.budget = budget
        self.ring_slots = slots
        self._partitions: list[Partition | None] = [None] * slots
        self._nodes = np.zeros((slots, len(base.node)), dtype=np.int64)
        # Empty slots hold an impossible class count, so they are never chosen.
        self._classes = np.full(slots, self._NONE, dtype=np.int64)
        self._next = 0
        self._stored = 0

    def best_source(self, levels: IntArray) -> Partition:
        """The kept specialization of the node with ``levels`` with the fewest
        classes (or the base)."""
        slot = fewest_below(self._nodes, self._classes, levels)
        chosen = self._partitions[slot] if slot >= 0 else None
        if chosen is None or chosen.n_classes >= self.base.n_classes:
            return self.base
        return chosen

    def add(self, partition: Partition, levels: IntArray) -> None:
        """Keep ``partition`` (of the node with ``levels``) in the ring if it is
        worth it, replacing the oldest entry."""
        size = partition.n_classes
        if size >= self.base.n_classes // 2:
            return
        slot = self._next
        old = self._partitions[slot]
        stored = self._stored - (0 if old is None else old.n_classes) + size
        if stored > self.budget:
            return
        self._partitions[slot] = partition
        self._nodes[slot] = levels
        self._classes[slot] = size
        self._stored = stored
        self._next = (slot + 1) % self.ring_slots
