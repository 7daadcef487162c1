"""Checking one lattice node against the privacy models, on the frequency set.

For a node (distance vector), the classes of a specialization already computed
(or the frequency set itself) are mapped to the node's levels through the
per-level lookup arrays, packed into integer keys, and merged, summing their
sizes, all vectorized (see :mod:`kanonym.evaluation.partition`). The rows of classes that fail
a model are the *minimal required suppression* of the node (Samarati & Sweeney
1998, section 4): exactly those rows must go for the node to satisfy the
models, and the node is acceptable when they are at most MaxSup. Models
judged on the whole release (risk thresholds, :class:`kanonym.models.base.SampleModel`)
then suppress some of the smallest kept classes as well, as ARX enforces its
sample-based criteria; those rows count against MaxSup too.

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
from kanonym.models import ClassStatistics, PrivacyModel, admits_absent_classes
from kanonym.models.base import SampleModel

IntArray = npt.NDArray[np.int64]

# The histogram that carries a sample's rows when a population's tuples roll up.
_SAMPLE = "\x00sample rows"


@dataclass(frozen=True)
class NodeEvaluation:
    """Outcome of checking one node.

    Attributes:
        node: the distance vector.
        suppressed_rows: rows in classes that fail a model (minimal required
            suppression), and in the classes a model judged on the whole
            release suppresses.
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
        histograms = {a.name: a.histograms(self.frequency_set) for a in self.sensitive}
        rolled = self.frequency_set
        population = self.frequency_set.population
        if population is not None:
            # A sample of a population: the population's tuples roll up, their sizes being
            # population rows (always positive, as the roll-up's counting needs), and the
            # sample's rows ride along as one more histogram.
            rolled = FrequencySet(codes=rolled.codes, counts=population)
            histograms[_SAMPLE] = self.frequency_set.counts.reshape(-1, 1)
        self._rollup = Rollup(encoded, rolled, histograms)
        # Models that judge the population's classes holding no sample row.
        self._judge_absent = any(not admits_absent_classes(m) for m in self.models)
        self._partitions = PartitionCache(self._rollup.base)
        # Models judged on the whole release (risk thresholds), enforced after the others.
        self._sample_models: tuple[SampleModel, ...] = tuple(
            m for m in self.models if isinstance(m, SampleModel)
        )
        rows = self.frequency_set.n_rows
        for sample_model in self._sample_models:
            # Checks the parameters against the table (a population size below its rows).
            sample_model.measure(np.array([rows], dtype=np.int64), rows=rows)

    def _sample_suppression(
        self, partition: Partition, satisfied: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.bool_]:
        """``satisfied`` with the classes the sample-based models suppress too.

        As ARX (``HashGroupifyDistribution``): the kept classes are ordered by
        size, then by the metric's per-class loss when it has one
        (``class_losses``, ARX's Loss), then by first appearance in the table
        (a class's member tuple is its first: tuples are numbered in order of
        first appearance, and roll-ups keep the first; ARX orders by the least
        row index, the same order for a table in memory, while an engine that
        groups where the rows live numbers tuples in its grouping's order, so
        which of equally ranked classes go may differ there, never how many
        rows); each sample-based model
        in turn says how many of the first it suppresses. Nothing more is
        suppressed when the other models already exceed the limit (the node
        fails anyway).
        """
        if not self._sample_models:
            return satisfied
        kept = np.flatnonzero(satisfied)
        sizes = partition.sizes[kept]
        budget = self.max_suppressed_rows - int(partition.sizes.sum() - sizes.sum())
        if budget < 0:
            return satisfied
        ascending = np.sort(sizes)
        rows = self.frequency_set.n_rows
        prefix = 0
        for model in self._sample_models:
            spent = int(ascending[:prefix].sum())
            if spent > budget:
                break
            prefix += model.classes_to_suppress(
                ascending[prefix:], rows=rows, budget=budget - spent
            )
        if not prefix:
            return satisfied
        keys: list[npt.NDArray[np.generic]] = [partition.members[kept]]
        losses = getattr(self.metric, "class_losses", None)
        if callable(losses):
            codes = self._rollup.codes(partition)[kept]
            keys.append(np.asarray(losses(partition.node, codes, sizes), dtype=np.float64))
        keys.append(sizes)
        order = np.lexsort(keys)
        out = satisfied.copy()
        out[kept[order[:prefix]]] = False
        return out

    def _statistics(self, partition: Partition) -> tuple[ClassStatistics, Partition]:
        """What the models see of ``partition``'s classes, and the partition as metrics
        see it: with a population, only the classes holding sample rows, sized by them
        (:meth:`_blocked` judges the others)."""
        histograms = partition.histograms
        population = None
        if self.frequency_set.population is not None:
            sample = histograms[_SAMPLE][:, 0]
            held = sample > 0
            population = partition.sizes[held]
            partition = Partition(
                partition.node,
                partition.members[held],
                sample[held],
                {name: h[held] for name, h in histograms.items() if name != _SAMPLE},
            )
            histograms = partition.histograms
        statistics = ClassStatistics(
            sizes=partition.sizes,
            sensitive=histograms,
            overall=self._overall,
            values=self._values,
            population=population,
        )
        return statistics, partition

    def _blocked(self, partition: Partition) -> bool:
        """Whether a class of the population holding no sample row fails a model that
        judges such classes too (delta-presence with delta_min > 0: those people are
        in the sample with probability 0). No suppression can mend it."""
        if self.frequency_set.population is None or not self._judge_absent:
            return False
        return bool((partition.histograms[_SAMPLE][:, 0] == 0).any())

    def _satisfied(self, statistics: ClassStatistics) -> npt.NDArray[np.bool_]:
        if not self.models:
            return np.ones(len(statistics.sizes), dtype=np.bool_)
        first, *others = self.models
        satisfied = first.satisfied_classes(statistics)
        for model in others:
            satisfied = satisfied & model.satisfied_classes(statistics)
        return satisfied

    def classes(self, node: Node) -> NodeClasses:
        """The classes of ``node`` with the class of every frequency-set tuple.

        Used to transform the table; searches use :meth:`view`, which is cheaper.
        With a population, classes holding no sample row are satisfied (they
        release nothing) and sized 0.
        """
        partition, tuple_class = self._rollup.group(node, self._rollup.base)
        statistics, held = self._statistics(partition)
        satisfied = self._sample_suppression(held, self._satisfied(statistics))
        if held is partition:
            return NodeClasses(tuple_class=tuple_class, sizes=partition.sizes, satisfied=satisfied)
        mask = partition.histograms[_SAMPLE][:, 0] > 0
        sizes = np.zeros(partition.n_classes, dtype=np.int64)
        sizes[mask] = held.sizes
        every = np.ones(partition.n_classes, dtype=np.bool_)
        every[mask] = satisfied
        return NodeClasses(tuple_class=tuple_class, sizes=sizes, satisfied=every)

    def partition(self, node: Node) -> Partition:
        """The classes of ``node`` (codes, sizes, sensitive histograms), rolled up.

        With a population, its classes: sized by population rows, with the sample's
        rows as the histogram ``_SAMPLE``.
        """
        levels = np.array(node, dtype=np.int64)
        partition = self._rollup.partition(node, self._partitions.best_source(levels), levels)
        self._partitions.add(partition, levels)
        return partition

    def view(self, node: Node) -> ClassView:
        """The classes of ``node`` as models and metrics see them (sizes and codes)."""
        return self._view(node)[0]

    def _view(self, node: Node) -> tuple[ClassView, bool]:
        """:meth:`view`, and whether :meth:`_blocked` rules the node out."""
        rolled = self.partition(node)
        statistics, partition = self._statistics(rolled)
        satisfied = self._sample_suppression(partition, self._satisfied(statistics))
        view = ClassView(partition.sizes, satisfied, lambda: self._rollup.codes(partition))
        return view, self._blocked(rolled)

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
        view, blocked = self._view(node)
        metric = self.metric
        suppressed = view.suppressed_rows
        evaluation = NodeEvaluation(
            node=node,
            suppressed_rows=suppressed,
            released_classes=view.released_classes,
            satisfied=suppressed <= self.max_suppressed_rows and not blocked,
            score=None if metric is None else metric.score(node, view),
            bound=None if metric is None else metric.inherited_bound(view),
        )
        self._cache[node] = evaluation
        return evaluation
