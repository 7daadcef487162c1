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
    >>> fs = FrequencySet.from_codes(enc.row_code_matrix())
    >>> rollup = Rollup(enc, fs)
    >>> p = rollup.partition((1,), rollup.base)
    >>> p.sizes.tolist(), rollup.codes(p).tolist()
    ([2, 2], [[0], [1]])
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable, FrequencySet
from kanonym.encode.frequency import KEY_LIMIT
from kanonym.encode.grouping import count_hashed
from kanonym.lattice import Node
from kanonym.search.kernels import class_keys, count_dense, fewest_below, sum_rows

IntArray = npt.NDArray[np.int64]

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
        self.counter = np.zeros(1024, dtype=np.int64)
        # Reusable buffers sized to the frequency set, the largest possible
        # source: keys (int32 for dense key spaces, int64 for hashed ones) and
        # the dense count's working arrays.
        tuples = len(frequency_set.counts)
        self._keys32 = np.empty(tuples, dtype=np.int32)
        self._keys64 = np.empty(tuples, dtype=np.int64)
        self._scratch = np.empty((2, tuples), dtype=np.int64)
        self._no_classes = np.empty(0, dtype=np.int64)
        # Values per attribute and level, for the radices of a node's keys.
        self.cardinalities = [
            [a.cardinality(level) for level in range(a.height + 1)] for a in encoded.attributes
        ]
        # Every tuple's code at every level, [attribute, level, tuple], padded to
        # the tallest hierarchy: keys are read from contiguous streams, of
        # uint16 when every level has at most 65,536 values (kernels.py).
        tallest = max((a.height for a in encoded.attributes), default=0) + 1
        widest = max((max(c) for c in self.cardinalities), default=1)
        self.generalized = np.zeros(
            (len(encoded.attributes), tallest, len(frequency_set.counts)),
            dtype=np.uint16 if widest <= 1 << 16 else np.int32,
        )
        for a, attribute in enumerate(encoded.attributes):
            leaves = np.ascontiguousarray(frequency_set.codes[:, a])
            for level, level_map in enumerate(attribute.level_maps):
                self.generalized[a, level] = level_map[leaves]

    def codes(self, partition: Partition) -> IntArray:
        """``(classes, attributes)``: each class's code per attribute at its node's levels."""
        return np.stack(
            [
                self.generalized[a, level, partition.members].astype(np.int64)
                for a, level in enumerate(partition.node)
            ],
            axis=1,
        ).reshape(len(partition.members), len(partition.node))

    def partition(self, node: Node, source: Partition) -> Partition:
        """The partition of ``node``, rolled up from ``source`` (a specialization of it)."""
        # Rows' classes are needed only to add sensitive-value histograms up.
        return self._group(node, source, with_classes=bool(source.histograms))[0]

    def group(self, node: Node, source: Partition) -> tuple[Partition, IntArray]:
        """The partition of ``node`` and the class of each row of the source used.

        The source used is ``source``, or the frequency set (``self.base``)
        when ``source`` is too large to pay; grouping from ``self.base`` gives
        every frequency-set tuple's class.
        """
        return self._group(node, source, with_classes=True)

    def _group(
        self, node: Node, source: Partition, *, with_classes: bool
    ) -> tuple[Partition, IntArray]:
        counts = [values[level] for values, level in zip(self.cardinalities, node, strict=True)]
        space = math.prod(counts)
        if space >= KEY_LIMIT:
            # Too many combinations for one integer key: group the code rows directly.
            columns = [self.generalized[a, level, source.members] for a, level in enumerate(node)]
            _, first, inverse = np.unique(
                np.column_stack(columns), axis=0, return_index=True, return_inverse=True
            )
            class_of = inverse.astype(np.int64).reshape(-1)
            sizes = np.bincount(class_of, weights=source.sizes).astype(np.int64)
            members = source.members[first]
            return self._with_histograms(node, members, sizes, class_of, source)
        if source.n_classes * _ROLLUP_ADVANTAGE >= self.base.n_classes:
            source = self.base
        levels = np.asarray(node, dtype=np.int64)
        if space <= _DENSE_SLOTS:
            keys32 = self._keys32
            class_keys(self.generalized, levels, source.members, np.array(counts, np.int32), keys32)
            if len(self.counter) < space:
                self.counter = np.zeros(max(space, 2 * len(self.counter)), dtype=np.int64)
            class_of = (
                np.empty(source.n_classes, dtype=np.int64) if with_classes else self._no_classes
            )
            members, sizes = count_dense(
                keys32, source.sizes, source.members, self.counter, self._scratch, class_of
            )
        else:
            keys = self._keys64[: source.n_classes]
            class_keys(self.generalized, levels, source.members, np.array(counts), keys)
            members, sizes, class_of = count_hashed(keys, source.sizes, source.members)
        return self._with_histograms(node, members, sizes, class_of, source)

    def _with_histograms(
        self, node: Node, members: IntArray, sizes: IntArray, class_of: IntArray, source: Partition
    ) -> tuple[Partition, IntArray]:
        # Sensitive-value histograms of merged classes add up.
        histograms = {
            name: sum_rows(class_of, rows, len(sizes)) for name, rows in source.histograms.items()
        }
        return Partition(node=node, members=members, sizes=sizes, histograms=histograms), class_of


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
        self._nodes = np.zeros((slots, len(base.node)), dtype=np.int16)
        # Empty slots hold an impossible class count, so they are never chosen.
        self._classes = np.full(slots, self._NONE, dtype=np.int64)
        self._next = 0
        self._stored = 0

    def best_source(self, node: Node) -> Partition:
        """The kept specialization of ``node`` with the fewest classes (or the base)."""
        slot = fewest_below(self._nodes, self._classes, np.array(node, dtype=np.int16))
        chosen = self._partitions[slot] if slot >= 0 else None
        if chosen is None or chosen.n_classes >= self.base.n_classes:
            return self.base
        return chosen

    def _place(self, slot: int, partition: Partition) -> None:
        old = self._partitions[slot]
        if old is not None:
            self._stored -= old.members.size
        self._partitions[slot] = partition
        self._nodes[slot] = partition.node
        self._classes[slot] = partition.n_classes
        self._stored += partition.members.size

    def add(self, partition: Partition) -> None:
        """Keep ``partition`` in the ring if it is worth it, replacing the oldest entry."""
        size = partition.members.size
        if partition.n_classes >= self.base.n_classes // 2 or self._stored + size > self.budget:
            return
        self._place(self._next, partition)
        self._next = (self._next + 1) % self.ring_slots
