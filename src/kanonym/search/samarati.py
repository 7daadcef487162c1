"""Samarati's binary search on lattice height (Samarati 2001, section 5).

Samarati's algorithm relies on this property: if no node of height h
satisfies k-anonymity with at most MaxSup suppressed tuples, no node of lower
height does. It therefore binary-searches the heights 0..H of the lattice for
the lowest height holding a satisfying node (evaluate height H/2; if a
solution exists there, try H/4, otherwise 3H/4; and so on). Every satisfying
node at that height is k-minimal, since all nodes below it are lower. The
original uses a distance-vector matrix to avoid computing generalized tables;
here each node is checked on the frequency set instead.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation.evaluator import NodeEvaluator
    >>> from kanonym.lattice import Lattice
    >>> h = Hierarchy("x", (("a", "b"), ("*", "*")))
    >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b"]}), {"x": h})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=1)
    >>> from kanonym.search.base import SearchControl
    >>> [e.node for e in SamaratiSearch().solutions(Lattice((1,)), ev, SearchControl())]
    [(0,)]
"""

from __future__ import annotations

from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, NodeStatus
from kanonym.search.base import SearchControl
from kanonym.search.minimal import decide


class SamaratiSearch:
    """Nodes of the lowest height that holds a satisfying node."""

    name = "samarati"

    uses_metric = False
    needs_monotone_models = True
    exact = True

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """All satisfying nodes of the lowest satisfying height."""
        status = NodeStatus(lattice)

        def exists_at(height: int) -> bool:
            return any(decide(n, status, evaluator) for n in lattice.nodes_at_height(height))

        low, high = lattice.min_height, lattice.max_height
        if not exists_at(high):
            return []
        while low < high:
            middle = (low + high) // 2
            if exists_at(middle):
                high = middle
            else:
                low = middle + 1
        return [
            evaluator.evaluate(node)
            for node in lattice.nodes_at_height(low)
            if decide(node, status, evaluator)
        ]
