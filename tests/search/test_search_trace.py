"""SearchTrace: what a search checked, per height, and the whole of a small lattice."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems_with_k, search_setup

from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.search import (
    DataflySearch,
    MinimalSearch,
    OptimalSearch,
    run_search,
)
from kanonym.search import trace as trace_module
from kanonym.search.trace import SearchTrace


def _trace(table: pl.DataFrame, hs: dict[str, Hierarchy], k: int, max_sup: int, algorithm):
    encoded, evaluator, metric = search_setup(table, hs, k, max_sup)
    uses_metric = algorithm.uses_metric
    outcome = run_search(
        algorithm,
        evaluator,
        metric=metric if uses_metric else None,
        policy=None if uses_metric else "min-relative-distance",
    )
    lattice = Lattice(encoded.heights)
    policy = None if uses_metric else "min-relative-distance"
    return SearchTrace.record(lattice, evaluator, outcome, policy=policy), outcome


@settings(max_examples=40, deadline=None)
@given(problem=problems_with_k(max_k=4), max_sup=st.integers(0, 4))
def test_explored_minimal_nodes_are_the_k_minimal_generalizations(problem, max_sup) -> None:
    table, hs, k = problem
    trace, _ = _trace(table, hs, k, max_sup, OptimalSearch())
    explored = trace.explore()
    assert explored is not None
    _, evaluator, _ = search_setup(table, hs, k, max_sup)
    every_minimal = run_search(MinimalSearch(), evaluator, policy="min-relative-distance")
    lattice = explored.lattice
    minimal = {lattice.node(int(i)) for i in np.flatnonzero(explored.minimal)}
    assert minimal == {e.node for e in every_minimal.solutions}
    # The optimal search's answer is the optimum over the whole lattice.
    assert explored.optimum == explored.chosen
    # Checked by the search plus checked for the report make the whole lattice.
    assert explored.extra_checks == lattice.size - len(trace.checked)
    assert explored.checked.sum() == len(trace.checked)


@settings(max_examples=30, deadline=None)
@given(problem=problems_with_k(max_k=4))
def test_per_height_counts_every_node_once(problem) -> None:
    table, hs, k = problem
    trace, outcome = _trace(table, hs, k, 0, DataflySearch())
    rows = trace.per_height()
    lattice = trace.lattice
    assert [r.height for r in rows] == list(range(lattice.min_height, lattice.max_height + 1))
    assert [r.nodes for r in rows] == np.bincount(lattice.node_heights).tolist()
    assert sum(r.checked for r in rows) == len(trace.checked) == outcome.nodes_checked
    assert sum(r.solutions for r in rows) == len(outcome.solutions)


def test_heuristic_shows_the_true_optimum_beside_its_own_node(samarati) -> None:
    # Seed 000's race/ZIP table: the page shows Datafly's node and, evaluated for
    # the report, the loss optimum over the whole lattice.
    table, hs = samarati
    trace, outcome = _trace(table, hs, 2, 0, DataflySearch())
    explored = trace.explore()
    assert explored is not None
    _, evaluator, metric = search_setup(table, hs, 2, 0)
    optimum = run_search(OptimalSearch(), evaluator, metric=metric).best.node
    assert explored.chosen == outcome.best.node
    assert explored.optimum == optimum
    assert explored.satisfied[explored.lattice.index(explored.chosen)]


def test_large_lattices_keep_no_evaluator_and_are_not_explored(monkeypatch) -> None:
    table = pl.DataFrame({"a": ["x", "y", "x", "y"], "b": ["1", "1", "2", "2"]})
    hs = {
        "a": Hierarchy("a", (("x", "y"), ("*", "*"))),
        "b": Hierarchy("b", (("1", "2"), ("*", "*"))),
    }
    monkeypatch.setattr(trace_module, "MAX_DRAWN_NODES", 3)
    trace, _ = _trace(table, hs, 2, 0, OptimalSearch())
    assert trace.evaluator is None and trace.explore() is None
    assert sum(r.nodes for r in trace.per_height()) == 4


def test_contradictory_traces_are_rejected() -> None:
    lattice = Lattice((1,))
    with pytest.raises(ValueError, match="one entry per checked node"):
        SearchTrace(
            lattice=lattice,
            names=("a",),
            checked=np.zeros((2, 1), dtype=np.int16),
            satisfied=np.zeros(1, dtype=np.bool_),
            solutions=((1,),),
            policy=None,
            evaluator=None,
        )
    with pytest.raises(ValueError, match="released node"):
        SearchTrace(
            lattice=lattice,
            names=("a",),
            checked=np.zeros((0, 1), dtype=np.int16),
            satisfied=np.zeros(0, dtype=np.bool_),
            solutions=(),
            policy=None,
            evaluator=None,
        )
