"""Incognito (LeFevre, DeWitt & Ramakrishnan 2005, "Incognito: efficient full-domain k-anonymity").

Incognito finds every full-domain generalization that satisfies the model by
growing the set of quasi-identifiers: first each attribute alone, then pairs,
triples and so on, each subset's lattice searched bottom-up, breadth first.
Two properties prune it: the *subset property* (if a table is k-anonymous on a
set of attributes, it is on every subset, so a node over a larger set is only
checked when all its projections passed) and the *generalization property*
(generalizations of a satisfying node satisfy).

Here a node over a subset S is the full node whose attributes outside S sit at
their hierarchy's root, where every row shares one value: projecting an
attribute away and generalizing it to the root give the same classes. Both
properties are then monotonicity on the full lattice, applied by tagging, and
Incognito's order is visiting nodes by the number of attributes below their
root, then subset, then height. Once every node is decided, the utility metric
chooses among the satisfying nodes (the minimal ones when the metric is
monotone; ties to the smallest vector, :mod:`kanonym.metrics.ranking`), so
Incognito and the optimal search agree on every input.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.metrics import MetricContext, make_metric
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation import NodeEvaluator
    >>> from kanonym.search import run_search
    >>> h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*", "*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "b", "c", "c"]}), {"x": h})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=0)
    >>> metric = make_metric("height", MetricContext(encoded=enc, frequency_set=ev.frequency_set))
    >>> run_search(IncognitoSearch(), ev, metric=metric).best.node
    (1,)
"""

from __future__ import annotations

import numpy as np

from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, NodeStatus
from kanonym.lattice.status import SATISFIED, UNKNOWN
from kanonym.metrics.ranking import best_of, score_tolerance
from kanonym.search.base import SearchControl
from kanonym.search.minimal import decide


def _incognito_order(lattice: Lattice) -> list[int]:
    """Node indices by (attributes below root, which attributes, height, index)."""
    below_root = lattice.levels < np.asarray(lattice.heights, dtype=np.int16)
    width = below_root.sum(axis=1)
    # Read each node's set of attributes below the root as a binary number, the
    # first attribute most significant, so subsets sort lexicographically.
    weights = 1 << np.arange(below_root.shape[1] - 1, -1, -1, dtype=np.int64)
    subset = -(below_root.astype(np.int64) @ weights)
    order = np.lexsort((np.arange(lattice.size), lattice.node_heights, subset, width))
    return [int(i) for i in order]


class IncognitoSearch:
    """All satisfying nodes by Incognito's subset-by-subset search; the best by metric."""

    name = "incognito"
    uses_metric = True
    needs_monotone_models = True
    exact = True

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """The best node by the evaluator's metric, as a one-element list."""
        metric = evaluator.metric
        assert metric is not None, "Incognito here ranks its solutions by a metric"
        status = NodeStatus(lattice)
        for count, index in enumerate(_incognito_order(lattice)):
            if control.expired():
                break
            if status.values[index] == UNKNOWN:
                decide(lattice.node(index), status, evaluator)
            if count % 256 == 0:
                control.report(evaluator.checks, lattice.size, None)
        if control.timed_out:
            candidates = [e for e in evaluator.evaluated() if e.satisfied]
        elif evaluator.declared_monotone(metric):
            candidates = [evaluator.evaluate(n) for n in status.minimal_satisfied()]
        else:
            candidates = [
                evaluator.evaluate(lattice.node(int(i)))
                for i in np.flatnonzero(status.values == SATISFIED)
            ]
        best = best_of(candidates, score_tolerance(metric))
        return [] if best is None else [best]
