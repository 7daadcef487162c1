"""What the HTML report shows: aggregation with small cells merged, class-size summaries."""

from __future__ import annotations

import statistics
from collections import Counter

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.report.content import MISSING, Bar, aggregate, class_size_summary

VALUES = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", None]), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(values=VALUES, data=st.data(), max_bars=st.integers(1, 6))
def test_no_bar_names_a_value_counted_fewer_than_k_times(values, data, max_bars) -> None:
    k = data.draw(st.integers(1, min(8, len(values))), label="k")
    counts = Counter(MISSING if v is None else v for v in values)
    bars = aggregate(pl.Series(values, dtype=pl.String), min_count=k, max_bars=max_bars)
    assert sum(bar.count for bar in bars) == len(values)
    assert len(bars) <= max_bars
    assert sum(1 for bar in bars if bar.merged) <= 1
    for bar in bars:
        # Every bar, merged or not, counts at least k rows: none gives a small cell away.
        assert bar.count >= k
        if not bar.merged:
            assert counts[bar.label] == bar.count
    merged = [bar for bar in bars if bar.merged]
    shown = {bar.label for bar in bars if not bar.merged}
    assert sum(b.merged for b in merged) == len(counts) - len(shown)


def test_bars_follow_the_given_order_then_text_order_with_missing_last() -> None:
    values = pl.Series(["b", "a", None, "z", "a", "b", None, "z"])
    bars = aggregate(values, min_count=1, order=("z", "b"))
    assert [bar.label for bar in bars] == ["z", "b", "a", MISSING]


def test_too_many_values_keep_the_most_frequent() -> None:
    values = pl.Series(["a"] * 5 + ["b"] * 4 + ["c"] * 3 + ["d"] * 3)
    bars = aggregate(values, min_count=1, max_bars=3)
    assert [(b.label, b.count, b.merged) for b in bars] == [
        ("a", 5, 0),
        ("b", 4, 0),
        ("other (2 values)", 6, 2),
    ]


def test_bad_parameters_are_rejected() -> None:
    with pytest.raises(ValueError):
        aggregate(pl.Series(["a"]), min_count=0)
    with pytest.raises(ValueError):
        Bar(label="a", count=0)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(1, 50), st.integers(1, 20), min_size=1, max_size=12))
def test_class_size_summary_matches_the_expanded_sizes(class_sizes) -> None:
    sizes = [size for size, count in class_sizes.items() for _ in range(count)]
    summary = class_size_summary(class_sizes)
    assert summary["classes"] == len(sizes) and summary["rows"] == sum(sizes)
    assert summary["median"] == statistics.median(sizes)
    assert summary["smallest"] == min(sizes) and summary["largest"] == max(sizes)
    assert summary["mean"] == pytest.approx(statistics.fmean(sizes))
