"""mu-Argus: the generalization walk, its two suppression phases, and Sweeney's gap closed."""

from __future__ import annotations

import itertools

import polars as pl
import pytest
from tests.strategies import huge_lattice_table

import kanonym
from kanonym.encode import encode
from kanonym.errors import SearchTimeoutError
from kanonym.evaluation import CellSuppressionEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import KAnonymity
from kanonym.search import MuArgusSearch, SearchControl, run_search
from kanonym.search.muargus import rare_counts


def _setup(table, hs, k, max_sup):
    evaluator = CellSuppressionEvaluator(
        encode(table, hs), [KAnonymity(k=k)], max_suppressed_rows=max_sup, method="mu-argus"
    )
    context = MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set)
    return evaluator, make_metric("loss", context)


def _rare_vs_distinct() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """`a` has more distinct values (4) but none rare; `b` has 3 values, 2 of them rare."""
    a = Hierarchy("a", (("a1", "a2", "a3", "a4"), ("*",) * 4))
    b = Hierarchy("b", (("b1", "b2", "b3"), ("*",) * 3))
    table = pl.DataFrame(
        {
            "a": ["a1", "a1", "a2", "a2", "a3", "a3", "a4", "a4"],
            "b": ["b1", "b1", "b1", "b1", "b1", "b1", "b2", "b3"],
        }
    )
    return table, {"a": a, "b": b}


def test_rare_values_per_attribute() -> None:
    evaluator, _ = _setup(*_rare_vs_distinct(), k=2, max_sup=0)
    assert rare_counts(evaluator, (0, 0), 2) == ([0, 2], [0, 0])
    # At (0, 1) no single value is rare: the pairs decide.
    assert rare_counts(evaluator, (0, 1), 2) == ([0, 0], [0, 0])


def test_generalizes_the_attribute_with_most_rare_values_not_most_distinct() -> None:
    evaluator, metric = _setup(*_rare_vs_distinct(), k=2, max_sup=0)
    best = run_search(MuArgusSearch(), evaluator, metric=metric).best
    assert best.node == (0, 1)
    # Datafly would first generalize `a` (4 distinct values against 3).
    datafly = kanonym.anonymize(
        _rare_vs_distinct()[0], quasi_identifiers=_rare_vs_distinct()[1], k=2, algorithm="datafly"
    )
    assert datafly.transformation["a"] == 1


def test_pairs_decide_when_no_single_value_is_rare() -> None:
    # Every value twice per attribute, but the pairs (x1, y2), (x2, y1) once each.
    x = Hierarchy("x", (("x1", "x2"), ("*", "*")))
    y = Hierarchy("y", (("y1", "y2", "y3"), ("*",) * 3))
    table = pl.DataFrame(
        {"x": ["x1", "x1", "x2", "x2", "x1", "x2"], "y": ["y1", "y1", "y2", "y2", "y3", "y3"]}
    )
    evaluator, _ = _setup(table, {"x": x, "y": y}, k=2, max_sup=0)
    singles, combined = rare_counts(evaluator, (0, 0), 2)
    assert singles == [0, 0] and combined == [2, 2]


def test_sweeneys_gap_is_closed_by_the_completion() -> None:
    # {0,1}^4 once each: no rare combination of up to three attributes, yet every row
    # is unique. mu-Argus's own phase blanks nothing; the completion protects it.
    rows = list(itertools.product(("0", "1"), repeat=4))
    table = pl.DataFrame({f"q{j}": [r[j] for r in rows] for j in range(4)})
    hs = {f"q{j}": Hierarchy(f"q{j}", (("0", "1"), ("*", "*"))) for j in range(4)}
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hs,
        k=2,
        algorithm="mu-argus",
        technique="_CS",
        max_suppressed_rows=16,
        seed=1,
    )
    cells = result.report()["suppressed_cells"]
    assert cells["by_phase"]["combinations"] == 0
    assert cells["by_phase"]["completion"] == cells["total"] > 0
    assert kanonym.check(result.table, list(hs), k=2).k_anonymous


def test_without_room_to_suppress_it_generalizes_until_k_anonymous() -> None:
    evaluator, metric = _setup(*_rare_vs_distinct(), k=2, max_sup=0)
    best = run_search(MuArgusSearch(), evaluator, metric=metric).best
    assert best.suppressed_rows == 0
    assert evaluator.conversion(best.node).suppression.total_cells == 0


def test_stops_at_the_time_limit() -> None:
    evaluator, metric = _setup(*_rare_vs_distinct(), k=2, max_sup=0)
    with pytest.raises(SearchTimeoutError, match="time limit"):
        run_search(MuArgusSearch(), evaluator, metric=metric, control=SearchControl(deadline=0.0))


def test_runs_on_a_lattice_too_large_to_search_exactly() -> None:
    table, specs = huge_lattice_table()
    result = kanonym.anonymize(
        table, quasi_identifiers=specs, k=2, algorithm="mu-argus", max_suppression=0.1, seed=1
    )
    assert result.report()["proven_optimal"] is False
    assert result.report()["suppressed_cells"]["rows"] <= 20
    assert kanonym.check(result.table, list(specs), k=2).k_anonymous
