"""Builders that derive hierarchies from a column's values."""

from __future__ import annotations

import pytest

from kanonym.errors import InputError
from kanonym.hierarchy import (
    DateBuilder,
    Hierarchy,
    HierarchyBuilder,
    IntervalBuilder,
    MaskBuilder,
    SuppressBuilder,
)

AGE = IntervalBuilder(widths=(5, 10, 20))


def rows(h: Hierarchy) -> dict[str | None, tuple[str | None, ...]]:
    """Each leaf's generalizations, level 0 to the root."""
    return {row[0]: row for row in zip(*h.levels, strict=True)}


# Interval


def test_interval_integer_labels_are_inclusive() -> None:
    h = AGE.build(["34", "30", "39", "20", "40"], column="age", source="t.csv")
    assert h.name == "interval:5,10,20"
    assert h.height == 4
    assert rows(h)["34"] == ("34", "30-34", "30-39", "20-39", "*")
    assert rows(h)["30"] == ("30", "30-34", "30-39", "20-39", "*")
    assert rows(h)["39"] == ("39", "35-39", "30-39", "20-39", "*")
    assert rows(h)["40"] == ("40", "40-44", "40-49", "40-59", "*")


def test_interval_leaves_sort_numerically_with_missing_last() -> None:
    h = AGE.build(["100", None, "9", "-1", "10", "9"], column="age", source="t.csv")
    assert h.leaves == ("-1", "9", "10", "100", None)


def test_interval_negative_values_floor_downwards() -> None:
    h = IntervalBuilder(widths=(5, 10)).build(["-1", "-5", "-6", "0"], column="t", source="s")
    assert rows(h)["-1"] == ("-1", "-5--1", "-10--1", "*")
    assert rows(h)["-5"] == ("-5", "-5--1", "-10--1", "*")
    assert rows(h)["-6"] == ("-6", "-10--6", "-10--1", "*")
    assert rows(h)["0"] == ("0", "0-4", "0-9", "*")


def test_interval_decimals_make_every_label_half_open() -> None:
    h = AGE.build(["34.5", "34", "-0.5", "1e1"], column="age", source="t.csv")
    assert rows(h)["34.5"] == ("34.5", "[30, 35)", "[30, 40)", "[20, 40)", "*")
    assert rows(h)["34"] == ("34", "[30, 35)", "[30, 40)", "[20, 40)", "*")
    assert rows(h)["-0.5"] == ("-0.5", "[-5, 0)", "[-10, 0)", "[-20, 0)", "*")
    assert rows(h)["1e1"] == ("1e1", "[10, 15)", "[10, 20)", "[0, 20)", "*")


def test_interval_integral_decimals_count_as_integers() -> None:
    h = AGE.build(["34.0", "35"], column="age", source="t.csv")
    assert rows(h)["34.0"][1] == "30-34"


def test_interval_keeps_the_original_strings_as_leaves() -> None:
    h = AGE.build([" 7", "007", "7"], column="age", source="t.csv")
    assert set(h.leaves) == {" 7", "007", "7"}
    assert h.level_values(1) == ("5-9",)


def test_interval_missing_stays_missing_below_the_root() -> None:
    h = AGE.build(["34", None], column="age", source="t.csv")
    assert rows(h)[None] == (None, None, None, None, "*")


def test_interval_of_only_missing_values() -> None:
    h = AGE.build([None, None], column="age", source="t.csv")
    assert h.levels == ((None,), (None,), (None,), (None,), ("*",))


@pytest.mark.parametrize("value", ["7x", "nan", "inf", "1_000", "1/2", "٣", "1e9999", " "])
def test_interval_rejects_non_numbers(value: str) -> None:
    with pytest.raises(InputError) as caught:
        AGE.build(["34", value], column="age", source="t.csv")
    assert str(caught.value) == (
        f"t.csv: column 'age': value '{value}' is not a number (interval hierarchy)"
    )


@pytest.mark.parametrize(
    ("widths", "message"),
    [
        ((), "needs at least one width"),
        ((0, 5), "width 0 is not a positive integer"),
        ((-5,), "width -5 is not a positive integer"),
        ((True, 2), "width True is not a positive integer"),
        ((10, 5), "widths must increase, but 5 follows 10"),
        ((5, 5), "widths must increase, but 5 follows 5"),
        ((5, 7), "width 7 is not a multiple of 5"),
    ],
)
def test_interval_rejects_contradictory_widths(widths: tuple[int, ...], message: str) -> None:
    with pytest.raises(InputError, match=message):
        IntervalBuilder(widths=widths)


def test_interval_builder_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        IntervalBuilder((5, 10))  # type: ignore[call-arg]


# Mask


def test_mask_zip_codes() -> None:
    h = MaskBuilder().build(["02139", "02138"], column="zip", source="t.csv")
    assert h.name == "mask"
    assert h.height == 5
    assert rows(h)["02138"] == ("02138", "0213*", "021**", "02***", "0****", "*")
    assert h.level_values(1) == ("0213*",)


def test_mask_values_of_different_lengths() -> None:
    h = MaskBuilder().build(["02138", "021", "9"], column="zip", source="t.csv")
    assert h.height == 5
    assert h.leaves == ("021", "02138", "9")
    assert rows(h)["021"] == ("021", "02*", "0**", "***", "***", "*")
    assert rows(h)["9"] == ("9", "*", "*", "*", "*", "*")


def test_mask_single_characters_give_height_one() -> None:
    h = MaskBuilder().build(["a", "b", None], column="c", source="t.csv")
    assert h.levels == (("a", "b", None), ("*", "*", "*"))


def test_mask_missing_stays_missing_below_the_root() -> None:
    h = MaskBuilder().build(["abc", None], column="c", source="t.csv")
    assert rows(h)[None] == (None, None, None, "*")


def test_mask_values_already_holding_stars() -> None:
    h = MaskBuilder().build(["a*", "ab", "**"], column="c", source="t.csv")
    assert rows(h)["ab"] == ("ab", "a*", "*")
    assert rows(h)["a*"] == ("a*", "a*", "*")
    assert h.level_values(1) == ("**", "a*")


# Date


def test_date_iso_levels() -> None:
    h = DateBuilder().build(["1964-04-14", "1969-12-31", "1970-01-01"], column="dob", source="s")
    assert h.name == "date"
    assert h.height == 4
    assert rows(h)["1964-04-14"] == ("1964-04-14", "1964-04", "1964", "1960-1969", "*")
    assert rows(h)["1970-01-01"] == ("1970-01-01", "1970-01", "1970", "1970-1979", "*")
    assert h.level_values(3) == ("1960-1969", "1970-1979")


@pytest.mark.parametrize(
    "value", ["1964-04-14T08:30:00", "1964-04-14 08:30", "1964-04-14T08:30:00.25"]
)
def test_date_iso_with_a_time_keeps_the_moment_at_level_zero(value: str) -> None:
    h = DateBuilder().build([value], column="dob", source="s")
    assert h.levels == ((value,), ("1964-04",), ("1964",), ("1960-1969",), ("*",))


def test_date_with_a_format() -> None:
    b = DateBuilder(format="%d/%m/%Y")
    assert b.spec == "date:%d/%m/%Y"
    h = b.build(["14/04/1964", "01/01/2001"], column="dob", source="s")
    assert rows(h)["14/04/1964"] == ("14/04/1964", "1964-04", "1964", "1960-1969", "*")
    assert rows(h)["01/01/2001"][3] == "2000-2009"


def test_date_early_years_are_zero_padded() -> None:
    h = DateBuilder().build(["0064-04-14"], column="dob", source="s")
    assert h.levels[1:4] == (("0064-04",), ("0064",), ("0060-0069",))


def test_date_missing_stays_missing_below_the_root() -> None:
    h = DateBuilder().build([None, "2001-02-03"], column="dob", source="s")
    assert h.leaves == ("2001-02-03", None)
    assert rows(h)[None] == (None, None, None, None, "*")


@pytest.mark.parametrize(
    "value",
    ["1964-13-01", "1964-02-30", "14/04/1964", "1964-4-14", "19640414", "2001-W01-1", "x"],
)
def test_date_rejects_non_iso_values(value: str) -> None:
    with pytest.raises(InputError) as caught:
        DateBuilder().build(["1964-04-14", value], column="dob", source="s.csv")
    message = f"s.csv: column 'dob': value '{value}' is not a date (YYYY-MM-DD)"
    if value == "1964-4-14":
        # Issue 10, point 10: a format that reads every value is suggested.
        message += "; every value of the column reads as a date with 'date:%Y-%m-%d'"
    assert str(caught.value) == message


def test_date_rejects_values_not_matching_the_format() -> None:
    with pytest.raises(InputError, match=r"value '1964-04-14' is not a date \('%d/%m/%Y'\)"):
        DateBuilder(format="%d/%m/%Y").build(["1964-04-14"], column="dob", source="s.csv")


@pytest.mark.parametrize(
    ("fmt", "message"),
    [("%d/%m", "must give the year and the month"), ("%Y", "must give the year"), ("%Q", "bad")],
)
def test_date_rejects_formats_without_year_and_month(fmt: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        DateBuilder(format=fmt)


# Suppress


def test_suppress() -> None:
    h = SuppressBuilder().build(["M", "F", "M", None], column="sex", source="t.csv")
    assert h.name == "suppress"
    assert h.levels == (("F", "M", None), ("*", "*", "*"))


# Shared behaviour

ALL_BUILDERS: list[HierarchyBuilder] = [AGE, MaskBuilder(), DateBuilder(), SuppressBuilder()]


@pytest.mark.parametrize("builder", ALL_BUILDERS, ids=lambda b: b.spec)
def test_empty_string_is_rejected_as_not_missing(builder: HierarchyBuilder) -> None:
    with pytest.raises(InputError, match="value '' is an empty string"):
        builder.build([""], column="c", source="t.csv")


@pytest.mark.parametrize("builder", ALL_BUILDERS, ids=lambda b: b.spec)
def test_no_values(builder: HierarchyBuilder) -> None:
    with pytest.raises(InputError, match=r"^t.csv: column 'c': no values"):
        builder.build([], column="c", source="t.csv")


@pytest.mark.parametrize("builder", ALL_BUILDERS, ids=lambda b: b.spec)
def test_only_missing_values(builder: HierarchyBuilder) -> None:
    h = builder.build([None], column="c", source="t.csv")
    assert h.leaves == (None,)
    assert h.levels[-1] == ("*",)
    assert all(level == (None,) for level in h.levels[:-1])


@pytest.mark.parametrize(
    ("builder", "values"),
    [
        (AGE, ["3", "1", "2"]),
        (MaskBuilder(), ["b", "a", "c"]),
        (DateBuilder(), ["2001-01-03", "2001-01-01"]),
        (SuppressBuilder(), ["b", "a"]),
    ],
    ids=lambda x: getattr(x, "spec", ""),
)
def test_output_does_not_depend_on_input_order(
    builder: HierarchyBuilder, values: list[str | None]
) -> None:
    forward = builder.build(values, column="c", source="t.csv")
    backward = builder.build(values[::-1], column="c", source="t.csv")
    assert forward == backward
