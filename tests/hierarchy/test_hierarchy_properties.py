"""Property tests: every builder yields a valid hierarchy over exactly its input values."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.hierarchy import (
    DateBuilder,
    Hierarchy,
    HierarchyBuilder,
    IntervalBuilder,
    MaskBuilder,
    SuppressBuilder,
    load_arx,
)

FAST = settings(max_examples=60, deadline=None)

# Printable text without surrogates (not encodable) or a byte order mark (which
# a reader strips from the start of a file).
TEXT = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\ufeff"),
    min_size=1,
    max_size=8,
)


@st.composite
def widths(draw: st.DrawFn) -> tuple[int, ...]:
    result = [draw(st.integers(1, 10))]
    for _ in range(draw(st.integers(0, 3))):
        result.append(result[-1] * draw(st.integers(2, 5)))
    return tuple(result)


def numbers() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-10_000, 10_000).map(str),
        st.decimals(-10_000, 10_000, places=3, allow_nan=False, allow_infinity=False).map(str),
    )


def dates() -> st.SearchStrategy[str]:
    return st.dates(date(1, 1, 1), date(9999, 12, 31)).map(date.isoformat)


def with_missing(values: st.SearchStrategy[str]) -> st.SearchStrategy[list[str | None]]:
    return st.lists(st.one_of(st.none(), values), min_size=1, max_size=30)


def check(builder: HierarchyBuilder, values: list[str | None]) -> Hierarchy:
    """Assert the VGH properties independently of Hierarchy's own validation."""
    h = builder.build(values, column="c", source="t.csv")
    assert sorted(h.leaves, key=repr) == sorted(set(values), key=repr)
    assert len(set(h.leaves)) == len(h.leaves)
    assert all(len(level) == len(h.leaves) for level in h.levels)
    for lower, upper in zip(h.levels, h.levels[1:], strict=False):
        parent: dict[str | None, str | None] = {}
        for child, value in zip(lower, upper, strict=True):
            assert parent.setdefault(child, value) == value
    assert set(h.levels[-1]) == {"*"}
    for row in zip(*h.levels, strict=True):
        if row[0] is None:
            assert row[:-1] == (None,) * h.height
    h.covers(values, column="c", source="t.csv")
    return h


@FAST
@given(widths(), with_missing(numbers()))
def test_interval_builder_property(ws: tuple[int, ...], values: list[str | None]) -> None:
    h = check(IntervalBuilder(widths=ws), values)
    assert h.height == len(ws) + 1


@FAST
@given(with_missing(TEXT))
def test_mask_builder_property(values: list[str | None]) -> None:
    h = check(MaskBuilder(), values)
    lengths = [len(v) for v in values if v is not None]
    assert h.height == max(lengths, default=1)
    for level in h.levels[1:-1]:
        for leaf, masked in zip(h.leaves, level, strict=True):
            assert leaf is None or (masked is not None and len(masked) == len(leaf))


@FAST
@given(with_missing(dates()))
def test_date_builder_property(values: list[str | None]) -> None:
    h = check(DateBuilder(), values)
    for leaf, year in zip(h.leaves, h.levels[2], strict=True):
        assert leaf is None or leaf[:4] == year


@FAST
@given(with_missing(dates().map(lambda iso: f"{iso[8:10]}/{iso[5:7]}/{iso[:4]}")))
def test_date_builder_with_format_property(values: list[str | None]) -> None:
    check(DateBuilder(format="%d/%m/%Y"), values)


@FAST
@given(with_missing(TEXT))
def test_suppress_builder_property(values: list[str | None]) -> None:
    assert check(SuppressBuilder(), values).height == 1


@FAST
@given(with_missing(TEXT), st.sampled_from([";", ",", "\t"]))
def test_arx_round_trip_property(values: list[str | None], delimiter: str) -> None:
    h = MaskBuilder().build(values, column="c", source="t.csv")
    with TemporaryDirectory() as folder:
        path = Path(folder) / "h.csv"
        path.write_text(h.to_arx_csv(delimiter=delimiter), encoding="utf-8", newline="")
        assert load_arx(path, delimiter=delimiter).levels == h.levels
