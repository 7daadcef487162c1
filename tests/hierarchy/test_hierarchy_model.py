"""The Hierarchy data model: validation, lookups and ARX export."""

from __future__ import annotations

import dataclasses

import pytest

from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import Hierarchy

ZIP = Hierarchy(
    name="zip.csv",
    levels=(
        ("02138", "02139", "02141", "02142"),
        ("0213*", "0213*", "0214*", "0214*"),
        ("021**", "021**", "021**", "021**"),
        ("*", "*", "*", "*"),
    ),
)


def test_height_leaves_and_level_values() -> None:
    assert ZIP.height == 3
    assert ZIP.leaves == ("02138", "02139", "02141", "02142")
    assert ZIP.level_values(0) == ZIP.leaves
    assert ZIP.level_values(1) == ("0213*", "0214*")
    assert ZIP.level_values(3) == ("*",)


def test_level_values_keep_first_seen_order() -> None:
    h = Hierarchy(name="h", levels=(("a", "b", "c"), ("y", "x", "y"), ("*", "*", "*")))
    assert h.level_values(1) == ("y", "x")


@pytest.mark.parametrize("level", [-1, 4])
def test_level_values_outside_the_hierarchy(level: int) -> None:
    with pytest.raises(IndexError, match=rf"level {level} is outside 0\.\.3"):
        ZIP.level_values(level)


def test_a_single_leaf_is_a_hierarchy_of_height_zero() -> None:
    h = Hierarchy(name="h", levels=(("only",),))
    assert h.height == 0
    assert h.leaves == ("only",)


def test_value_with_two_parents_names_level_and_value() -> None:
    with pytest.raises(HierarchyError) as caught:
        Hierarchy(name="h.csv", levels=(("a", "b"), ("x", "x"), ("p", "q"), ("*", "*")))
    assert str(caught.value) == (
        "hierarchy h.csv: level 1 value 'x' has two parents at level 2: 'p' and 'q'"
    )


def test_same_leaf_in_two_different_rows_is_two_parents() -> None:
    with pytest.raises(HierarchyError) as caught:
        Hierarchy(name="h.csv", levels=(("a", "a"), ("x", "y"), ("*", "*")))
    assert str(caught.value) == (
        "hierarchy h.csv: level 0 value 'a' has two parents at level 1: 'x' and 'y'"
    )


def test_exact_duplicate_rows_are_rejected() -> None:
    with pytest.raises(HierarchyError, match=r"^hierarchy h: level 0 value 'a' appears twice$"):
        Hierarchy(name="h", levels=(("a", "b", "a"), ("x", "x", "x"), ("*", "*", "*")))


def test_top_level_with_two_values() -> None:
    with pytest.raises(HierarchyError) as caught:
        Hierarchy(name="h", levels=(("a", "b", "c"), ("x", "x", "y")))
    assert str(caught.value) == "hierarchy h: top level 1 holds more than one value: 'x' and 'y'"


def test_leaves_only_with_two_leaves_has_no_single_root() -> None:
    with pytest.raises(HierarchyError, match="top level 0"):
        Hierarchy(name="h", levels=(("a", "b"),))


@pytest.mark.parametrize("levels", [(), ((),), ((), ())])
def test_no_levels_or_no_leaves(levels: tuple[tuple[str | None, ...], ...]) -> None:
    with pytest.raises(HierarchyError, match="at least one level and one leaf"):
        Hierarchy(name="h", levels=levels)


def test_levels_of_different_lengths() -> None:
    with pytest.raises(HierarchyError, match="level 1 has 1 values but level 0 has 2 leaves"):
        Hierarchy(name="h", levels=(("a", "b"), ("*",)))


def test_empty_string_is_not_a_value() -> None:
    with pytest.raises(HierarchyError, match="level 1 value '' is an empty string"):
        Hierarchy(name="h", levels=(("a", "b"), ("", ""), ("*", "*")))


def test_missing_value_is_an_ordinary_value() -> None:
    h = Hierarchy(name="h", levels=(("a", None), ("x", None), ("*", "*")))
    assert h.level_values(1) == ("x", None)
    h.covers([None, "a"], column="c", source="t.csv")


def test_missing_value_with_two_parents_is_shown_as_missing() -> None:
    with pytest.raises(HierarchyError) as caught:
        Hierarchy(name="h", levels=(("a", "b"), (None, None), ("p", "q"), ("*", "*")))
    assert str(caught.value) == (
        "hierarchy h: level 1 value <missing> has two parents at level 2: 'p' and 'q'"
    )


def test_covers_accepts_known_values_with_repeats() -> None:
    ZIP.covers(["02138", "02142", "02138"], column="zip", source="t.csv")


def test_covers_names_source_column_value_and_hierarchy() -> None:
    with pytest.raises(HierarchyError) as caught:
        ZIP.covers(["02138", "99999"], column="zip", source="t.csv")
    assert str(caught.value) == "t.csv: column 'zip': value '99999' is not in hierarchy zip.csv"


def test_missing_value_never_matches_another_value() -> None:
    with pytest.raises(HierarchyError, match=r"value <missing> is not in hierarchy zip\.csv"):
        ZIP.covers(["02138", None], column="zip", source="t.csv")


@pytest.mark.parametrize(
    "values",
    [["zz", "b", None, "02138"], [None, "zz", "b"], ("b", "zz"), {"zz", "b", None}],
)
def test_covers_reports_the_same_first_absent_value_in_any_order(
    values: list[str | None] | tuple[str, ...] | set[str | None],
) -> None:
    with pytest.raises(HierarchyError, match="value 'b' is not in"):
        ZIP.covers(values, column="zip", source="t.csv")


def test_messages_stay_on_one_line() -> None:
    with pytest.raises(HierarchyError) as caught:
        ZIP.covers(["line\nbreak"], column="zip", source="t.csv")
    assert "\n" not in str(caught.value)
    assert "'line\\nbreak'" in str(caught.value)


def test_hierarchy_error_is_an_input_error() -> None:
    with pytest.raises(InputError):
        Hierarchy(name="h", levels=(("a", "b"),))


def test_hierarchy_is_frozen_and_compares_by_value() -> None:
    copy = Hierarchy(name=ZIP.name, levels=ZIP.levels)
    assert copy == ZIP
    assert hash(copy) == hash(ZIP)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ZIP.name = "other"  # type: ignore[misc]


def test_to_arx_csv_writes_one_row_per_leaf() -> None:
    assert ZIP.to_arx_csv() == (
        "02138;0213*;021**;*\n02139;0213*;021**;*\n02141;0214*;021**;*\n02142;0214*;021**;*\n"
    )


def test_to_arx_csv_quotes_and_writes_missing_as_empty() -> None:
    h = Hierarchy(name="h", levels=(("a;b", 'say "hi"', "x,y", None), ("*", "*", "*", "*")))
    assert h.to_arx_csv() == '"a;b";*\n"say ""hi""";*\nx,y;*\n;*\n'
    assert h.to_arx_csv(delimiter=",") == 'a;b,*\n"say ""hi""",*\n"x,y",*\n,*\n'


def test_to_arx_csv_of_a_lone_missing_leaf_is_not_a_blank_line() -> None:
    assert Hierarchy(name="h", levels=((None,),)).to_arx_csv() == '""\n'


@pytest.mark.parametrize("delimiter", ["", ";;", '"', "\n"])
def test_to_arx_csv_rejects_unusable_delimiters(delimiter: str) -> None:
    with pytest.raises(InputError, match="delimiter"):
        ZIP.to_arx_csv(delimiter=delimiter)
