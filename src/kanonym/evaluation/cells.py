"""Checking nodes under cell suppression (AG_CS, _CS, mu-Argus).

A node is acceptable under cell suppression when the rows of its failing
classes can be kept, with some cells blanked (written as the hierarchy's
root), so that every class of the released table satisfies the models, and at
most MaxSup rows hold a blanked cell. The check runs in two steps:

1. the *tuple-suppression proxy*: the rows that tuple suppression would remove
   (those of classes failing the models) must all be touched, so more of them
   than MaxSup rules the node out at once, at the cost of an ordinary check;
2. the *conversion* (:func:`kanonym.evaluation.cell_choice.suppress_cells`, preceded
   for mu-Argus by :func:`kanonym.evaluation.combinations.suppress_rare_combinations`)
   must succeed within MaxSup.

Acceptance is not monotone: fewer than k failing rows must join released rows,
and a generalization may leave fewer of them (so more rows to touch) than its
specialization. :meth:`CellSuppressionEvaluator.monotone` says so, and the
searches that prune by inference refuse it. The proxy is monotone (for models
monotone with tuple suppression), and every evaluation carries it
(``NodeEvaluation.proxy``): ``optimal`` tags nodes by the proxy, then checks
and scores every node that passes it and that its metric bound does not rule
out (for other models it checks every node the bound does not rule out). The
score of an accepted node is its
metric on the released table (:func:`kanonym.metrics.cells.cell_score`); the
metrics' lower bounds stay valid: blanking a cell only adds loss, and released
classes are unions of the node's classes.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.models import KAnonymity
    >>> h = Hierarchy("x", (("a", "b", "c"), ("*", "*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b", "c"]}), {"x": h})
    >>> ev = CellSuppressionEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=2)
    >>> e = ev.evaluate((0,))
    >>> e.satisfied, e.suppressed_rows, ev.conversion((0,)).suppression.cells.tolist()
    (True, 2, [2])
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable, FrequencySet, SensitiveAttribute
from kanonym.evaluation.cell_choice import CellSuppression, Judge, group_sums, suppress_cells
from kanonym.evaluation.combinations import suppress_rare_combinations
from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.evaluation.partition import Partition
from kanonym.lattice import Node
from kanonym.metrics import ClassView, Loss, MetricContext, UtilityMetric
from kanonym.metrics.cells import CellView, cell_score, precision_by_attribute
from kanonym.metrics.measures import reported_score
from kanonym.models import ClassStatistics, PrivacyModel, required_k

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Method = Literal["patterns", "mu-argus"]

# Conversions kept for reuse (the search's last nodes, then the release's).
_KEPT = 16


@dataclass(frozen=True, eq=False)
class NodeCells:
    """A node's classes and the cells blanked in them.

    Attributes:
        partition: the node's classes (members, sizes, histograms).
        codes: ``(classes, attributes)`` codes of the classes at the node's levels.
        suppression: the blanked cells and the released classes.
        first_phase_cells: cells blanked by mu-Argus's 1-3 attribute
            combinations (0 for the pattern method); the rest were blanked
            by the completion over all quasi-identifiers.
    """

    partition: Partition
    codes: IntArray
    suppression: CellSuppression
    first_phase_cells: int

    def view(self, star: IntArray) -> CellView:
        """What a metric sees of the released table."""
        blanked = self.suppression.mask & (self.codes != star[None, :])
        return CellView(
            sizes=self.partition.sizes,
            codes=self.codes,
            blanked=blanked,
            released_sizes=self.suppression.group_sizes,
        )


class CellSuppressionEvaluator(NodeEvaluator):
    """A node evaluator whose outliers are kept with blanked cells instead of removed.

    ``method`` is ``patterns`` (AG_CS, _CS: :func:`~kanonym.evaluation.cell_choice.suppress_cells`)
    or ``mu-argus`` (mu-Argus's rare 1-3 attribute combinations first, then
    the same completion). ``weights`` weigh the per-cell costs that break ties
    between equally many cells. An evaluation's ``suppressed_rows`` is the
    number of rows with a blanked cell (the rows of its failing classes when
    the node is not acceptable).
    """

    def __init__(
        self,
        encoded: EncodedTable,
        models: Sequence[PrivacyModel],
        *,
        max_suppressed_rows: int,
        frequency_set: FrequencySet | None = None,
        sensitive: Sequence[SensitiveAttribute] = (),
        method: Method = "patterns",
        weights: Sequence[float] = (),
    ) -> None:
        super().__init__(
            encoded,
            models,
            max_suppressed_rows=max_suppressed_rows,
            frequency_set=frequency_set,
            sensitive=sensitive,
        )
        self.method = method
        self.k = required_k(self.models)
        # Iyengar's per-value loss, to prefer blanking the cells that lose least.
        self._loss = Loss(
            MetricContext(encoded=encoded, frequency_set=self.frequency_set, weights=tuple(weights))
        )
        self._kept: OrderedDict[Node, NodeCells | None] = OrderedDict()

    def monotone(self) -> bool:
        """False: acceptance under cell suppression is not monotone (module docstring)."""
        return False

    def star(self, node: Node) -> IntArray:
        """Per attribute, the code the root is released as at ``node``'s level.

        The root's own code when the level has a value equal to it (the top
        level, or a label spelled like the root), else a new code past them.
        """
        star = []
        for attribute, level in zip(self.encoded.attributes, node, strict=True):
            labels = attribute.level_labels[level]
            root = attribute.hierarchy.levels[-1][0]
            star.append(labels.index(root) if root in labels else len(labels))
        return np.asarray(star, dtype=np.int64)

    def _cell_costs(self, node: Node, codes: IntArray) -> FloatArray:
        weights = self._loss.context.weights
        columns = [
            w * (1.0 - self._loss.value_loss[a][level][codes[:, a]])
            for a, (w, level) in enumerate(zip(weights, node, strict=True))
        ]
        return np.column_stack(columns) if columns else np.zeros(codes.shape)

    def _judge(self, partition: Partition) -> Judge:
        def judge(members: IntArray, group: IntArray, n_groups: int) -> npt.NDArray[np.bool_]:
            sizes = np.bincount(group, weights=partition.sizes[members], minlength=n_groups).astype(
                np.int64
            )
            histograms: Mapping[str, IntArray] = {
                name: group_sums(rows[members], group, n_groups)
                for name, rows in partition.histograms.items()
            }
            return self._satisfied(
                ClassStatistics(
                    sizes=sizes, sensitive=histograms, overall=self._overall, values=self._values
                )
            )

        return judge

    def conversion(self, node: Node, partition: Partition | None = None) -> NodeCells | None:
        """The blanked cells that make ``node`` acceptable, or None if there are none."""
        if node in self._kept:
            self._kept.move_to_end(node)
            return self._kept[node]
        outcome = self._convert(node, partition or self.partition(node))
        self._kept[node] = outcome
        if len(self._kept) > _KEPT:
            self._kept.popitem(last=False)
        return outcome

    def accepted(self, node: Node) -> NodeCells:
        """The conversion of a node the search accepted; ValueError when it has none."""
        cells = self.conversion(node)
        if cells is None:
            raise ValueError(f"node {node} has no cell suppression within the limit")
        return cells

    def _convert(self, node: Node, partition: Partition) -> NodeCells | None:
        satisfied = self._satisfied(self._statistics(partition)[0])
        if int(partition.sizes[~satisfied].sum()) > self.max_suppressed_rows:
            return None
        heights = self.encoded.heights
        suppressible = np.array([lvl < h for lvl, h in zip(node, heights, strict=True)], bool)
        star = self.star(node)
        codes = self._rollup.codes(partition)
        cost = self._cell_costs(node, codes)
        mask = None
        first_phase = 0
        if self.method == "mu-argus":
            mask = suppress_rare_combinations(
                codes, partition.sizes, k=self.k, suppressible=suppressible, cost=cost
            )
            first_phase = int(((mask & (codes != star[None, :])) * partition.sizes[:, None]).sum())
        suppression = suppress_cells(
            codes,
            partition.sizes,
            star=star,
            suppressible=suppressible,
            cost=cost,
            judge=self._judge(partition),
            min_size=self.k,
            max_rows=self.max_suppressed_rows,
            mask=mask,
        )
        if suppression is None:
            return None
        return NodeCells(
            partition=partition, codes=codes, suppression=suppression, first_phase_cells=first_phase
        )

    def evaluate(self, node: Node) -> NodeEvaluation:
        """Check ``node`` under cell suppression (once; later calls hit the cache)."""
        cached = self._cache.get(node)
        if cached is not None:
            return cached
        self.checks += 1
        partition = self.partition(node)
        satisfied = self._satisfied(self._statistics(partition)[0])
        view = ClassView(partition.sizes, satisfied, lambda: self._rollup.codes(partition))
        proxy = view.suppressed_rows <= self.max_suppressed_rows
        cells = self.conversion(node, partition) if proxy else None
        metric = self.metric
        if cells is None:
            rows = view.suppressed_rows
            # A node that is no answer has no release to score.
            score = None if metric is None else math.inf
        else:
            rows = cells.suppression.rows
            score = (
                None if metric is None else cell_score(metric, node, cells.view(self.star(node)))
            )
        evaluation = NodeEvaluation(
            node=node,
            suppressed_rows=rows,
            released_classes=view.released_classes
            if cells is None
            else len(cells.suppression.group_sizes),
            satisfied=cells is not None,
            score=score,
            bound=None if metric is None else metric.inherited_bound(view),
            proxy=proxy,
        )
        self._cache[node] = evaluation
        return evaluation


def measure_cells(
    node: Node, evaluator: CellSuppressionEvaluator, metrics: Mapping[str, UtilityMetric]
) -> tuple[dict[str, object], int]:
    """Every reported measure of a cell-suppressed release at ``node``, and its blanked cells.

    No row is removed (completeness 1); precision per attribute and every
    utility metric are measured on the released table, blanked cells included
    (:mod:`kanonym.metrics.cells`).
    """
    cells = evaluator.accepted(node)
    view = cells.view(evaluator.star(node))
    encoded = evaluator.encoded
    measures: dict[str, object] = {
        "precision_by_attribute": precision_by_attribute(
            node, encoded.heights, encoded.names, view
        ),
        "completeness": 1.0,
        "equivalence_classes": len(view.released_sizes),
    }
    for name, metric in metrics.items():
        measures[name] = reported_score(name, cell_score(metric, node, view))
    return measures, cells.suppression.total_cells
