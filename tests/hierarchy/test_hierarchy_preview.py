"""Previewing a hierarchy on a column: rows under each generalized value, level by level."""

from __future__ import annotations

from collections import Counter

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy, IntervalBuilder, MaskBuilder, OrderBuilder, preview

ZIP = Hierarchy(
    name="zip",
    levels=(
        ("02138", "02139", "02141", None),
        ("0213*", "0213*", "0214*", None),
        ("*", "*", "*", "*"),
    ),
)


def test_counts_per_level_most_rows_first_missing_last_on_ties() -> None:
    column = pl.Series(["02139", "02141", None, "02139", "02138", "99999", "99999", "02141"])
    levels = preview(ZIP, column)
    assert [p.level for p in levels] == [0, 1, 2]
    assert levels[0].counts == (("02139", 2), ("02141", 2), ("02138", 1), (None, 1))
    assert levels[1].counts == (("0213*", 3), ("0214*", 2), (None, 1))
    assert levels[2].counts == (("*", 6),)
    assert all(p.uncovered == (("99999", 2),) for p in levels)
    assert [p.rows for p in levels] == [6, 6, 6]


def test_values_are_compared_as_text() -> None:
    ages = IntervalBuilder(widths=(10,)).build(["34", "35", "51"], column="age", source="t")
    levels = preview(ages, pl.Series([34, 35, 51, 7], dtype=pl.Int64))
    assert levels[1].counts == (("30-39", 2), ("50-59", 1))
    assert levels[0].uncovered == (("7", 1),)


def test_a_builder_is_built_on_the_column() -> None:
    levels = preview(OrderBuilder(fanouts=2), pl.Series("grade", ["c", "a", "b", "a", None]))
    assert [p.counts for p in levels] == [
        (("a", 2), ("b", 1), ("c", 1), (None, 1)),
        (("[a, b]", 3), ("[c, c]", 1), (None, 1)),
        (("*", 5),),
    ]
    assert all(p.uncovered == () for p in levels)
    with pytest.raises(InputError, match="column 'age': value 'x' is not a number"):
        preview(IntervalBuilder(widths=(10,)), pl.Series("age", ["x"]))


def test_an_empty_column_counts_nothing() -> None:
    levels = preview(ZIP, pl.Series([], dtype=pl.String))
    assert [(p.counts, p.uncovered) for p in levels] == [((), ())] * 3


def test_a_nested_column_is_refused_naming_the_parameter() -> None:
    with pytest.raises(InputError, match="`values`"):
        preview(ZIP, pl.Series([[1], [2]]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["0213", "0214", "1000", "x"])), max_size=50))
def test_preview_matches_counting_row_by_row(values: list[str | None]) -> None:
    h = MaskBuilder().build(["0213", "0214", "1000", None], column="zip", source="t")
    leaves = set(h.leaves)
    parent = [dict(zip(h.leaves, level, strict=True)) for level in h.levels]
    for p in preview(h, pl.Series(values, dtype=pl.String)):
        expected = Counter(parent[p.level][v] for v in values if v in leaves)
        assert dict(p.counts) == expected
        assert [n for _, n in p.counts] == sorted(expected.values(), reverse=True)
        assert dict(p.uncovered) == Counter(v for v in values if v not in leaves)
