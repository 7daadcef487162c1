"""What the HTML report shows: aggregation with small cells merged, class-size summaries."""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from typing import Any, Literal

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kanonym.report.charts import distribution_figure
from kanonym.report.content import (
    MISSING,
    Bar,
    Histogram,
    QiDistribution,
    aggregate,
    class_size_summary,
    histogram,
)

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


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(-50, 400), min_size=1, max_size=80),
    k=st.integers(1, 10),
    max_bins=st.integers(1, 30),
)
def test_histogram_bins_are_contiguous_round_and_none_under_k(values, k, max_bins) -> None:
    assume(len(values) >= k)
    bins = histogram(values, min_count=k, max_bins=max_bins)
    assert sum(b.count for b in bins) == len(values)
    assert all(b.count >= k for b in bins)
    assert all(a.high == b.low for a, b in itertools.pairwise(bins))
    assert bins[0].low <= min(values) and max(values) < bins[-1].high
    # With k above 1 the outer bins are open: no edge is set by the extremes alone.
    assert (bins[0].low == -math.inf and bins[-1].high == math.inf) == (k > 1)
    # Each bin counts exactly the values in [low, high): merging never moves a row.
    for b in bins:
        assert b.count == sum(1 for v in values if b.low <= v < b.high)
    # Edges are multiples of one round width (1, 2 or 5 times a power of ten).
    closed = [b for b in bins if math.isfinite(b.low) and math.isfinite(b.high)]
    widths = {round((b.high - b.low) / b.merged, 9) for b in closed}
    assert len(widths) <= 1
    for width in widths:
        assert f"{width:e}".split("e")[0].rstrip("0").rstrip(".") in {"1", "2", "5"}


def test_date_histogram_bins_start_on_calendar_boundaries() -> None:
    days = pl.Series(["1980-01-15", "1983-07-02", "1999-12-31"] * 3).str.to_date()
    bins = histogram(days.cast(pl.Int32).to_numpy(), min_count=3, scale="date", max_bins=10)
    starts = pl.Series([int(b.low) for b in bins if math.isfinite(b.low)]).cast(pl.Date)
    assert all(day.month == 1 and day.day == 1 for day in starts.to_list())
    assert [b.count for b in bins] == [3, 3, 3]


def test_too_few_values_make_no_histogram() -> None:
    assert histogram([30, 31], min_count=3) == ()


def _input_figure(values: list[int], k: int, scale: Literal["number", "date"]) -> Any:
    drawn = QiDistribution(
        column="age",
        level=None,
        before=(),
        after=(),
        suppressed_cells=0,
        histogram_before=Histogram(
            scale=scale, bins=histogram(values, min_count=k, scale=scale), not_drawn=0
        ),
    )
    return distribution_figure(drawn, k=k)["hconcat"][0]


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(-20_000, 20_000), min_size=1, max_size=60),
    k=st.integers(2, 8),
    scale=st.sampled_from(["number", "date"]),
    further=st.integers(1, 10**6),
    side=st.sampled_from(["low", "high"]),
)
def test_the_input_figure_hides_the_most_extreme_value(values, k, scale, further, side) -> None:
    # One person aged 97 must not move an edge, a label or a count (the last bin is
    # ">= b", never "[95, 100)"), nor may any bin hold fewer than k rows.
    assume(len(values) >= k)
    bins = histogram(values, min_count=k, scale=scale)
    assert all(b.count >= k for b in bins)
    moved = list(values)
    i = moved.index(max(moved) if side == "high" else min(moved))
    moved[i] += further if side == "high" else -further
    assert histogram(moved, min_count=k, scale=scale) == bins
    assert _input_figure(moved, k, scale) == _input_figure(values, k, scale)
