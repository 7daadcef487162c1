"""Greedy local search: Datafly's node, then hill climbing on the metric.

Definition: start from the node Datafly stops at (Sweeney 1997, "Datafly: a
system for providing anonymity in medical data"; see
:mod:`kanonym.search.datafly`). Its neighbours are its direct specializations
(one attribute one level lower, not below the lattice's lower bound) and its
direct generalizations (one attribute one level higher). Move to the
satisfying neighbour with the lowest utility-metric score if that score is
strictly lower than the current node's; repeat until no neighbour improves, the
step budget is spent or the deadline passes; return the current node. This is
steepest-descent hill climbing (lower scores are better) over the full-domain
generalization lattice. ARX's Lightning is likewise a utility-driven heuristic
search of this lattice for data with too many quasi-identifiers to search
exactly (Prasser et al. 2016, "Lightning: utility-driven anonymization of
high-dimensional data", Transactions on Data Privacy 9, 161-185); this walk is
not Lightning, only its kin. Choices made here:

* only satisfying neighbours are candidates: the walk stays on nodes that are
  answers, so whenever it stops (deadline included) it has one to return;
* ties between equally good neighbours go to the smallest distance vector, the
  driver's own tie-break; a neighbour must be strictly better to be taken (not
  tie, as :mod:`kanonym.metrics.ranking` compares scores), so no node is
  visited twice and the walk ends;
* at most ``max_steps`` moves, by default twice the lattice's height range (a
  walk down to the bottom and back up to the top), each checking at most
  ``2 m`` neighbours for ``m`` quasi-identifiers: the checks stay polynomial
  in the heights however large the lattice;
* the deadline is asked before every check, Datafly's included.

Like Datafly it keeps no per-node state for the lattice, so it runs on lattices
far too large to search exactly. At best it ends at a local optimum: every node it
returns scores at most Datafly's, never less than the optimum. The models need
not be monotone, nor the metric: every node moved to is checked.

Example (Datafly generalizes ``a``, 4 values, then ``b``, 3 values, to (1, 1);
the specialization (0, 1) also satisfies and loses less):
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.metrics import MetricContext, make_metric
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation import NodeEvaluator
    >>> from kanonym.search import run_search
    >>> a_h = Hierarchy("a", (("a1", "a2", "a3", "a4"), ("a12", "a12", "a34", "a34"),
    ...                       ("*",) * 4))
    >>> b_h = Hierarchy("b", (("b1", "b2", "b3"), ("*", "*", "*")))
    >>> table = pl.DataFrame({"a": ["a1", "a1", "a2", "a2", "a3", "a3", "a4", "a4"],
    ...                       "b": ["b1", "b2", "b3", "b1", "b2", "b3", "b1", "b2"]})
    >>> enc = encode(table, {"a": a_h, "b": b_h})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=0)
    >>> metric = make_metric("loss", MetricContext(encoded=enc, frequency_set=ev.frequency_set))
    >>> run_search(GreedySearch(), ev, metric=metric).best.node
    (0, 1)
"""

from __future__ import annotations

from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics.ranking import best_of, score_tolerance, ties_lowest
from kanonym.search.base import SearchControl
from kanonym.search.datafly import DataflySearch


class GreedySearch:
    """Hill climbing on the metric from Datafly's node (anytime, not optimal)."""

    name = "greedy"
    # The metric decides every move; the driver also ranks by it.
    uses_metric = True
    # Every node moved to is checked, never inferred from a neighbour.
    needs_monotone_models = False
    exact = False

    def __init__(self, max_steps: int | None = None) -> None:
        """``max_steps``: moves allowed after Datafly's node (default: twice the height range)."""
        if max_steps is not None and max_steps < 0:
            raise ValueError(f"max_steps must be >= 0, got {max_steps}")
        self.max_steps = max_steps

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """The best node found, as a one-element list (empty if Datafly finds none).

        Empty too when the deadline passes before Datafly's walk satisfies:
        there is then no answer to improve.
        """
        start = DataflySearch().solutions(lattice, evaluator, control)
        if not start:
            return []
        current = start[0]
        if current.score is None:
            # Without a metric (a direct call) there is nothing to improve on.
            return [current]
        steps = (
            2 * (lattice.max_height - lattice.min_height)
            if self.max_steps is None
            else self.max_steps
        )
        for _ in range(steps):
            better = self._best_neighbour(lattice, evaluator, control, current)
            control.report(evaluator.checks, lattice.size, current.score)
            if better is None:
                break
            current = better
        control.report(evaluator.checks, lattice.size, current.score)
        return [current]

    @staticmethod
    def _best_neighbour(
        lattice: Lattice,
        evaluator: NodeEvaluator,
        control: SearchControl,
        current: NodeEvaluation,
    ) -> NodeEvaluation | None:
        """The best satisfying neighbour scoring strictly below ``current``, if any.

        None also when the deadline passes: the neighbours checked so far may
        not include the best, and stopping at an answer is what the deadline asks.
        """
        assert current.score is not None and evaluator.metric is not None
        tolerance = score_tolerance(evaluator.metric)
        better: list[NodeEvaluation] = []
        for node in (*lattice.predecessors(current.node), *lattice.successors(current.node)):
            if control.expired():
                return None
            evaluation = evaluator.evaluate(node)
            if not evaluation.satisfied or evaluation.score is None:
                continue
            # Only strictly lower scores count: a neighbour that ties the
            # current node is no move (so no node is visited twice).
            if not ties_lowest(current.score, evaluation.score, tolerance):
                better.append(evaluation)
        # Ties among the better ones go to the smallest vector.
        return best_of(better, tolerance)
