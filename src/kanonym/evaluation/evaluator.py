"""Checking one lattice node against the privacy models, on the frequency set.

For a node (distance vector), the classes of a specialization already computed
(or the frequency set itself) are mapped to the node's levels through the
per-level lookup arrays, packed into integer keys, and merged, summing their
sizes, all vectorized (see :mod:`kanonym.evaluation.partition`). The rows of classes that fail
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.encode import (
    EncodedTable,
    FrequencySet,
    GroupedSensitiveAttribute,
    SensitiveAttribute,
)
from kanonym.errors import InputError
from kanonym.evaluation.partition import Partition, PartitionCache, Rollup
from kanonym.lattice import Node
from kanonym.metrics import ClassView, UtilityMetric
from kanonym.models import ClassStatistics, PrivacyModel

IntArray = npt.NDArray[np.int64]


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
        proxy: a necessary condition of ``satisfied`` that searches may tag by
            (see ``NodeEvaluator.proxy_monotone``); None when it is
            ``satisfied`` itself.
    """

    node: Node
    suppressed_rows: int
    released_classes: int
    satisfied: bool
    score: float | None = None
    bound: float | None = None
    proxy: bool | None = None

    @property
    def feasible(self) -> bool:
        """The test searches tag by: ``proxy`` if given, else ``satisfied``."""
        return self.satisfied if self.proxy is None else self.proxy


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
    report as "nodes checked". Classes are rolled up from the smallest cached
    specialization (:mod:`kanonym.evaluation.partition`). When ``metric`` is set,
    every evaluation also carries the metric's score for the node.
    """

    metric: UtilityMetric | None

    def __init__(
        self,
        encoded: EncodedTable,
        models: Sequence[PrivacyModel],
        *,
        max_suppressed_rows: int,
        frequency_set: FrequencySet | None = None,
        sensitive: Sequence[SensitiveAttribute | GroupedSensitiveAttribute] = (),
    ) -> None:
        self.encoded = encoded
        self.models = tuple(models)
        self.sensitive = tuple(sensitive)
        available = {a.name for a in self.sensitive}
        for model in self.models:
            missing = [name for name in model.sensitive_attributes if name not in available]
            if missing:
                raise InputError(
                    f"model {model.name} needs sensitive attribute(s) {missing}; "
                    "declare them in `sensitive`"
                )
        self.max_suppressed_rows = max_suppressed_rows
        self.frequency_set = frequency_set or encoded.frequency_set
        self.checks = 0
        self.metric = None
        self._cache: dict[Node, NodeEvaluation] = {}
        # Per sensitive attribute: value counts of every tuple and of the table.
        self._overall = {a.name: a.overall() for a in self.sensitive}
        self._values = {a.name: a.labels for a in self.sensitive}
        self._rollup = Rollup(
            encoded,
            self.frequency_set,
            {a.name: a.histograms(self.frequency_set) for a in self.sensitive},
        )
        self._partitions = PartitionCache(self._rollup.base)

    def _satisfied(
        self, sizes: IntArray, histograms: Mapping[str, IntArray]
    ) -> npt.NDArray[np.bool_]:
        statistics = (
            ClassStatistics(
                sizes=sizes, sensitive=histograms, overall=self._overall, values=self._values
            )
            if self.sensitive
            else ClassStatistics(sizes=sizes)
        )
        if not self.models:
            return np.ones(len(sizes), dtype=np.bool_)
        first, *others = self.models
        satisfied = first.satisfied_classes(statistics)
        for model in others:
            satisfied = satisfied & model.satisfied_classes(statistics)
        return satisfied

    def classes(self, node: Node) -> NodeClasses:
        """The classes of ``node`` with the class of every frequency-set tuple.

        Used to transform the table; searches use :meth:`view`, which is cheaper.
        """
        partition, tuple_class = self._rollup.group(node, self._rollup.base)
        satisfied = self._satisfied(partition.sizes, partition.histograms)
        return NodeClasses(tuple_class=tuple_class, sizes=partition.sizes, satisfied=satisfied)

    def partition(self, node: Node) -> Partition:
        """The classes of ``node`` (codes, sizes, sensitive histograms), rolled up."""
        levels = np.array(node, dtype=np.int64)
        partition = self._rollup.partition(node, self._partitions.best_source(levels), levels)
        self._partitions.add(partition, levels)
        return partition

    def view(self, node: Node) -> ClassView:
        """The classes of ``node`` as models and metrics see them (sizes and codes)."""
        partition = self.partition(node)
        satisfied = self._satisfied(partition.sizes, partition.histograms)
        return ClassView(partition.sizes, satisfied, lambda: self._rollup.codes(partition))

    def monotone(self) -> bool:
        """Whether acceptance is monotone: a satisfying node's generalizations satisfy too.

        True when every model is monotone under the suppression setting in use
        (searches that prune by inference need it).
        """
        return self.proxy_monotone()

    def proxy_monotone(self) -> bool:
        """Whether :attr:`NodeEvaluation.feasible` is monotone under generalization.

        It is acceptance itself here, so the same as :meth:`monotone`; an
        evaluator whose acceptance is not monotone may still offer a monotone
        necessary condition for searches to tag by.
        """
        return all(self.declared_monotone(m) for m in self.models)

    def declared_monotone(self, declarer: PrivacyModel | UtilityMetric) -> bool:
        """Whether a model or metric declares itself monotone under generalization
        with this evaluator's suppression setting (suppressing or not)."""
        if self.max_suppressed_rows > 0:
            return declarer.monotone_with_suppression
        return declarer.monotone_without_suppression

    def evaluated(self) -> list[NodeEvaluation]:
        """Every node evaluated so far."""
        return list(self._cache.values())

    def use_metric(self, metric: UtilityMetric | None) -> None:
        """Score every later evaluation with ``metric`` (clears the cache)."""
        if metric is not self.metric:
            self.metric = metric
            self._cache.clear()

    def evaluate(self, node: Node) -> NodeEvaluation:
        """Check ``node`` (once; later calls hit the cache)."""
        cached = self._cache.get(node)
        if cached is not None:
            return cached
        self.checks += 1
        view = self.view(node)
        metric = self.metric
        suppressed = view.suppressed_rows
        evaluation = NodeEvaluation(
            node=node,
            suppressed_rows=suppressed,
            released_classes=view.released_classes,
            satisfied=suppressed <= self.max_suppressed_rows,
            score=None if metric is None else metric.score(node, view),
            bound=None if metric is None else metric.inherited_bound(view),
        )
        self._cache[node] = evaluation
        return evaluation
