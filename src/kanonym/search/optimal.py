"""Globally optimal full-domain generalization under a utility metric.

The search returns the satisfying node with the lowest metric score (ties to
the lexicographically smallest distance vector; which scores tie, exactly or
within a relative 1e-12, is :mod:`kanonym.metrics.ranking`'s rule). It
combines the two pruning rules of Flash (Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012, "Flash:
efficient, stable and optimal k-anonymity") and OLA (El Emam et al. 2009, "A
globally optimal k-anonymity method for the de-identification of health
data"):

* *Predictive tagging by monotonicity* of the privacy models: a node that
  satisfies them implies all its generalizations do, one that fails implies
  all its specializations fail. Nodes are decided along upward paths of
  undecided nodes: the top of a path first (if it fails, so does the whole
  path), then a binary search for the first satisfying node, so one check
  often decides many nodes.
* *Bounds on the metric*: a node whose lower bound exceeds the best score
  found so far is skipped, together with its generalizations. Bounds come from
  the levels alone (entropy, loss, precision, height) or are inherited from a
  checked specialization (DM*, DM).

When a privacy model is not monotone under the suppression setting in use
(l-diversity, t-closeness, beta-likeness or delta-disclosure with suppression:
a failing class can absorb a passing one), no node's outcome says anything
about another's: the search then falls back to checking, in order of their
bounds, every node that its metric bound does not rule out.

For a metric that is monotone under the suppression setting in use, the
optimum is a minimal satisfying node, so satisfying nodes that were only
inferred (they have a satisfying specialization) are never scored. For a
non-monotone metric (DM, C_AVG and loss with suppression) every satisfying node
that its bound does not rule out is scored.

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
    >>> metric = make_metric("dm-star", MetricContext(encoded=enc, frequency_set=ev.frequency_set))
    >>> run_search(OptimalSearch(), ev, metric=metric).best.node
    (1,)
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, Node, NodeStatus
from kanonym.lattice.kernels import raise_box, upward_path
from kanonym.lattice.status import FAILED, SATISFIED, UNKNOWN
from kanonym.metrics.ranking import Leader, score_tolerance
from kanonym.search.base import SearchControl

# Nodes filtered at once by the main loop.
_BLOCK = 256


class _Optimizer:
    """State of one optimal search: statuses, bounds, the incumbent."""

    def __init__(self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl) -> None:
        metric = evaluator.metric
        assert metric is not None, "the optimal search needs a metric"
        self.lattice = lattice
        self.evaluator = evaluator
        self.control = control
        self.status = NodeStatus(lattice)
        suppressing = evaluator.max_suppressed_rows > 0
        # When acceptance is only implied by a monotone proxy (cell suppression),
        # a node satisfying the proxy by inference must still be checked and scored.
        self.monotone = evaluator.monotone() and evaluator.declared_monotone(metric)
        bounds = metric.node_bounds(lattice.levels)
        self.lower: npt.NDArray[np.float64] = (
            np.zeros(lattice.size) if bounds is None else bounds.astype(np.float64, copy=True)
        )
        # The incumbent: the winner so far by kanonym.metrics.ranking's rule
        # (lowest score, ties to the smallest vector), and the lowest score.
        self.leader: Leader[NodeEvaluation] = Leader(score_tolerance(metric))
        self.best: NodeEvaluation | None = None
        # Checks of nodes that cannot win: useful when they fail (they tag a
        # down-set), wasted when they satisfy. Without suppression most of the
        # lower lattice fails, so paths always pass such nodes; with
        # suppression, only while that has paid off at least half the time
        # (benchmarks/README.md has the measurements).
        self.always_pass = not suppressing
        # Tagging needs a monotone test: acceptance itself, or a proxy implied by it.
        self.models_monotone = evaluator.proxy_monotone()
        self.useful = 0
        self.wasted = 0
        # Progress reports' count of unresolved nodes, and when to count again.
        self._unresolved: int | None = None
        self._counted_at = 0  # nodes checked when it was counted
        self._recount = 0.0
        self._counted_best: NodeEvaluation | None = None  # the incumbent when it was counted

    def limit(self) -> float | None:
        """The bound above which a node cannot win, or None before any score.

        The lowest score plus a relative margin
        (:func:`kanonym.metrics.ranking.prune_limit`): a node that ties the
        lowest score may win the tie by its vector, and its bound, computed
        another way than its score (``loss``'s over all rows), may land a
        rounding step above it.
        """
        return self.leader.limit

    def prunable(self, index: int) -> bool:
        """The node's bound already exceeds the best score: it cannot win."""
        limit = self.limit()
        return limit is not None and self.lower[index] > limit

    def alive(self, indices: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """The nodes of ``indices`` not yet failed nor ruled out by their bound."""
        indices = indices[self.status.values[indices] != FAILED]
        limit = self.limit()
        return indices if limit is None else indices[self.lower[indices] <= limit]

    def consider(self, evaluation: NodeEvaluation) -> None:
        """Offer a satisfying node to the incumbent (ties go to the smaller vector)."""
        assert evaluation.score is not None
        if evaluation.satisfied:
            self.leader.offer(evaluation)
            self.best = self.leader.best

    def raise_bounds(self, node: Node, bound: float) -> None:
        """``bound`` holds for every generalization of ``node``: raise their lower bounds."""
        start, extents = self.lattice.up_box(node)
        raise_box(self.lower, start, extents, self.lattice.arrays[2], bound)

    def check(self, index: int, node: Node) -> bool:
        """Evaluate the node at ``index`` and record what its outcome implies."""
        hopeless = self.prunable(index)
        evaluation = self.evaluator.evaluate(node)
        if hopeless:
            if evaluation.feasible:
                self.wasted += 1
            else:
                self.useful += 1
        # A satisfying node's generalizations are tagged satisfied, and under a
        # monotone metric never scored: their bounds would not be read again.
        if evaluation.bound is not None and not (evaluation.feasible and self.monotone):
            self.raise_bounds(node, evaluation.bound)
        if evaluation.feasible:
            self.status.mark_satisfied(node)
            self.consider(evaluation)
        else:
            self.status.mark_failed(node)
        if self.control.due():
            self.report(unresolved=self.unresolved())
        return evaluation.feasible

    def report(
        self, *, done: int = 0, total: int | None = None, unresolved: int | None = None
    ) -> None:
        """Send a progress report with the nodes checked and the best score so far."""
        best = self.best
        score = None if best is None or best.score is None else float(best.score)
        self.control.report(
            self.evaluator.checks,
            self.lattice.size,
            score,
            done=done,
            total=total,
            unresolved=unresolved,
        )

    def unresolved(self, pending: npt.NDArray[np.intp] | None = None) -> int:
        """Nodes still to decide, for a progress report: those of ``pending``
        (default: the undecided ones) neither failed nor ruled out by their bound.

        Counting reads every candidate, so on a large lattice it is redone only
        once fifty times its own cost has passed (the last count stands in
        between): reports then cost the search at most 2 %. It is also redone
        once a better incumbent rules nodes out and a hundredth of the lattice
        has been checked since the last count: what the total shows then does
        not depend on how fast the machine happened to count (a count is one
        pass over the lattice, so this costs a hundredth of a pass per check).
        """
        now = time.perf_counter()
        improved = (
            self.best is not self._counted_best
            and self.evaluator.checks - self._counted_at >= max(1, self.lattice.size // 100)
        )
        if self._unresolved is None or now >= self._recount or improved:
            if pending is None:
                pending = np.flatnonzero(self.status.values == UNKNOWN)
            self._unresolved = len(self.alive(pending))
            self._counted_at = self.evaluator.checks
            self._counted_best = self.best
            self._recount = now + 50 * (time.perf_counter() - now)
        return self._unresolved

    def check_on(self, path: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], at: int) -> bool:
        """:meth:`check` the ``at``-th node of a path from :meth:`path_from`."""
        indices, levels = path
        return self.check(int(indices[at]), tuple(levels[at].tolist()))

    def path_from(self, start: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """An upward path of undecided nodes from the node at index ``start``:
        its node indices and levels.

        The path may pass nodes that cannot beat the incumbent, since one of
        them failing tags its whole specialization set as failed at once; with
        suppression it does so only while such checks have failed at least half
        the time.
        """
        passing = self.always_pass or self.useful >= self.wasted
        limit = None if passing else self.limit()
        lowest, spans, strides = self.lattice.arrays
        return upward_path(
            self.status.values,
            self.lower,
            start,
            lowest,
            spans,
            strides,
            np.inf if limit is None else limit,
        )

    def run_exhaustive(self) -> list[NodeEvaluation]:
        """Every node not ruled out by its bound, cheapest bound first; no inference."""
        lattice = self.lattice
        order = np.lexsort((np.arange(lattice.size), lattice.node_heights, self.lower))
        for position, index in enumerate(order.tolist()):
            if self.control.expired():
                break
            if self.control.due():
                # The nodes left to check are those after this one that their
                # bound does not rule out: a total that shrinks as the best
                # score improves, rather than the lattice's size. Between two
                # counts the total stays and the checks count into it.
                total = self.unresolved(order[position:]) + self._counted_at
                checks = self.evaluator.checks
                self.report(done=checks, total=total, unresolved=total - checks)
            if not self.prunable(index):
                evaluation = self.evaluator.evaluate(lattice.node(index))
                self.consider(evaluation)
                if evaluation.bound is not None:
                    self.raise_bounds(lattice.node(index), evaluation.bound)
        return [] if self.best is None else [self.best]

    def visit(self, index: int) -> None:
        """Decide the node at ``index``, if still needed, along an upward path."""
        known = self.status.values[index]
        if known == FAILED or self.prunable(index):
            return
        if known == UNKNOWN:
            path = self.path_from(index)
            low, high = 0, len(path[0])
            # A failing top decides the whole path with one check, which
            # is the common case among the nodes that could still win.
            if not self.check_on(path, high - 1):
                return
            while low < high:
                middle = (low + high) // 2
                if self.check_on(path, middle):
                    high = middle
                else:
                    low = middle + 1
        elif not self.monotone and known == SATISFIED:
            # Satisfied by inference: a non-monotone metric must still score it.
            self.consider(self.evaluator.evaluate(self.lattice.node(index)))

    def run(self) -> list[NodeEvaluation]:
        if not self.models_monotone:
            return self.run_exhaustive()
        lattice = self.lattice
        # Bottom-up like Flash: lowest height first, then lowest bound. Each
        # height is ordered when the loop reaches it, by the bounds raised so
        # far, among the nodes still undecided (sorting the whole lattice up
        # front cost more than most small searches).
        heights = lattice.node_heights
        by_height = np.argsort(heights, kind="stable")
        ends = np.searchsorted(heights[by_height], np.arange(lattice.max_height + 1), "right")
        start = 0
        for end in ends.tolist():
            group = self.alive(by_height[start:end])
            start = end
            group = group[np.argsort(self.lower[group], kind="stable")]
            for first in range(0, len(group), _BLOCK):
                # Most nodes are decided or ruled out by the time the loop
                # reaches them: filter a block at once, re-test survivors one by one.
                for index in self.alive(group[first : first + _BLOCK]).tolist():
                    if self.control.expired():
                        return [] if self.best is None else [self.best]
                    self.visit(index)
        return [] if self.best is None else [self.best]


class OptimalSearch:
    """The satisfying node of lowest metric score (Flash/OLA-style pruning)."""

    name = "optimal"
    uses_metric = True
    # Runs with non-monotone models too, on the exhaustive fallback.
    needs_monotone_models = False
    exact = True

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """The optimum, as a one-element list (empty when nothing satisfies)."""
        return _Optimizer(lattice, evaluator, control).run()
