"""Quasi-identifier discovery (kanonym.qi_scan): ranking, time limit, monotonicity."""

from __future__ import annotations

from collections import Counter

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.attacks.scan import scan_quasi_identifiers
from kanonym.errors import InputError

PEOPLE = pl.DataFrame(
    {
        "zip": ["02138", "02138", "02138", "02139", "02139"],
        "sex": ["F", "M", "F", "F", "M"],
        "dob": ["64", "64", "65", "64", "64"],
        "state": ["MA"] * 5,
    }
)


def test_ranking_and_counts() -> None:
    s = kanonym.qi_scan(PEOPLE, ["zip", "sex", "dob", "state"], max_size=2)
    assert s.total == 4 + 6 and s.complete and s.evaluated == 10
    best = s.combinations[0]
    # zip+sex: (02138,F) x2, (02138,M), (02139,F), (02139,M).
    assert (best.columns, best.unique_records, best.classes) == (("zip", "sex"), 3, 4)
    assert best.uniqueness == 3 / 5
    found = {c.columns: c.unique_records for c in s.combinations}
    assert found[("state",)] == found[("sex", "state")] == 0
    # Ties: fewer columns first, then the order of evaluation.
    assert s.combinations[-1].columns == ("sex", "state")
    ranked = [(-c.unique_records, len(c.columns)) for c in s.combinations]
    assert ranked == sorted(ranked)


def test_defaults_scan_every_column_up_to_three() -> None:
    s = kanonym.qi_scan(PEOPLE)
    assert s.candidates == ("zip", "sex", "dob", "state") and s.max_size == 3
    assert s.total == 4 + 6 + 4 and s.complete
    assert s.combinations[0].unique_records == 5  # zip, sex, dob


def test_time_limit_stops_and_says_so() -> None:
    s = kanonym.qi_scan(PEOPLE, time_limit=1e-9)
    assert not s.complete and s.evaluated < s.total
    assert s.as_dict()["complete"] is False
    assert "stopped by the time limit" in s.text(top=3)


def test_missing_values_form_a_class() -> None:
    t = pl.DataFrame({"a": [None, None, "x"]})
    assert kanonym.qi_scan(t).combinations[0].unique_records == 1


def test_a_column_may_be_named_len() -> None:
    # The class sizes live in a column of their own, whatever the table's names.
    s = kanonym.qi_scan(pl.DataFrame({"len": ["a", "a", "b"], "count": ["1", "2", "2"]}))
    found = {c.columns: c.unique_records for c in s.combinations}
    assert found == {("len",): 1, ("count",): 1, ("len", "count"): 3}


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"columns": ["zip", "zip"]}, "named twice"),
        ({"columns": ["age"]}, "column 'age' not found"),
        ({"columns": []}, "at least one column"),
        ({"max_size": 0}, "largest combination"),
        ({"time_limit": 0}, "time limit"),
    ],
)
def test_bad_requests(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        kanonym.qi_scan(PEOPLE, **kwargs)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(*(st.sampled_from(["x", "y", None]) for _ in range(4))),
        min_size=1,
        max_size=25,
    )
)
def test_uniqueness_is_monotone_in_adding_columns(rows: list[tuple[str | None, ...]]) -> None:
    names = ["a", "b", "c", "d"]
    frame = pl.DataFrame(rows, schema=dict.fromkeys(names, pl.String), orient="row")
    # Every combination measured and ranked: no column set apart as a direct identifier.
    scan = scan_quasi_identifiers(frame, names, max_size=4, direct_identifier_uniqueness=None)
    found = {c.columns: c.unique_records for c in scan.combinations}
    assert len(found) == scan.total == 15
    for columns, unique in found.items():
        picked = [tuple(row[names.index(n)] for n in columns) for row in rows]
        assert unique == sum(1 for count in Counter(picked).values() if count == 1)
        for bigger, more in found.items():
            if set(columns) < set(bigger):
                assert more >= unique
