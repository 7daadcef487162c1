"""Parsing hierarchy specs and resolving them against a column."""

from __future__ import annotations

from pathlib import Path

import pytest

from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import (
    DateBuilder,
    Hierarchy,
    IntervalBuilder,
    MaskBuilder,
    SuppressBuilder,
    parse_hierarchy,
    resolve,
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("interval:5,10,20", IntervalBuilder(widths=(5, 10, 20))),
        ("interval: 5, 10", IntervalBuilder(widths=(5, 10))),
        ("interval:7", IntervalBuilder(widths=(7,))),
        ("mask", MaskBuilder()),
        ("date", DateBuilder()),
        ("date:%d/%m/%Y", DateBuilder(format="%d/%m/%Y")),
        ("date:%Y-%m-%d %H:%M", DateBuilder(format="%Y-%m-%d %H:%M")),
        ("suppress", SuppressBuilder()),
    ],
)
def test_builder_specs(spec: str, expected: object) -> None:
    assert parse_hierarchy(spec) == expected


@pytest.mark.parametrize("spec", ["interval:5,10,20", "mask", "date", "date:%d/%m/%Y", "suppress"])
def test_spec_round_trips_through_the_builder(spec: str) -> None:
    builder = parse_hierarchy(spec)
    assert not isinstance(builder, Hierarchy)
    assert builder.spec == spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("interval:", "expected widths"),
        ("interval", "expected widths"),
        ("interval:5,x", "width 'x' is not a positive integer"),
        ("interval:5,,10", "width '' is not a positive integer"),
        ("interval:-5", "width '-5' is not a positive integer"),
        ("interval:2.5", "width '2.5' is not a positive integer"),
        ("interval:10,5", "widths must increase, but 5 follows 10"),
        ("interval:5,7", "width 7 is not a multiple of 5"),
        ("interval:0", "width 0 is not a positive integer"),
        ("mask:3", "'mask' takes no argument"),
        ("suppress:", "'suppress' takes no argument"),
        ("date:", "the date format after ':' is empty"),
        ("date:%d/%m", "must give the year and the month"),
    ],
)
def test_malformed_specs_are_named(spec: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_hierarchy(spec)
    assert f"hierarchy spec '{spec}" in str(caught.value)
    assert message in str(caught.value)


def test_empty_spec() -> None:
    with pytest.raises(InputError, match="hierarchy spec is empty"):
        parse_hierarchy("")


def test_path_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "hierarchies").mkdir()
    (tmp_path / "hierarchies" / "sex.csv").write_bytes(b"Male;*\r\nFemale;*\r\n")
    h = parse_hierarchy("hierarchies/sex.csv", base_dir=tmp_path)
    assert isinstance(h, Hierarchy)
    assert h.leaves == ("Male", "Female")
    assert h.name == str(tmp_path / "hierarchies" / "sex.csv")


def test_absolute_path_ignores_base_dir(tmp_path: Path) -> None:
    path = tmp_path / "sex.csv"
    path.write_bytes(b"Male;*\nFemale;*\n")
    h = parse_hierarchy(str(path), base_dir=tmp_path / "elsewhere")
    assert isinstance(h, Hierarchy)
    assert h.height == 1


def test_a_file_named_like_a_builder_needs_a_path_prefix(tmp_path: Path) -> None:
    (tmp_path / "mask").write_bytes(b"a;*\n")
    assert parse_hierarchy("mask", base_dir=tmp_path) == MaskBuilder()
    assert isinstance(parse_hierarchy("./mask", base_dir=tmp_path), Hierarchy)


def test_missing_hierarchy_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=f"^{tmp_path / 'nope.csv'}: cannot read hierarchy file"):
        parse_hierarchy("nope.csv", base_dir=tmp_path)


def test_resolve_builds_a_builder() -> None:
    h = resolve(MaskBuilder(), ["02138", "02139", None], column="zip", source="t.csv")
    assert h.leaves == ("02138", "02139", None)
    assert h.height == 5


def test_resolve_returns_a_covering_hierarchy_unchanged() -> None:
    given = Hierarchy(name="sex.csv", levels=(("F", "M"), ("*", "*")))
    assert resolve(given, ["M", "M", "F"], column="sex", source="t.csv") is given


def test_resolve_rejects_a_hierarchy_that_lacks_a_value() -> None:
    given = Hierarchy(name="sex.csv", levels=(("F", "M"), ("*", "*")))
    with pytest.raises(HierarchyError) as caught:
        resolve(given, ["M", None, "X"], column="sex", source="t.csv")
    assert str(caught.value) == "t.csv: column 'sex': value 'X' is not in hierarchy sex.csv"


def test_resolve_passes_builder_errors_through() -> None:
    with pytest.raises(InputError, match=r"t\.csv: column 'age': value 'old' is not a number"):
        resolve(IntervalBuilder(widths=(5,)), ["34", "old"], column="age", source="t.csv")
