"""Sweeney's Datafly: a greedy walk up the lattice, one attribute at a time.

Definition (Sweeney 1997, "Datafly: a system for providing anonymity in
medical data"; restated in Sweeney 2002, "Achieving k-anonymity privacy
protection using generalization and suppression", section 4): start from the
original table; while the table does not satisfy the privacy models with at
most MaxSup outlier rows suppressed, generalize by one level the
quasi-identifier with the most distinct values in the table; then suppress the
remaining outliers. Choices made here where the papers leave room:

* distinct values are counted on the whole table at the attribute's current
  level (:meth:`~kanonym.encode.EncodedAttribute.cardinality`), since Datafly
  generalizes before it suppresses;
* only attributes below their highest allowed level are candidates, and ties go
  to the first attribute in column order;
* the stopping test is the evaluator's: the rows of classes that fail a model
  (minimal required suppression) must be at most MaxSup. The 1997 system
  instead stops once at most k rows are outliers; MaxSup generalizes that.

It checks at most one node per level of height, so it suits lattices far too
large to search exactly, but it follows one path and is not optimal: the
attribute with most values need not be the one whose generalization costs
least (``tests/search/test_datafly.py`` has a table where it is not). The
models need not be monotone: the walk stops at the first satisfying node.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.metrics import MetricContext, make_metric
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation import NodeEvaluator
    >>> from kanonym.search import run_search
    >>> zip_h = Hierarchy("zip", (("z1", "z2", "z3"), ("z12", "z12", "z3"), ("*", "*", "*")))
    >>> sex_h = Hierarchy("sex", (("M", "F"), ("*", "*")))
    >>> table = pl.DataFrame({"zip": ["z1", "z1", "z2", "z2", "z3", "z3"],
    ...                       "sex": ["M", "F", "M", "F", "M", "F"]})
    >>> enc = encode(table, {"zip": zip_h, "sex": sex_h})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=0)
    >>> metric = make_metric("loss", MetricContext(encoded=enc, frequency_set=ev.frequency_set))
    >>> run_search(DataflySearch(), ev, metric=metric).best.node
    (2, 0)
"""

from __future__ import annotations

from collections.abc import Callable

from kanonym.encode import EncodedTable
from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, Node
from kanonym.search.base import SearchControl


def raisable(node: Node, heights: Node) -> list[int]:
    """The attributes of ``node`` below their level in ``heights``, in column order."""
    return [a for a, (level, top) in enumerate(zip(node, heights, strict=True)) if level < top]


def most_distinct(encoded: EncodedTable, node: Node, heights: Node) -> int | None:
    """The attribute Datafly generalizes next from ``node``, or None at the top.

    The one with most distinct values at its level among those below their
    level in ``heights``; ``max`` keeps the first of equal keys, so ties go to
    column order.
    """
    candidates = raisable(node, heights)
    if not candidates:
        return None
    return max(candidates, key=lambda a: encoded.attributes[a].cardinality(node[a]))


def climb(
    lattice: Lattice,
    evaluator: NodeEvaluator,
    control: SearchControl,
    choose: Callable[[Node], int | None],
) -> list[NodeEvaluation]:
    """Walk up from the lattice's bottom, one level of attribute ``choose(node)`` at a time.

    The first satisfying node, as a one-element list; empty when ``choose``
    returns None (the walk has reached the top and it fails) or when the
    deadline passes first: an unsatisfying node on the way is no answer, and
    the driver then reports the time limit. Datafly and mu-Argus differ only
    in ``choose``.
    """
    node: Node | None = lattice.bottom
    while node is not None and not control.expired():
        evaluation = evaluator.evaluate(node)
        # Progress carries the best score so far: only a satisfying node has one.
        best = evaluation.score if evaluation.satisfied else None
        control.report(evaluator.checks, lattice.size, best)
        if evaluation.satisfied:
            return [evaluation]
        attribute = choose(node)
        node = (
            None
            if attribute is None
            else (*node[:attribute], node[attribute] + 1, *node[attribute + 1 :])
        )
    return []


class DataflySearch:
    """The first satisfying node on Datafly's greedy path (Sweeney 1997)."""

    name = "datafly"
    # The driver ranks metric searches by score; Datafly proposes one node, so
    # the metric only scores it for the report.
    uses_metric = True
    # A single upward walk that stops at the first satisfying node assumes
    # nothing about the nodes it skips.
    needs_monotone_models = False
    exact = False

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """The node Datafly stops at, as a one-element list (empty if the top fails).

        Also empty when the deadline passes first: an unsatisfying node on the
        way is no answer, and the driver then reports the time limit.
        """
        return climb(
            lattice,
            evaluator,
            control,
            lambda node: most_distinct(evaluator.encoded, node, lattice.heights),
        )
