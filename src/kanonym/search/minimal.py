"""All k-minimal generalizations (Samarati 2001; Samarati & Sweeney 1998).

A generalization T_j of T_i is *k-minimal* when it satisfies k-anonymity with
minimal required suppression, suppresses at most MaxSup tuples, and no other
such generalization has a distance vector strictly below its own (Samarati,
"k-Anonymity", FOSAD 2008 slides, "k-minimal generalization with suppression";
Samarati 2001, Definition 4.3). Because the models are monotone, the
satisfying nodes form an up-set of the lattice and the k-minimal
generalizations are its minimal elements.

The search decides every node while checking as few as it can. It walks a path
upwards from the lowest undecided node through undecided nodes and
binary-searches it for the first satisfying node, the way Flash does
(Kohlmayer et al. 2012); each outcome is propagated to every generalization
(satisfied) or specialization (failed) of the checked node.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation.evaluator import NodeEvaluator
    >>> from kanonym.lattice import Lattice
    >>> h = Hierarchy("x", (("a", "b"), ("*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b"]}), {"x": h})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=0)
    >>> from kanonym.search.base import SearchControl
    >>> [e.node for e in MinimalSearch().solutions(Lattice((1,)), ev, SearchControl())]
    [(1,)]
"""

from __future__ import annotations

import numpy as np

from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, Node, NodeStatus
from kanonym.lattice.status import SATISFIED, UNKNOWN
from kanonym.search.base import SearchControl


def decide(node: Node, status: NodeStatus, evaluator: NodeEvaluator) -> bool:
    """Whether ``node`` satisfies, checking it only when nothing implies it."""
    known = status.get(node)
    if known != UNKNOWN:
        return known == SATISFIED
    if evaluator.evaluate(node).satisfied:
        status.mark_satisfied(node)
        return True
    status.mark_failed(node)
    return False


def _upward_path(start: Node, lattice: Lattice, status: NodeStatus) -> list[Node]:
    path = [start]
    while True:
        step = next((s for s in lattice.successors(path[-1]) if status.get(s) == UNKNOWN), None)
        if step is None:
            return path
        path.append(step)


def decide_all(lattice: Lattice, evaluator: NodeEvaluator) -> NodeStatus:
    """Decide every node of ``lattice``, inferring by monotonicity where possible."""
    status = NodeStatus(lattice)
    by_height = np.lexsort((np.arange(lattice.size), lattice.node_heights))
    for index in by_height:
        if status.values[index] != UNKNOWN:
            continue
        path = _upward_path(lattice.node(int(index)), lattice, status)
        low, high = 0, len(path)
        while low < high:
            middle = (low + high) // 2
            if decide(path[middle], status, evaluator):
                high = middle
            else:
                low = middle + 1
    return status


class MinimalSearch:
    """Every k-minimal generalization (all minimal satisfying nodes)."""

    name = "minimal"

    uses_metric = False
    needs_monotone_models = True
    exact = True

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """The minimal satisfying nodes, each evaluated."""
        status = decide_all(lattice, evaluator)
        assert not np.any(status.values == UNKNOWN)
        minimal = status.minimal_satisfied()
        return [evaluator.evaluate(node) for node in minimal]
