"""The whole pipeline through the Python API."""

from __future__ import annotations

import json

import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems_with_k

import kanonym
from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import Hierarchy


def test_samarati_example_release(samarati) -> None:
    table, hs = samarati
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, seed=3, algorithm="minimal"
    )
    assert result.transformation == {"race": 0, "zip": 1}
    assert result.suppressed_rows == 2
    assert sorted(s.transformation["zip"] for s in result.minimal_generalizations) == [0, 1]
    assert sorted(result.table["zip"].to_list()) == ["9413*"] * 5 + ["9414*"] * 2
    assert kanonym.check(result.table, ["race", "zip"], k=2).k_anonymous


def test_report_has_the_documented_keys(samarati) -> None:
    table, hs = samarati
    report = kanonym.anonymize(table, quasi_identifiers=hs, k=2, max_suppressed_rows=2).report()
    for key in (
        "schema_version",
        "input_rows",
        "released_rows",
        "suppressed_rows",
        "k",
        "quasi_identifiers",
        "transformation",
        "metrics",
        "minimal_generalizations",
        "algorithm",
        "metric",
        "policy",
        "seed",
        "elapsed_seconds",
        "timings",
        "nodes_checked",
        "proven_optimal",
    ):
        assert key in report, key
    # Schema 2: quasi_identifiers maps each to its hierarchy (no separate "hierarchies").
    assert report["schema_version"] == 2 and "hierarchies" not in report
    assert report["quasi_identifiers"] == {
        name: {"source": h.name, "height": h.height} for name, h in hs.items()
    }
    assert list(report["quasi_identifiers"]) == ["race", "zip"]
    assert report["input_rows"] == 9 and report["released_rows"] == 7
    assert set(report["metrics"]) == {
        "precision",
        "precision_by_attribute",
        "completeness",
        "dm",
        "dm-star",
        "entropy",
        "loss",
        "equivalence_classes",
        "aecs",
        "height",
        "average-class-size",
        "non-monotonic-entropy",
        "arx-loss",
    }
    assert report["metric"] == "loss" and report["policy"] is None
    json.dumps(report)  # serializable as is


def test_seed_makes_the_release_reproducible(samarati) -> None:
    table, hs = samarati
    first = kanonym.anonymize(table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, seed=11)
    again = kanonym.anonymize(table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, seed=11)
    other = kanonym.anonymize(table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, seed=12)
    assert first.table.equals(again.table)
    assert first.seed == 11
    assert not first.table.equals(other.table) or first.table.height < 3


def test_seed_is_drawn_when_not_given(samarati) -> None:
    table, hs = samarati
    seeds = {
        kanonym.anonymize(table, quasi_identifiers=hs, k=2, max_suppressed_rows=2).seed
        for _ in range(3)
    }
    assert len(seeds) == 3


def test_identifying_columns_are_dropped_and_others_kept(samarati) -> None:
    table, hs = samarati
    table = table.with_columns(
        pl.Series("name", [f"p{i}" for i in range(9)]),
        pl.Series("disease", ["flu"] * 9),
    )
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=2, identifying=["name"], sensitive=["disease"], seed=1
    )
    assert result.table.columns == ["race", "zip", "disease"]
    assert result.table["disease"].to_list() == ["flu"] * result.table.height


def test_pandas_input_and_output(samarati) -> None:
    table, hs = samarati
    result = kanonym.anonymize(table.to_pandas(), quasi_identifiers=hs, k=2, seed=1)
    assert isinstance(result.to_pandas(), pd.DataFrame)
    assert result.to_pandas().shape == (9, 2)


def test_specs_are_accepted_as_hierarchies() -> None:
    table = pl.DataFrame({"age": ["31", "32", "38", "39"], "zip": ["02138", "02139"] * 2})
    result = kanonym.anonymize(
        table, quasi_identifiers={"age": "interval:5,10", "zip": "mask"}, k=2, seed=1
    )
    assert kanonym.check(result.table, ["age", "zip"], k=2).k_anonymous


def test_missing_values_form_their_own_class() -> None:
    h = Hierarchy("h", (("a", "b", None), ("ab", "ab", None), ("*", "*", "*")))
    table = pl.DataFrame({"x": ["a", "b", None, None]}, schema={"x": pl.String})
    result = kanonym.anonymize(table, quasi_identifiers={"x": h}, k=2, seed=1)
    # Level 1 keeps the two missing values apart from "ab": no merging into a wrong class.
    assert result.transformation == {"x": 1}
    assert sorted(result.table["x"].fill_null("<missing>").to_list()) == [
        "<missing>",
        "<missing>",
        "ab",
        "ab",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"quasi_identifiers": {"nope": "suppress"}}, "column 'nope' not found"),
        ({"k": 10}, "larger than the table"),
        ({"k": 0}, "`k` must be"),
        ({"max_suppression": 0.1, "max_suppressed_rows": 1}, "mutually exclusive"),
        ({"identifying": ["race"]}, "both"),
        ({"algorithm": "magic"}, "unknown algorithm"),
        ({"policy": "best", "algorithm": "minimal"}, "unknown policy"),
        ({"metric": "best"}, "unknown metric"),
        ({"policy": "min-suppression"}, "applies only to minimal"),
        ({"metric": "dm", "algorithm": "samarati"}, "applies only to optimal"),
        ({"time_limit": -1.0}, "`time_limit` must be a number of seconds"),
    ],
)
def test_bad_options_are_input_errors(samarati, options, message) -> None:
    table, hs = samarati
    arguments = {"quasi_identifiers": hs, "k": 2, **options}
    with pytest.raises(InputError, match=message):
        kanonym.anonymize(table, **arguments)


def test_value_absent_from_hierarchy(samarati) -> None:
    table, hs = samarati
    table = table.with_columns(pl.Series("zip", ["99999", *table["zip"].to_list()[1:]]))
    with pytest.raises(HierarchyError, match="99999"):
        kanonym.anonymize(table, quasi_identifiers=hs, k=2)


@settings(max_examples=60, deadline=None)
@given(problem=problems_with_k(max_k=4), max_sup=st.integers(0, 5), seed=st.integers(0, 99))
def test_every_release_is_k_anonymous_within_maxsup(problem, max_sup, seed) -> None:
    table, hs, k = problem
    for algorithm in ("minimal", "samarati", "optimal", "incognito"):
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=k,
            max_suppressed_rows=max_sup,
            algorithm=algorithm,
            seed=seed,
        )
        assert table.height - result.table.height == result.suppressed_rows <= max_sup
        if result.table.height:  # MaxSup may allow suppressing every row
            assert kanonym.check(result.table, list(hs), k=k).k_anonymous


def test_min_and_max_levels_bound_the_choice(samarati) -> None:
    table, hs = samarati
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, min_levels={"race": 1}, seed=1
    )
    assert result.transformation["race"] == 1
    capped = kanonym.anonymize(
        table, quasi_identifiers=hs, k=2, max_suppressed_rows=0, max_levels={"zip": 1}, seed=1
    )
    # Without suppression [0,2] and [1,1] are minimal; capping ZIP at 1 leaves [1,1].
    assert capped.transformation == {"race": 1, "zip": 1}
    assert capped.report()["max_levels"] == {"zip": 1}


def test_weights_steer_the_optimum(samarati) -> None:
    table, hs = samarati
    # Unweighted loss prefers GT[0,1]; making ZIP's loss cost nothing prefers
    # generalizing ZIP fully (GT[0,2]: nothing suppressed, race kept).
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=2, max_suppressed_rows=2, weights={"zip": 0.0}, seed=1
    )
    assert result.transformation == {"race": 0, "zip": 2}
    assert result.report()["weights"] == {"race": 1.0, "zip": 0.0}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"weights": {"age": 1.0}}, "not a quasi-identifier"),
        ({"weights": {"zip": -1.0}}, "weight of 'zip'"),
        ({"min_levels": {"zip": 2}, "max_levels": {"zip": 1}}, "above its `max_levels` 1"),
        ({"max_levels": {"zip": 5}}, "above the height"),
        ({"min_levels": {"race": 1.5}}, "whole number"),
    ],
)
def test_bad_bounds_and_weights(samarati, options, message) -> None:
    table, hs = samarati
    with pytest.raises(InputError, match=message):
        kanonym.anonymize(table, quasi_identifiers=hs, k=2, **options)


def test_issue10_p7_nested_columns_through_the_api_are_refused() -> None:
    """Issue 10, point 7: a list column reached Polars' writer and escaped as its traceback."""
    frame = pl.DataFrame(
        {"zip": ["02138", "02139"] * 3, "codes": [["a", "b"], ["c"]] * 3, "name": ["x"] * 6}
    )
    with pytest.raises(InputError, match="codes"):
        kanonym.anonymize(
            frame,
            quasi_identifiers={"zip": "mask"},
            k=2,
            insensitive=["codes"],
            identifying=["name"],
        )
    # An identifying list column is dropped, so it is no obstacle.
    kanonym.anonymize(frame, quasi_identifiers={"zip": "mask"}, k=2, identifying=["name", "codes"])
