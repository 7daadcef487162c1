"""Datafly (Sweeney 1997): its greedy path, its answers, and its distance from optimal."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.strategies import huge_lattice_table, problems, search_setup

import kanonym
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.encode import encode
from kanonym.errors import NoSolutionError
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.metrics import METRICS
from kanonym.search import ALGORITHMS, DataflySearch, SearchControl, run_search


def _zip_sex() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """Three ZIPs crossed with two sexes, one row each.

    ZIP has more distinct values, so Datafly generalizes it first, and to its
    root: at level 1 (z12, z3) ZIP still ties with sex and goes first. Under
    DM* the optimum is to generalize sex instead: (0, 1) gives three classes
    of 2 (DM* 12) where (2, 0) gives two of 3 (DM* 18).
    """
    zips = Hierarchy("zip", (("z1", "z2", "z3"), ("z12", "z12", "z3"), ("*", "*", "*")))
    sex = Hierarchy("sex", (("M", "F"), ("*", "*")))
    table = pl.DataFrame(
        {"zip": ["z1", "z1", "z2", "z2", "z3", "z3"], "sex": ["M", "F", "M", "F", "M", "F"]}
    )
    return table, {"zip": zips, "sex": sex}


def test_generalizes_the_attribute_with_most_distinct_values_first() -> None:
    _, evaluator, metric = search_setup(*_zip_sex(), k=2, max_sup=0)
    outcome = run_search(DataflySearch(), evaluator, metric=metric)
    assert outcome.best.node == (2, 0)
    assert outcome.best.satisfied and outcome.best.suppressed_rows == 0
    # One path: bottom, ZIP (3 values > 2), ZIP again (2 values, tie with sex, first column).
    assert sorted(e.node for e in evaluator.evaluated()) == [(0, 0), (1, 0), (2, 0)]
    assert outcome.nodes_checked == 3


def test_is_not_optimal_on_the_hand_made_table() -> None:
    _, datafly_evaluator, datafly_metric = search_setup(
        *_zip_sex(), k=2, max_sup=0, metric="dm-star"
    )
    _, optimal_evaluator, optimal_metric = search_setup(
        *_zip_sex(), k=2, max_sup=0, metric="dm-star"
    )
    datafly = run_search(DataflySearch(), datafly_evaluator, metric=datafly_metric).best
    optimal = run_search(ALGORITHMS["optimal"], optimal_evaluator, metric=optimal_metric).best
    assert optimal.node == (0, 1)
    assert optimal.score is not None and datafly.score is not None
    assert (datafly.score, optimal.score) == (18, 12)


def test_ties_go_to_the_first_column() -> None:
    # Two attributes with two values each: the first is generalized first.
    a = Hierarchy("a", (("a0", "a1"), ("*", "*")))
    b = Hierarchy("b", (("b0", "b1"), ("*", "*")))
    table = pl.DataFrame({"a": ["a0", "a0", "a1", "a1"], "b": ["b0", "b1", "b0", "b1"]})
    _, evaluator, metric = search_setup(table, {"a": a, "b": b}, k=2, max_sup=0)
    assert run_search(DataflySearch(), evaluator, metric=metric).best.node == (1, 0)


def test_stays_within_the_bounds_of_a_bounded_lattice() -> None:
    # ZIP capped at level 1: after (1, 0) fails, sex is the only candidate left.
    _, evaluator, metric = search_setup(*_zip_sex(), k=2, max_sup=0)
    outcome = run_search(DataflySearch(), evaluator, metric=metric, upper=(1, 1))
    assert outcome.best.node == (1, 1)
    # Sex fixed at level 1 from the start: the bottom of the box already satisfies.
    _, evaluator, metric = search_setup(*_zip_sex(), k=2, max_sup=0)
    outcome = run_search(DataflySearch(), evaluator, metric=metric, lower=(0, 1))
    assert outcome.best.node == (0, 1)
    assert outcome.nodes_checked == 1


def test_suppression_stops_the_walk_early() -> None:
    # Two singleton classes may go: the bottom already satisfies with 2 rows suppressed.
    table, hs = _zip_sex()
    table = pl.concat([table, table.head(4)])
    _, evaluator, metric = search_setup(table, hs, k=2, max_sup=2)
    best = run_search(DataflySearch(), evaluator, metric=metric).best
    assert (best.node, best.suppressed_rows) == ((0, 0), 2)


def test_returns_nothing_when_the_top_fails() -> None:
    _, evaluator, metric = search_setup(*_zip_sex(), k=7, max_sup=0)
    with pytest.raises(NoSolutionError, match="no generalization satisfies"):
        run_search(DataflySearch(), evaluator, metric=metric)
    assert (2, 1) in {e.node for e in evaluator.evaluated()}


def test_stops_at_the_deadline() -> None:
    _, evaluator, metric = search_setup(*_zip_sex(), k=2, max_sup=0)
    evaluator.use_metric(metric)
    control = SearchControl(deadline=0.0)
    assert DataflySearch().solutions(Lattice((2, 1)), evaluator, control) == []
    assert control.timed_out
    assert evaluator.checks == 0


@pytest.mark.parametrize("metric_name", sorted(METRICS))
@settings(max_examples=60, deadline=None)
@given(problem=problems(), k=st.integers(1, 4), max_sup=st.integers(0, 5))
def test_satisfies_and_is_never_better_than_optimal(metric_name, problem, k, max_sup) -> None:
    table, hs = problem
    _, optimal_evaluator, optimal_metric = search_setup(table, hs, k, max_sup, metric_name)
    _, evaluator, metric = search_setup(table, hs, k, max_sup, metric_name)
    try:
        optimal = run_search(ALGORITHMS["optimal"], optimal_evaluator, metric=optimal_metric).best
    except NoSolutionError:
        # k-anonymity with minimal required suppression is monotone: nothing
        # satisfies exactly when the top fails, where Datafly ends.
        assert not oracle.satisfying_nodes(table, hs, k, max_sup)
        with pytest.raises(NoSolutionError, match="no generalization satisfies"):
            run_search(DataflySearch(), evaluator, metric=metric)
        return
    best = run_search(DataflySearch(), evaluator, metric=metric).best
    assert best.satisfied and best.suppressed_rows <= max_sup
    assert best.score is not None and optimal.score is not None
    assert best.score >= optimal.score - 1e-12
    # One path up the lattice: at most one check per height.
    assert evaluator.checks <= sum(encode(table, hs).heights) + 1


def test_release_through_the_api_is_k_anonymous() -> None:
    hierarchies = adult_hierarchies()
    result = kanonym.anonymize(
        load_adult(),
        quasi_identifiers=hierarchies,
        k=5,
        max_suppression=0.04,
        algorithm="datafly",
        metric="loss",
        seed=1,
    )
    assert kanonym.check(result.table, list(hierarchies), k=5).k_anonymous
    assert result.suppressed_rows <= result.max_suppressed_rows


def test_datafly_runs_where_exact_searches_cannot() -> None:
    table, specs = huge_lattice_table()
    with pytest.raises(kanonym.InputError, match="datafly"):
        kanonym.anonymize(table, quasi_identifiers=specs, k=2, seed=1)
    result = kanonym.anonymize(
        table, quasi_identifiers=specs, k=2, algorithm="datafly", max_suppressed_rows=10, seed=1
    )
    assert kanonym.check(result.table, list(specs), k=2).k_anonymous
    assert result.report()["proven_optimal"] is False
