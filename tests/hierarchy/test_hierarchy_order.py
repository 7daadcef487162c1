"""The order-based builder (ARX's HierarchyBuilderOrderBased; Prasser and Kohlmayer 2015)."""

from __future__ import annotations

import re
from pathlib import Path
from tempfile import TemporaryDirectory

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.cli import main
from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy, OrderBuilder, load_arx, parse_hierarchy

FAST = settings(max_examples=80, deadline=None)


def rows(h: Hierarchy) -> dict[str | None, tuple[str | None, ...]]:
    """Each leaf's generalizations, level 0 to the root."""
    return {row[0]: row for row in zip(*h.levels, strict=True)}


# Known answers


def test_numbers_sort_by_value_and_pairs_merge_until_one_group_remains() -> None:
    # ARX's order-based example: ages sorted, groups of 2, then groups of 2 groups.
    ages = [str(age) for age in (10, 1, 9, 2, 8, 3, 7, 4, 6, 5)]
    h = OrderBuilder(fanouts=2).build(ages, column="age", source="t.csv")
    assert h.name == "order:2"
    assert h.leaves == tuple(str(age) for age in range(1, 11))
    # 10 values, then 5 pairs, 3 groups of pairs, 2 groups of those, one: the root.
    assert h.height == 4
    assert rows(h)["1"] == ("1", "[1, 2]", "[1, 4]", "[1, 8]", "*")
    assert rows(h)["5"] == ("5", "[5, 6]", "[5, 8]", "[1, 8]", "*")
    assert rows(h)["9"] == ("9", "[9, 10]", "[9, 10]", "[9, 10]", "*")


def test_a_tuple_of_fanouts_stops_and_adds_the_root() -> None:
    h = OrderBuilder(fanouts=(3, 2)).build(list("gfedcbajih"), column="c", source="s")
    assert h.levels[1] == ("[a, c]",) * 3 + ("[d, f]",) * 3 + ("[g, i]",) * 3 + ("[j, j]",)
    assert h.levels[2] == ("[a, f]",) * 6 + ("[g, j]",) * 4
    assert h.levels[3] == ("*",) * 10
    assert h.height == 3


def test_a_level_holding_one_group_is_the_root() -> None:
    h = OrderBuilder(fanouts=(4, 4, 4)).build(list("abcdef"), column="c", source="s")
    assert [len(set(level)) for level in h.levels] == [6, 2, 1]
    assert set(h.levels[-1]) == {"*"}
    assert OrderBuilder(fanouts=2).build(["only"], column="c", source="s").levels == (
        ("only",),
        ("*",),
    )


def test_an_explicit_order_makes_every_value_of_it_a_leaf() -> None:
    builder = OrderBuilder(fanouts=(2,), order=("low", "mid", "high", "top"))
    h = builder.build(["top", None, "low"], column="grade", source="t.csv")
    assert h.leaves == ("low", "mid", "high", "top", None)
    assert rows(h)["high"] == ("high", "[high, top]", "*")
    assert rows(h)[None] == (None, None, "*")


def test_auto_order_is_numeric_then_date_then_text() -> None:
    numbers = OrderBuilder(fanouts=2).build(["10", "9", "-1.5"], column="c", source="s")
    assert numbers.leaves == ("-1.5", "9", "10")
    dates = OrderBuilder(fanouts=2).build(
        ["2000-01-31 10:00", "2000-01-31T09:00", "1999-12-31"], column="c", source="s"
    )
    assert dates.leaves == ("1999-12-31", "2000-01-31T09:00", "2000-01-31 10:00")
    text = OrderBuilder(fanouts=2).build(["10", "9", "x"], column="c", source="s")
    assert text.leaves == ("10", "9", "x")
    forced = OrderBuilder(fanouts=2, order="text").build(["10", "9"], column="c", source="s")
    assert forced.leaves == ("10", "9")


def test_dates_in_a_format() -> None:
    builder = OrderBuilder(fanouts=2, order="date", format="%d/%m/%Y")
    h = builder.build(["01/02/2000", "31/01/2000", "01/01/1999"], column="dob", source="s")
    assert h.leaves == ("01/01/1999", "31/01/2000", "01/02/2000")
    assert builder.spec == "order:2:date:%d/%m/%Y"


@pytest.mark.parametrize(
    ("spec", "builder"),
    [
        ("order:2", OrderBuilder(fanouts=2)),
        ("order:3,2", OrderBuilder(fanouts=(3, 2))),
        ("order:3,2,*", OrderBuilder(fanouts=(3, 2))),
        ("order:4,*", OrderBuilder(fanouts=(4,))),
        ("order:2:numeric", OrderBuilder(fanouts=2, order="numeric")),
        ("order:2:text", OrderBuilder(fanouts=2, order="text")),
        ("order:2:date:%d/%m/%Y", OrderBuilder(fanouts=2, order="date", format="%d/%m/%Y")),
        ("order:2,*:low,mid,high", OrderBuilder(fanouts=(2,), order=("low", "mid", "high"))),
    ],
)
def test_specs_parse_and_print_back(spec: str, builder: OrderBuilder) -> None:
    assert parse_hierarchy(spec) == builder
    assert parse_hierarchy(builder.spec) == builder


# Bad input names the Python parameter (and the spec when there is one)


@pytest.mark.parametrize("fanouts", [1, 0, -2, (2, 1), (), True, (2, "3")])
def test_a_fanout_below_two_is_refused(fanouts: object) -> None:
    with pytest.raises(InputError, match="`fanouts`"):
        OrderBuilder(fanouts=fanouts)  # type: ignore[arg-type]


def test_a_value_not_in_the_explicit_order_is_refused() -> None:
    builder = OrderBuilder(fanouts=2, order=("low", "high"))
    with pytest.raises(InputError, match=r"t.csv: column 'grade': value 'mid' is not in `order`"):
        builder.build(["low", "mid"], column="grade", source="t.csv")


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"order": ()}, "`order` is empty"),
        ({"order": ("a", "a")}, "listed twice"),
        ({"order": ("a", "")}, "`order`: value ''"),
        ({"order": "alphabetical"}, "`order` must be one of"),
        ({"format": "%d/%m/%Y"}, "`format`"),
        ({"order": "date", "format": "%H"}, "`format`"),
    ],
)
def test_bad_orders_are_refused(options: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        OrderBuilder(fanouts=2, **options)  # type: ignore[arg-type]


def test_values_the_order_cannot_place_are_refused() -> None:
    with pytest.raises(InputError, match="value 'x' is not a number"):
        OrderBuilder(fanouts=2, order="numeric").build(["1", "x"], column="c", source="s")
    with pytest.raises(InputError, match="value '1' is not a date"):
        OrderBuilder(fanouts=2, order="date").build(["1"], column="c", source="s")


def test_ambiguous_labels_are_refused() -> None:
    # [a, b, c] is both the group {"a", "b, c"} and the group {"a, b", "c"}.
    builder = OrderBuilder(fanouts=(2,), order=("a", "b, c", "a, b", "c"))
    with pytest.raises(InputError, match="would both be labelled"):
        builder.build(["a"], column="c", source="s")


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("order:1", "`fanouts`"),
        ("order:", "expected fan-outs"),
        ("order:*", "expected fan-outs before '*'"),
        ("order:2,x", "fan-out 'x'"),
        ("order:2:", "order after ':' is empty"),
        ("order:2:date:", "date format after ':' is empty"),
        ("order:2:a,a", "listed twice"),
    ],
)
def test_bad_specs_name_the_spec(spec: str, needle: str) -> None:
    with pytest.raises(InputError, match=re.escape(f"hierarchy spec '{spec}'")) as caught:
        parse_hierarchy(spec)
    assert needle in str(caught.value)


# Every place a builder is accepted

GRADES = pl.DataFrame({"grade": ["a", "b", "c", "d", "e", "f"] * 2, "visits": ["1"] * 12})


def test_the_api_takes_the_builder_and_the_spec() -> None:
    for given_as in (OrderBuilder(fanouts=2), "order:2"):
        result = kanonym.anonymize(
            GRADES.head(6),
            quasi_identifiers={"grade": given_as},
            k=2,
            seed=1,
            insensitive=["visits"],
        )
        assert result.transformation == {"grade": 1}
        assert sorted(result.table.get_column("grade").unique()) == ["[a, b]", "[c, d]", "[e, f]"]
        assert result.report()["quasi_identifiers"] == {"grade": {"source": "order:2", "height": 3}}


def test_the_command_line_and_a_job_file_take_the_spec(tmp_path: Path) -> None:
    GRADES.head(6).write_csv(tmp_path / "t.csv")
    argv = ["anonymize", str(tmp_path / "t.csv"), "--qi", "grade=order:2:a,b,c,d,e,f"]
    argv += ["--insensitive", "visits", "--k", "2", "--seed", "1", "--quiet"]
    assert main([*argv, "--output", str(tmp_path / "cli.csv")]) == 0
    assert pl.read_csv(tmp_path / "cli.csv").get_column("grade").n_unique() == 3
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.csv"\noutput = "job.csv"\nk = 3\nseed = 1\ninsensitive = ["visits"]\n'
        '[qi]\ngrade = "order:3,*"\n',
        encoding="utf-8",
    )
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 0
    released = pl.read_csv(tmp_path / "job.csv").get_column("grade")
    assert sorted(released.unique()) == ["[a, c]", "[d, f]"]


# Properties


def values_with_missing() -> st.SearchStrategy[list[str | None]]:
    # No surrogates (not encodable), no byte order mark (a reader strips it from the
    # start of a file), no comma (labels of values holding ", " can be ambiguous).
    characters = st.characters(blacklist_categories=["Cs"], blacklist_characters="\ufeff,")
    text = st.text(characters, min_size=1, max_size=4)
    return st.lists(st.one_of(st.none(), text), min_size=1, max_size=40)


def fanouts() -> st.SearchStrategy[int | tuple[int, ...]]:
    return st.one_of(
        st.integers(2, 5), st.lists(st.integers(2, 4), min_size=1, max_size=4).map(tuple)
    )


@FAST
@given(values_with_missing(), fanouts())
def test_order_builder_properties(values: list[str | None], spread: int | tuple[int, ...]) -> None:
    h = OrderBuilder(fanouts=spread, order="text").build(values, column="c", source="s")
    present = sorted({v for v in values if v is not None})
    # Leaves: the values in order, missing last.
    assert h.leaves == (*present, *([None] if None in values else []))
    assert set(h.levels[-1]) == {"*"}
    per_level = [spread] * h.height if isinstance(spread, int) else list(spread)
    for j in range(1, h.height + 1):
        lower, upper = h.levels[j - 1], h.levels[j]
        # Every level is a function of the level below.
        parent: dict[str | None, str | None] = {}
        for child, value in zip(lower, upper, strict=True):
            assert parent.setdefault(child, value) == value
        if j == h.height:
            continue
        # Groups are contiguous in the order, labelled by their first and last value.
        labels = [label for label, leaf in zip(upper, h.leaves, strict=True) if leaf is not None]
        runs = list(dict.fromkeys(labels))
        assert labels == sorted(labels, key=runs.index)
        for label in runs:
            members = [leaf for leaf, lab in zip(h.leaves, upper, strict=True) if lab == label]
            assert label == f"[{members[0]}, {members[-1]}]"
        # Each group merges fan-out groups of the level below, except the last.
        children = [len({c for c, p in parent.items() if p == label}) for label in runs]
        assert all(size == per_level[j - 1] for size in children[:-1])
        assert 1 <= children[-1] <= per_level[j - 1]
    for row in zip(*h.levels, strict=True):
        if row[0] is None:
            assert row[:-1] == (None,) * h.height


@FAST
@given(st.lists(st.integers(-1000, 1000), min_size=2, max_size=30, unique=True), st.integers(2, 4))
def test_numeric_groups_are_intervals_of_the_sorted_values(numbers: list[int], fanout: int) -> None:
    h = OrderBuilder(fanouts=fanout).build([str(n) for n in numbers], column="c", source="s")
    assert [int(leaf) for leaf in h.leaves if leaf is not None] == sorted(numbers)
    assume(h.height > 1)
    for leaf, label in zip(h.leaves, h.levels[1], strict=True):
        assert label is not None and leaf is not None
        low, high = (int(end) for end in label[1:-1].split(", "))
        assert low <= int(leaf) <= high


@FAST
@given(values_with_missing(), st.sampled_from([";", ",", "\t"]))
def test_write_arx_round_trips_through_load_arx(values: list[str | None], delimiter: str) -> None:
    h = OrderBuilder(fanouts=2, order="text").build(values, column="c", source="s")
    # A folder per example: pytest's tmp_path is one per test.
    with TemporaryDirectory() as folder:
        path = Path(folder) / "h.csv"
        h.write_arx(path, delimiter=delimiter)
        assert load_arx(path, delimiter=delimiter).levels == h.levels


def test_write_arx_refuses_an_unwritable_path(tmp_path: Path) -> None:
    h = OrderBuilder(fanouts=2).build(["a", "b"], column="c", source="s")
    with pytest.raises(InputError, match="cannot write hierarchy file"):
        h.write_arx(tmp_path / "no such folder" / "h.csv")
