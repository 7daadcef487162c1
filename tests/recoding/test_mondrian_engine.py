"""Engine details: chunked rounds, missing values, axis kinds, the API entry points."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import kanonym
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.encode import encode, encode_sensitive
from kanonym.hierarchy import Hierarchy, parse_hierarchy
from kanonym.models import DistinctLDiversity, KAnonymity
from kanonym.recoding import RECODINGS, Mondrian, numeric_flags
from kanonym.recoding import mondrian as engine


@pytest.mark.parametrize("relaxed", [False, True])
def test_chunked_rounds_give_the_same_partitioning(monkeypatch, relaxed: bool) -> None:
    table = load_adult().head(3000)
    hierarchies = adult_hierarchies()
    del hierarchies["occupation"]
    encoded = encode(table, hierarchies)
    sensitive = encode_sensitive(table, ["occupation"])
    models = [KAnonymity(k=4), DistinctLDiversity(l=2, attribute="occupation")]
    whole = Mondrian(relaxed=relaxed).partition(encoded, models, sensitive=sensitive)
    # 14 occupations: chunks of about 10 units, hundreds per round.
    monkeypatch.setattr(engine, "_CELLS_PER_CHUNK", 140)
    chunked = Mondrian(relaxed=relaxed).partition(encoded, models, sensitive=sensitive)
    assert np.array_equal(whole.row_partition(), chunked.row_partition())
    assert np.array_equal(whole.summary, chunked.summary)
    assert len(whole.sizes) > 300


def test_missing_values_are_values_of_their_own() -> None:
    # age has a missing value: not a number, so it is cut along its hierarchy,
    # where the missing value is a leaf like any other.
    frame = pl.DataFrame(
        {
            "age": ["31", "34", None, None, "52", "58"],
            "zip": ["02138", "02139", "02138", None, None, "02141"],
        }
    )
    result = kanonym.anonymize(
        frame,
        quasi_identifiers={"age": "interval:10,20", "zip": "mask"},
        k=2,
        algorithm="mondrian",
        seed=0,
    )
    assert result.recoding is not None
    assert result.recoding["attributes"] == {"age": "categorical", "zip": "categorical"}
    # The top's children (20-39, 40-59, missing) hold 2 rows each; a class of
    # two missing ages keeps them missing, and their ZIPs generalize to "*".
    pairs = sorted(zip(result.table["age"], result.table["zip"], strict=True), key=str)
    assert pairs == [
        ("30-39", "0213*"),
        ("30-39", "0213*"),
        ("50-59", "*"),
        ("50-59", "*"),
        (None, "*"),
        (None, "*"),
    ]


def test_axis_kinds_follow_the_hierarchy_spec_and_the_values() -> None:
    frame = pl.DataFrame({"a": ["1", "2"], "b": ["3", "x"], "c": ["5", "6"], "d": ["7", "8"]})
    given = {"a": parse_hierarchy("mask"), "b": parse_hierarchy("suppress")}
    built = {name: Hierarchy(name, (tuple(frame[name]), ("*", "*"))) for name in frame.columns}
    encoded = encode(frame, built)
    assert numeric_flags(encoded, given) == (False, False, True, True)
    assert numeric_flags(encoded, given, numeric=["a"], categorical=["d"]) == (
        True,
        False,
        True,
        False,
    )
    with pytest.raises(kanonym.InputError, match="column 'b': value 'x' is not a number"):
        numeric_flags(encoded, given, numeric=["b"])


def test_registry_and_api_names() -> None:
    assert {name: m.variant for name, m in RECODINGS.items()} == {
        "mondrian": "strict",
        "mondrian-relaxed": "relaxed",
    }
    frame = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    as_numbers = kanonym.anonymize(
        frame, quasi_identifiers={"zip": "mask"}, k=2, algorithm="mondrian", numeric=["zip"], seed=0
    )
    # Issue 15, point 1: numbers print as numbers, boxes from the cut and the
    # grid (step 1 for a span of 4): the cut between 2139 and 2141 at 2140.
    assert sorted(as_numbers.table["zip"]) == ["2138-2139"] * 2 + ["2140-2142"] * 2
    config = kanonym.AnonymizationConfig(
        quasi_identifiers={"zip": "mask"}, k=2, algorithm="mondrian", weights={"zip": 2.0}
    )
    masked = kanonym.anonymize(frame, config)
    assert sorted(masked.table["zip"]) == ["0213*"] * 2 + ["0214*"] * 2
    assert masked.report()["weights"] == {"zip": 2.0}


def test_the_whole_table_must_satisfy_the_models() -> None:
    frame = pl.DataFrame({"x": ["1", "2", "3"], "s": ["a", "a", "b"]})
    with pytest.raises(kanonym.NoSolutionError, match="whole table as one class fails"):
        kanonym.anonymize(
            frame,
            quasi_identifiers={"x": "interval:5"},
            k=1,
            models=[kanonym.DistinctLDiversity(attribute="s", l=3)],
            algorithm="mondrian",
        )
