"""Greedy local search: Datafly's node improved by hill climbing on the metric."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.strategies import huge_lattice_table, problems, search_setup

import kanonym
from kanonym.encode import encode
from kanonym.errors import NoSolutionError
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.metrics import METRICS
from kanonym.search import (
    ALGORITHMS,
    DataflySearch,
    GreedySearch,
    SearchControl,
    run_search,
)

Problem = tuple[pl.DataFrame, dict[str, Hierarchy]]


def _overshoot() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """A table where Datafly overshoots by one attribute.

    ``a`` (4 values) goes up first; at (1, 0) class a12/b2 has one row, and
    ``b`` (3 values, ``a`` now 2) goes up: Datafly stops at (1, 1). Every ``a``
    value appears twice, so (0, 1), a direct specialization, also satisfies.
    """
    a = Hierarchy("a", (("a1", "a2", "a3", "a4"), ("a12", "a12", "a34", "a34"), ("*",) * 4))
    b = Hierarchy("b", (("b1", "b2", "b3"), ("*", "*", "*")))
    table = pl.DataFrame(
        {
            "a": ["a1", "a1", "a2", "a2", "a3", "a3", "a4", "a4"],
            "b": ["b1", "b2", "b3", "b1", "b2", "b3", "b1", "b2"],
        }
    )
    return table, {"a": a, "b": b}


@dataclass
class _ExpiresAfter(SearchControl):
    """A control whose deadline passes after ``questions`` calls to :meth:`expired`.

    Counting questions instead of seconds makes every stopping point reachable
    and the test deterministic.
    """

    questions: int = 0

    def expired(self) -> bool:
        if self.questions <= 0:
            self.timed_out = True
        self.questions -= 1
        return self.timed_out


def test_improves_on_datafly_by_a_specialization() -> None:
    _, evaluator, metric = search_setup(*_overshoot(), k=2, max_sup=0)
    assert run_search(DataflySearch(), evaluator, metric=metric).best.node == (1, 1)
    _, evaluator, metric = search_setup(*_overshoot(), k=2, max_sup=0)
    outcome = run_search(GreedySearch(), evaluator, metric=metric)
    assert outcome.best.node == (0, 1)
    assert outcome.best.satisfied
    assert outcome.proven_optimal is False
    # Datafly's path (3 checks), then the neighbours of (1, 1) and of (0, 1).
    assert {e.node for e in evaluator.evaluated()} == {(0, 0), (1, 0), (1, 1), (0, 1), (2, 1)}


def test_is_registered_and_declares_its_assumptions() -> None:
    greedy = ALGORITHMS["greedy"]
    assert isinstance(greedy, GreedySearch)
    assert (greedy.uses_metric, greedy.exact, greedy.needs_monotone_models) == (
        True,
        False,
        False,
    )


def test_zero_steps_is_datafly() -> None:
    _, evaluator, metric = search_setup(*_overshoot(), k=2, max_sup=0)
    assert run_search(GreedySearch(max_steps=0), evaluator, metric=metric).best.node == (1, 1)
    with pytest.raises(ValueError, match="max_steps"):
        GreedySearch(max_steps=-1)


def test_returns_nothing_when_the_top_fails() -> None:
    _, evaluator, metric = search_setup(*_overshoot(), k=9, max_sup=0)
    with pytest.raises(NoSolutionError, match="no generalization satisfies"):
        run_search(GreedySearch(), evaluator, metric=metric)


def test_stays_within_the_bounds_of_a_bounded_lattice() -> None:
    # With b fixed at its root, (0, 1) is the box's bottom and the walk never
    # goes below it to (0, 0).
    _, evaluator, metric = search_setup(*_overshoot(), k=2, max_sup=0)
    outcome = run_search(GreedySearch(), evaluator, metric=metric, lower=(0, 1))
    assert outcome.best.node == (0, 1)
    assert all(e.node[1] == 1 for e in evaluator.evaluated())


@pytest.mark.parametrize("questions", range(12))
def test_stops_at_the_deadline_with_an_answer_or_none(questions: int) -> None:
    _, evaluator, metric = search_setup(*_overshoot(), k=2, max_sup=0)
    evaluator.use_metric(metric)
    control = _ExpiresAfter(questions=questions)
    found = GreedySearch().solutions(Lattice((2, 1)), evaluator, control)
    # Datafly asks before each of its 3 checks; fewer answers and there is no node yet.
    if questions < 3:
        assert found == []
        assert control.timed_out
    else:
        assert len(found) == 1 and found[0].satisfied
        assert found[0].node in {(1, 1), (0, 1)}
    # Never more checks than questions answered "not expired".
    assert evaluator.checks <= questions


@pytest.mark.parametrize("metric_name", sorted(METRICS))
@settings(max_examples=40, deadline=None)
@given(problem=problems(), k=st.integers(1, 4), max_sup=st.integers(0, 5))
def test_between_datafly_and_optimal(
    metric_name: str, problem: Problem, k: int, max_sup: int
) -> None:
    table, hs = problem
    _, optimal_evaluator, optimal_metric = search_setup(table, hs, k, max_sup, metric_name)
    _, datafly_evaluator, datafly_metric = search_setup(table, hs, k, max_sup, metric_name)
    _, evaluator, metric = search_setup(table, hs, k, max_sup, metric_name)
    try:
        optimal = run_search(ALGORITHMS["optimal"], optimal_evaluator, metric=optimal_metric).best
    except NoSolutionError:
        # Nothing satisfies exactly when the top fails (k-anonymity with
        # minimal suppression is monotone), and Datafly, greedy's start, ends there.
        assert not oracle.satisfying_nodes(table, hs, k, max_sup)
        with pytest.raises(NoSolutionError, match="no generalization satisfies"):
            run_search(GreedySearch(), evaluator, metric=metric)
        return
    datafly = run_search(DataflySearch(), datafly_evaluator, metric=datafly_metric).best
    best = run_search(GreedySearch(), evaluator, metric=metric).best
    assert best.satisfied and best.suppressed_rows <= max_sup
    assert best.score is not None and datafly.score is not None and optimal.score is not None
    assert optimal.score - 1e-12 <= best.score <= datafly.score + 1e-12


@pytest.mark.parametrize("metric_name", ["loss", "dm-star", "entropy"])
@settings(max_examples=40, deadline=None)
@given(problem=problems(), k=st.integers(1, 4), max_sup=st.integers(0, 5))
def test_unbounded_walk_ends_at_a_local_optimum(
    metric_name: str, problem: Problem, k: int, max_sup: int
) -> None:
    table, hs = problem
    _, evaluator, metric = search_setup(table, hs, k, max_sup, metric_name)
    try:
        best = run_search(GreedySearch(max_steps=10**6), evaluator, metric=metric).best
    except NoSolutionError as error:
        assert "no generalization satisfies" in str(error)
        assert not oracle.satisfying_nodes(table, hs, k, max_sup)
        return
    assert best.score is not None
    lattice = Lattice(encode(table, hs).heights)
    for node in (*lattice.predecessors(best.node), *lattice.successors(best.node)):
        neighbour = evaluator.evaluate(node)
        if neighbour.satisfied:
            assert neighbour.score is not None and neighbour.score >= best.score


@settings(max_examples=40, deadline=None)
@given(problem=problems(), k=st.integers(1, 4), questions=st.integers(0, 30))
def test_any_deadline_gives_a_satisfying_node_or_nothing(
    problem: Problem, k: int, questions: int
) -> None:
    table, hs = problem
    _, evaluator, metric = search_setup(table, hs, k, 2)
    evaluator.use_metric(metric)
    found = GreedySearch().solutions(
        Lattice(evaluator.encoded.heights), evaluator, _ExpiresAfter(questions=questions)
    )
    assert len(found) <= 1
    assert all(e.satisfied and e.suppressed_rows <= 2 for e in found)


def test_greedy_runs_where_exact_searches_cannot() -> None:
    table, specs = huge_lattice_table()
    datafly = kanonym.anonymize(
        table, quasi_identifiers=specs, k=2, algorithm="datafly", max_suppressed_rows=10, seed=1
    )
    result = kanonym.anonymize(
        table, quasi_identifiers=specs, k=2, algorithm="greedy", max_suppressed_rows=10, seed=1
    )
    assert kanonym.check(result.table, list(specs), k=2).k_anonymous
    assert result.report()["proven_optimal"] is False
    loss, datafly_loss = result.metrics["loss"], datafly.metrics["loss"]
    assert isinstance(loss, float) and isinstance(datafly_loss, float)
    assert loss <= datafly_loss + 1e-12
