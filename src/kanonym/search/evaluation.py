"""Checking one lattice node against the privacy models, on the frequency set.

For a node (distance vector), each distinct quasi-identifier tuple of the
frequency set is mapped to its generalization through the per-level lookup
arrays, the generalized tuples are packed into integer keys, and class sizes
are summed from the tuple counts, all vectorized. The rows of classes that fail
a model are the *minimal required suppression* of the node (Samarati & Sweeney
1998, section 4): exactly those rows must go for the node to satisfy the
models, and the node is acceptable when they are at most MaxSup.

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.models import KAnonymity
    >>> h = Hierarchy("race", (("asian", "black"), ("person", "person")))
    >>> enc = encode(pl.DataFrame({"race": ["asian", "asian", "black"]}), {"race": h})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=1)
    >>> ev.evaluate((0,)).suppressed_rows, ev.evaluate((0,)).satisfied
    (1, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable, FrequencySet, pack_codes
from kanonym.lattice import Node
from kanonym.metrics import ClassView, UtilityMetric
from kanonym.models import ClassStatistics, PrivacyModel

IntArray = npt.NDArray[np.int64]

# A bincount over the whole key space beats sorting while the space is at most
# this many times the number of distinct tuples.
_DENSE_FACTOR = 8


@dataclass(frozen=True)
class NodeEvaluation:
    """Outcome of checking one node.

    Attributes:
        node: the distance vector.
        suppressed_rows: rows in classes that fail a model (minimal required
            suppression).
        released_classes: classes that satisfy every model (kept).
        satisfied: whether ``suppressed_rows`` is within the limit.
        score: the utility metric's value, when the evaluator has a metric.
        bound: a lower bound the metric derives for every generalization of
            the node (see ``UtilityMetric.inherited_bound``), if any.
    """

    node: Node
    suppressed_rows: int
    released_classes: int
    satisfied: bool
    score: float | None = None
    bound: float | None = None


@dataclass(frozen=True, eq=False)
class NodeClasses:
    """The equivalence classes of one node, over the frequency set.

    Attributes:
        tuple_class: class index of each frequency-set tuple.
        sizes: rows per class.
        satisfied: per class, whether every model holds.
    """

    tuple_class: IntArray
    sizes: IntArray
    satisfied: npt.NDArray[np.bool_]


class NodeEvaluator:
    """Evaluates nodes against models with a suppression limit, caching outcomes.

    ``checks`` counts distinct nodes actually computed, the figure searches
    report as "nodes checked". When ``metric`` is set, every evaluation also
    carries the metric's score for the node.
    """

    metric: UtilityMetric | None

    def __init__(
        self,
        encoded: EncodedTable,
        models: Sequence[PrivacyModel],
        *,
        max_suppressed_rows: int,
        frequency_set: FrequencySet | None = None,
    ) -> None:
        self.encoded = encoded
        self.models = tuple(models)
        self.max_suppressed_rows = max_suppressed_rows
        self.frequency_set = frequency_set or FrequencySet.from_codes(
            encoded.row_code_matrix(), tuple(a.cardinality(0) for a in encoded.attributes)
        )
        self.checks = 0
        self.metric = None
        self._cache: dict[Node, NodeEvaluation] = {}
        # Each tuple's code at every level of every attribute, computed once and
        # stored contiguously: a node check then only packs and counts.
        codes = self.frequency_set.codes
        self._generalized = tuple(
            tuple(np.ascontiguousarray(level_map[codes[:, j]]) for level_map in a.level_maps)
            for j, a in enumerate(encoded.attributes)
        )

    def _keys(self, node: Node) -> tuple[IntArray, int]:
        attributes = self.encoded.attributes
        return pack_codes(
            [self._generalized[j][level] for j, level in enumerate(node)],
            [a.cardinality(level) for a, level in zip(attributes, node, strict=True)],
        )

    def _dense(self, space: int) -> bool:
        return space <= _DENSE_FACTOR * max(len(self.frequency_set.counts), 1024)

    def _satisfied(self, sizes: IntArray) -> npt.NDArray[np.bool_]:
        statistics = ClassStatistics(sizes=sizes)
        satisfied = np.ones(len(sizes), dtype=np.bool_)
        for model in self.models:
            satisfied &= model.satisfied_classes(statistics)
        return satisfied

    def classes(self, node: Node) -> NodeClasses:
        """Group the frequency set into the classes of ``node``."""
        counts = self.frequency_set.counts
        keys, space = self._keys(node)
        if self._dense(space):
            all_sizes = np.bincount(keys, weights=counts, minlength=space).astype(np.int64)
            occupied = all_sizes > 0
            tuple_class = (np.cumsum(occupied) - 1)[keys]
            sizes = all_sizes[occupied]
        else:
            _, inverse = np.unique(keys, return_inverse=True)
            tuple_class = inverse.astype(np.int64, copy=False).reshape(-1)
            sizes = np.bincount(tuple_class, weights=counts).astype(np.int64)
        return NodeClasses(tuple_class=tuple_class, sizes=sizes, satisfied=self._satisfied(sizes))

    def _class_sizes(self, node: Node) -> IntArray:
        # Sizes only, in any order: all a class-by-class model needs to decide.
        counts = self.frequency_set.counts
        keys, space = self._keys(node)
        if self._dense(space):
            all_sizes = np.bincount(keys, weights=counts, minlength=space)
            return all_sizes[all_sizes > 0].astype(np.int64)
        _, inverse = np.unique(keys, return_inverse=True)
        return np.bincount(inverse.reshape(-1), weights=counts).astype(np.int64)

    def evaluated(self) -> list[NodeEvaluation]:
        """Every node evaluated so far."""
        return list(self._cache.values())

    def use_metric(self, metric: UtilityMetric | None) -> None:
        """Score every later evaluation with ``metric`` (clears the cache)."""
        if metric is not self.metric:
            self.metric = metric
            self._cache.clear()

    def view(self, node: Node) -> ClassView:
        """The classes of ``node`` as metrics see them."""
        classes = self.classes(node)
        return ClassView(classes.sizes, classes.satisfied, classes.tuple_class)

    def evaluate(self, node: Node) -> NodeEvaluation:
        """Check ``node`` (once; later calls hit the cache)."""
        cached = self._cache.get(node)
        if cached is not None:
            return cached
        self.checks += 1
        metric = self.metric
        if metric is not None and metric.needs_tuple_classes:
            view = self.view(node)
        else:
            sizes = self._class_sizes(node)
            view = ClassView(sizes, self._satisfied(sizes))
        suppressed = view.suppressed_rows
        evaluation = NodeEvaluation(
            node=node,
            suppressed_rows=suppressed,
            released_classes=int(np.count_nonzero(view.satisfied)),
            satisfied=suppressed <= self.max_suppressed_rows,
            score=None if metric is None else metric.score(node, view),
            bound=None if metric is None else metric.inherited_bound(view),
        )
        self._cache[node] = evaluation
        return evaluation
