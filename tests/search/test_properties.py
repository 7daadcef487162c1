"""Invariants on random small tables and hierarchies, against brute force."""

from __future__ import annotations

import itertools

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems

from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search


def _brute_force_satisfying(table: pl.DataFrame, hs: dict[str, Hierarchy], k: int, max_sup: int):
    """Every node whose generalized table, minus rows of classes below k, fits MaxSup.

    Written directly from the definitions with Python counting, sharing
    nothing with the engine but the hierarchies.
    """
    names = list(hs)
    index = {name: {leaf: i for i, leaf in enumerate(h.leaves)} for name, h in hs.items()}
    rows = list(zip(*(table[name].to_list() for name in names), strict=True))
    satisfying = set()
    for node in itertools.product(*(range(h.height + 1) for h in hs.values())):
        generalized = [
            tuple(
                hs[name].levels[level][index[name][value]]
                for name, level, value in zip(names, node, row, strict=True)
            )
            for row in rows
        ]
        counts: dict[tuple, int] = {}
        for g in generalized:
            counts[g] = counts.get(g, 0) + 1
        suppressed = sum(c for c in counts.values() if c < k)
        if suppressed <= max_sup:
            satisfying.add(node)
    return satisfying


def _minimal(nodes: set[tuple[int, ...]]) -> set[tuple[int, ...]]:
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
    expected = _minimal(_brute_force_satisfying(table, hs, k, max_sup))
    if not expected:
        return
    outcome = run_search(ALGORITHMS["minimal"], evaluator, policy="min-absolute-distance")
    assert {e.node for e in outcome.solutions} == expected
    assert outcome.nodes_checked <= Lattice(tuple(h.height for h in hs.values())).size


@settings(max_examples=150, deadline=None)
@given(problem=problems(), k=st.integers(1, 5), max_sup=st.integers(0, 6))
def test_samarati_returns_every_solution_of_the_lowest_height(problem, k, max_sup) -> None:
    table, hs = problem
    evaluator = NodeEvaluator(encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    satisfying = _brute_force_satisfying(table, hs, k, max_sup)
    if not satisfying:
        return
    lowest = min(sum(n) for n in satisfying)
    outcome = run_search(ALGORITHMS["samarati"], evaluator, policy="min-absolute-distance")
    assert {e.node for e in outcome.solutions} == {n for n in satisfying if sum(n) == lowest}


@settings(max_examples=100, deadline=None)
@given(problem=problems(), k=st.integers(1, 5), max_sup=st.integers(0, 6))
def test_every_solution_reports_its_true_suppression(problem, k, max_sup) -> None:
    table, hs = problem
    evaluator = NodeEvaluator(encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    if not _brute_force_satisfying(table, hs, k, max_sup):
        return
    for evaluation in run_search(
        ALGORITHMS["minimal"], evaluator, policy="min-suppression"
    ).solutions:
        assert evaluation.satisfied
        assert evaluation.suppressed_rows <= max_sup
