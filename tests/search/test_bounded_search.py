"""Searches restricted to a box of levels (min/max level per quasi-identifier)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.strategies import problems

from kanonym.encode import encode
from kanonym.errors import NoSolutionError
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics import MetricContext, make_metric, score_tolerance
from kanonym.metrics.ranking import best_of
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search


@st.composite
def boxed_problems(draw: st.DrawFn):
    table, hs = draw(problems())
    lower, upper = [], []
    for h in hs.values():
        low = draw(st.integers(0, h.height))
        lower.append(low)
        upper.append(draw(st.integers(low, h.height)))
    return table, hs, tuple(lower), tuple(upper)


def test_bounded_lattice_geometry() -> None:
    lattice = Lattice((3, 2), (1, 1))
    nodes = [lattice.node(i) for i in range(lattice.size)]
    assert nodes == list(itertools.product(range(1, 4), range(1, 3)))
    assert [lattice.index(n) for n in nodes] == list(range(6))
    assert lattice.bottom == (1, 1) and lattice.min_height == 2
    assert lattice.predecessors((1, 2)) == [(1, 1)]
    with pytest.raises(ValueError):
        Lattice((1, 1), (2, 0))


@settings(max_examples=80, deadline=None)
@given(problem=boxed_problems(), k=st.integers(1, 4), max_sup=st.integers(0, 4))
def test_bounded_searches_equal_brute_force_in_the_box(problem, k, max_sup) -> None:
    table, hs, lower, upper = problem
    encoded = encode(table, hs)
    box = list(itertools.product(*(range(lo, hi + 1) for lo, hi in zip(lower, upper, strict=True))))

    def fresh() -> NodeEvaluator:
        return NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=max_sup)

    reference = fresh()
    metric = make_metric(
        "loss", MetricContext(encoded=encoded, frequency_set=reference.frequency_set, k=k)
    )
    reference.use_metric(metric)
    feasible = [e for e in map(reference.evaluate, box) if e.satisfied]
    if not feasible:
        # Refused only when the brute force of tests.oracle, too, finds no node in the box.
        levels = [range(lo, hi + 1) for lo, hi in zip(lower, upper, strict=True)]
        assert not oracle.satisfying_nodes(table, hs, k, max_sup, levels=levels)
        with pytest.raises(NoSolutionError, match="no generalization satisfies"):
            run_search(ALGORITHMS["optimal"], fresh(), metric=metric, lower=lower, upper=upper)
        return
    best = best_of(feasible, score_tolerance(metric))
    assert best is not None
    outcome = run_search(ALGORITHMS["optimal"], fresh(), metric=metric, lower=lower, upper=upper)
    assert outcome.best.node == best.node
    nodes = {e.node for e in feasible}
    minimal = {
        n
        for n in nodes
        if not any(o != n and all(a <= b for a, b in zip(o, n, strict=True)) for o in nodes)
    }
    found = run_search(
        ALGORITHMS["minimal"], fresh(), policy="min-suppression", lower=lower, upper=upper
    )
    assert {e.node for e in found.solutions} == minimal
    lowest = min(sum(n) for n in nodes)
    samarati = run_search(
        ALGORITHMS["samarati"], fresh(), policy="min-suppression", lower=lower, upper=upper
    )
    assert {e.node for e in samarati.solutions} == {n for n in nodes if sum(n) == lowest}
