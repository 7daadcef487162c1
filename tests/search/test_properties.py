"""Invariants on random small tables and hierarchies, against brute force.

The brute force is :mod:`tests.oracle`, which generalizes and counts with plain
Polars and shares nothing with the engine but the hierarchies.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.meaningful import assume_meaningful
from tests.strategies import problems, problems_with_k

import kanonym
from kanonym.encode import encode
from kanonym.errors import NoSolutionError
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search

NO_SOLUTION = "no generalization satisfies"


def _minimal(nodes: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    return {
        n
        for n in nodes
        if not any(o != n and all(a <= b for a, b in zip(o, n, strict=True)) for o in nodes)
    }


@settings(max_examples=150, deadline=None)
@given(problem=problems(), k=st.integers(1, 5), max_sup=st.integers(0, 6))
def test_minimal_equals_brute_force(problem, k, max_sup) -> None:
    table, hs = problem
    evaluator = NodeEvaluator(encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    expected = _minimal(oracle.satisfying_nodes(table, hs, k, max_sup))
    if not expected:
        event("refused: no node satisfies (brute force)")
        with pytest.raises(NoSolutionError, match=NO_SOLUTION):
            run_search(ALGORITHMS["minimal"], evaluator, policy="min-absolute-distance")
        return
    outcome = run_search(ALGORITHMS["minimal"], evaluator, policy="min-absolute-distance")
    assert {e.node for e in outcome.solutions} == expected
    assert outcome.nodes_checked <= Lattice(tuple(h.height for h in hs.values())).size


@settings(max_examples=150, deadline=None)
@given(problem=problems(), k=st.integers(1, 5), max_sup=st.integers(0, 6))
def test_samarati_returns_every_solution_of_the_lowest_height(problem, k, max_sup) -> None:
    table, hs = problem
    evaluator = NodeEvaluator(encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    satisfying = oracle.satisfying_nodes(table, hs, k, max_sup)
    if not satisfying:
        event("refused: no node satisfies (brute force)")
        with pytest.raises(NoSolutionError, match=NO_SOLUTION):
            run_search(ALGORITHMS["samarati"], evaluator, policy="min-absolute-distance")
        return
    lowest = min(sum(n) for n in satisfying)
    outcome = run_search(ALGORITHMS["samarati"], evaluator, policy="min-absolute-distance")
    assert {e.node for e in outcome.solutions} == {n for n in satisfying if sum(n) == lowest}


@settings(max_examples=100, deadline=None)
@given(problem=problems_with_k(max_k=5), max_sup=st.integers(0, 6))
def test_every_solution_reports_its_true_suppression(problem, max_sup) -> None:
    """Each solution's reported suppression is the number of rows missing from the
    table released at that node (forced through min and max levels), which holds
    only generalized input rows, in classes of at least k."""
    table, hs, k = problem
    evaluator = NodeEvaluator(encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    assume_meaningful(oracle.satisfying_nodes(table, hs, k, max_sup), "no node satisfies")
    solutions = run_search(ALGORITHMS["minimal"], evaluator, policy="min-suppression").solutions
    for evaluation in solutions:
        levels = dict(zip(hs, evaluation.node, strict=True))
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=k,
            max_suppressed_rows=max_sup,
            min_levels=levels,
            max_levels=levels,
            seed=0,
        )
        released = result.table.select(list(hs))
        assert result.transformation == levels
        missing = table.height - released.height
        assert evaluation.suppressed_rows == missing <= max_sup
        assert evaluation.satisfied
        # The released rows are the node's generalized rows, fewer only by the missing ones...
        generalized = Counter(oracle.generalize(table, hs, evaluation.node).rows())
        kept = Counter(released.rows())
        assert kept <= generalized
        # ...and exactly those of the classes below k: no row more was suppressed.
        assert missing == sum(n for n in generalized.values() if n < k)
        assert all(n >= k for n in kept.values())
