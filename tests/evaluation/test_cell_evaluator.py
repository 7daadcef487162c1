"""Node checks under cell suppression: the proxy, non-monotone acceptance, exact optimum."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems_with_k

from kanonym.encode import encode, encode_sensitive
from kanonym.errors import InputError
from kanonym.evaluation import CellSuppressionEvaluator
from kanonym.evaluation.cells import measure_cells
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.metrics import METRICS, MetricContext, make_metric, score_tolerance
from kanonym.metrics.ranking import best_of
from kanonym.models import DistinctLDiversity, KAnonymity
from kanonym.search import ALGORITHMS, run_search


def _non_monotone() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """At (0, 0) three single rows share b1 and pair up by blanking A; one level up
    two of them merge into a class of 2 < k = 3 that can only join others by
    touching more rows than MaxSup = 3."""
    a = Hierarchy("a", (("a1", "a2", "a3", "a4"), ("g1", "g1", "g2", "g2"), ("*",) * 4))
    b = Hierarchy("b", (("b1", "b2"), ("*", "*")))
    table = pl.DataFrame(
        {
            "a": ["a1", "a2", "a4", "a3", "a3", "a3", "a3", "a3", "a3"],
            "b": ["b1", "b1", "b1", "b1", "b1", "b1", "b2", "b2", "b2"],
        }
    )
    return table, {"a": a, "b": b}


def _evaluator(table, hs, k, max_sup, **options) -> CellSuppressionEvaluator:
    return CellSuppressionEvaluator(
        encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup, **options
    )


def test_acceptance_is_not_monotone_but_its_proxy_is() -> None:
    evaluator = _evaluator(*_non_monotone(), k=3, max_sup=3)
    low, high = evaluator.evaluate((0, 0)), evaluator.evaluate((1, 0))
    assert (low.satisfied, low.proxy, low.suppressed_rows) == (True, True, 3)
    assert (high.satisfied, high.proxy) == (False, True)
    assert not evaluator.monotone() and evaluator.proxy_monotone()
    assert evaluator.conversion((0, 0)).suppression.cells.tolist() == [3, 0]
    assert evaluator.conversion((1, 0)) is None


@pytest.mark.parametrize("algorithm", ["minimal", "samarati", "incognito"])
def test_searches_that_infer_acceptance_refuse_cell_suppression(algorithm: str) -> None:
    table, hs = _non_monotone()
    evaluator = _evaluator(table, hs, k=3, max_sup=3)
    search = ALGORITHMS[algorithm]
    context = MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set)
    with pytest.raises(InputError, match="not monotone"):
        if search.uses_metric:
            run_search(search, evaluator, metric=make_metric("loss", context))
        else:
            run_search(search, evaluator, policy="min-relative-distance")


def test_optimal_finds_the_accepted_node_not_a_failing_generalization() -> None:
    table, hs = _non_monotone()
    evaluator = _evaluator(table, hs, k=3, max_sup=3)
    metric = make_metric(
        "dm-star", MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set)
    )
    best = run_search(ALGORITHMS["optimal"], evaluator, metric=metric).best
    assert best.satisfied and evaluator.conversion(best.node) is not None


def _brute_force(evaluator, metric):
    lattice = Lattice(evaluator.encoded.heights)
    evaluator.use_metric(metric)
    found = [evaluator.evaluate(lattice.node(i)) for i in range(lattice.size)]
    accepted = [e for e in found if e.satisfied]
    best = best_of(accepted, score_tolerance(metric))
    return None if best is None else (best.score, best.node)


@settings(max_examples=60, deadline=None)
@given(problems_with_k(max_k=4), st.integers(0, 12), st.sampled_from(sorted(METRICS)))
def test_optimal_equals_brute_force_under_cell_suppression(problem, max_sup, metric_name):
    table, hs, k = problem
    searched = _evaluator(table, hs, k=k, max_sup=max_sup)
    context = MetricContext(encoded=searched.encoded, frequency_set=searched.frequency_set, k=k)
    # With k within the table the top node (one class, nothing blanked) is accepted.
    outcome = run_search(ALGORITHMS["optimal"], searched, metric=make_metric(metric_name, context))
    exhaustive = _evaluator(table, hs, k=k, max_sup=max_sup)
    expected = _brute_force(exhaustive, make_metric(metric_name, context))
    # Same conversion, same scores: the pruned search must meet the minimum exactly.
    assert (outcome.best.score, outcome.best.node) == expected


@settings(max_examples=40, deadline=None)
@given(problems_with_k(max_k=3), st.integers(0, 10))
def test_heuristics_under_cell_suppression_return_accepted_nodes(problem, max_sup) -> None:
    table, hs, k = problem
    scores = {}
    for name in ("datafly", "greedy", "mu-argus"):
        method = "mu-argus" if name == "mu-argus" else "patterns"
        evaluator = _evaluator(table, hs, k=k, max_sup=max_sup, method=method)
        context = MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set)
        # Never a refusal: with k within the table the top node is accepted, and
        # every heuristic's walk ends there at the latest.
        best = run_search(ALGORITHMS[name], evaluator, metric=make_metric("loss", context)).best
        assert best.satisfied and best.suppressed_rows <= max_sup
        scores[name] = best.score
    assert scores["greedy"] <= scores["datafly"]


def test_models_beyond_k_hold_in_every_released_group() -> None:
    table = pl.DataFrame(
        {
            "zip": ["z1", "z1", "z2", "z2", "z3", "z3"],
            "disease": ["flu", "cold", "flu", "cold", "flu", "flu"],
        }
    )
    hs = {"zip": Hierarchy("zip", (("z1", "z2", "z3"), ("*",) * 3))}
    encoded = encode(table, hs)
    model = DistinctLDiversity(l=2, attribute="disease")
    evaluator = CellSuppressionEvaluator(
        encoded,
        [KAnonymity(k=2), model],
        max_suppressed_rows=4,
        sensitive=encode_sensitive(table, ["disease"]),
    )
    # (z3) holds flu twice: its rows must join a mixed class, blanking ZIP.
    cells = evaluator.conversion((0,))
    assert cells is not None
    assert cells.suppression.rows >= 2 and cells.suppression.cells.tolist()[0] >= 2
    sizes = cells.suppression.group_sizes
    assert sizes.sum() == 6


def test_star_code_is_the_roots_own_code_at_the_top() -> None:
    table, hs = _non_monotone()
    evaluator = _evaluator(table, hs, k=3, max_sup=3)
    assert evaluator.star((0, 0)).tolist() == [4, 2]
    assert evaluator.star((2, 1)).tolist() == [0, 0]
    assert np.array_equal(evaluator.star((1, 0)), np.array([2, 2]))


def test_cell_evaluation_counts_checks_once_per_node() -> None:
    evaluator = _evaluator(*_non_monotone(), k=3, max_sup=3)
    for node in itertools.chain([(0, 0)], [(0, 0)], [(1, 1)]):
        evaluator.evaluate(node)
    assert evaluator.checks == 2


def test_accepted_returns_the_kept_conversion_or_refuses() -> None:
    evaluator = _evaluator(*_non_monotone(), k=3, max_sup=3)
    assert evaluator.accepted((0, 0)) is evaluator.conversion((0, 0))
    with pytest.raises(ValueError, match=r"node \(1, 0\) has no cell suppression"):
        evaluator.accepted((1, 0))


def test_measure_cells_reports_the_release_with_its_blanked_cells() -> None:
    table, hs = _non_monotone()
    evaluator = _evaluator(table, hs, k=3, max_sup=3)
    context = MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set, k=3)
    metrics = {name: make_metric(name, context) for name in ("precision", "dm")}
    measures, cells = measure_cells((0, 0), evaluator, metrics)
    assert cells == 3  # the three b1 singles show * for A
    assert measures["completeness"] == 1.0
    released = evaluator.accepted((0, 0)).suppression.group_sizes
    assert measures["equivalence_classes"] == len(released)
    # DM (Bayardo & Agrawal 2005) sums the squared released class sizes; no row is removed.
    assert measures["dm"] == int((released**2).sum())
    assert isinstance(measures["dm"], int)
    assert 0.0 < measures["precision"] < 1.0
