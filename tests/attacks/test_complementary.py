"""Linking releases as seed 000 does (kanonym.attacks.complementary): answers and invariants."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import sweeney2002 as seed
from tests.strategies import problems

from kanonym.attacks.complementary import AuditResult, ancestor_pairs, audit, link, nested_pairs
from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import Hierarchy


@pytest.fixture
def hierarchies(tmp_path: Path) -> dict[str, str]:
    return seed.write_hierarchies(tmp_path)


def _classes(result: AuditResult) -> dict[tuple[object, ...], int]:
    return {row[:-1]: row[-1] for row in result.classes.rows()}


def test_gt1_and_gt3_linked_on_problem_reveal_lt(hierarchies: dict[str, str]) -> None:
    """Seed 000, Example 6: GT1 and GT3 (Figure 5) joined on Problem give LT (Figure 4),
    where [white, 1964, male, 02138] and [white, 1965, female, 02139] are unique."""
    result = audit([seed.frame(seed.GT1), seed.frame(seed.GT3)], hierarchies, k=2)
    assert result.join_columns == ("Problem",)
    assert result.linked_rows == 12
    assert _classes(result) == seed.LT
    unique = {tuple(row[:4]) for row in result.classes.filter(pl.col("records") < 2).rows()}
    assert unique == {("white", "1964", "male", "02138"), ("white", "1965", "female", "02139")}
    assert not result.k_anonymous
    assert (result.classes_below_k, result.records_below_k, result.smallest_class) == (2, 2, 1)


def test_offending_classes_are_shown_only_generalized(hierarchies: dict[str, str]) -> None:
    result = audit([seed.frame(seed.GT1), seed.frame(seed.GT3)], hierarchies, k=2)
    document = result.as_dict()
    # Per quasi-identifier the most general value the two releases published for the row.
    assert document["below_k"] == [
        {
            "class": {"Race": "person", "BirthDate": "1960-69", "Gender": "human", "ZIP": "0213*"},
            "classes": 1,
        },
        {
            "class": {"Race": "white", "BirthDate": "1960-69", "Gender": "male", "ZIP": "0213*"},
            "classes": 1,
        },
    ]
    text = json.dumps(document)
    # The refined values that single out the two people appear nowhere.
    for raw in ('"02138"', '"02139"', '"1964"', '"1965"', '"female"'):
        assert raw not in text


def test_release_based_on_gt1_plus_t1_rows_is_not_flagged(hierarchies: dict[str, str]) -> None:
    """Seed 000, Example 7: GT1 and GT1 ∪ {the t1 rows, generalized like GT1} link safely."""
    result = audit([seed.frame(seed.GT1), seed.frame(seed.GT1_T1_BASED)], hierarchies, k=2)
    assert result.k_anonymous and result.below_k.height == 0
    assert result.linked_rows == 12  # the t1 rows' problems appear only once


def test_temporal_release_from_gt3_is_flagged(hierarchies: dict[str, str]) -> None:
    """Seed 000, Example 7: GT1 and GT_t1 = GT3 ∪ {t1 rows} reveal the same unique tuples."""
    result = audit([seed.frame(seed.GT1), seed.frame(seed.GT_T1)], hierarchies, k=2)
    assert _classes(result) == seed.LT


def test_files_and_order_of_releases(tmp_path: Path, hierarchies: dict[str, str]) -> None:
    gt1 = seed.write_table(tmp_path, "gt1.csv", seed.frame(seed.GT1))
    gt3 = tmp_path / "gt3.parquet"
    seed.frame(seed.GT3).write_parquet(gt3)
    forward = audit([gt1, gt3], hierarchies, k=2)
    backward = audit([gt3, gt1], hierarchies, k=2)
    assert forward.releases == (str(gt1), str(gt3))
    assert forward.classes.equals(backward.classes)
    assert forward.below_k.equals(backward.below_k)


def test_three_releases_refine_step_by_step(hierarchies: dict[str, str]) -> None:
    # Linking GT1 with itself changes nothing; adding GT3 refines as before.
    result = audit(
        [seed.frame(seed.GT1), seed.frame(seed.GT1), seed.frame(seed.GT3)], hierarchies, k=2
    )
    assert _classes(result) == seed.LT


def test_records_count_distinct_rows_not_pairs() -> None:
    """Two identical rows in each release make four pairs but only two records."""
    race = Hierarchy("race", (("black", "white"), ("person", "person")))
    a = pl.DataFrame({"race": ["person", "person", "white"], "job": ["x", "x", "y"]})
    b = pl.DataFrame({"race": ["black", "black", "white"], "job": ["x", "x", "y"]})
    result = audit([a, b], {"race": race}, k=2)
    assert result.linked_rows == 5
    assert _classes(result) == {("black",): 2, ("white",): 1}


def test_missing_values_are_values_of_their_own() -> None:
    zip_h = Hierarchy("zip", (("02138", None), ("0213*", None), ("*", "*")))
    a = pl.DataFrame({"zip": ["0213*", None, "*"], "job": ["x", None, None]})
    b = pl.DataFrame({"zip": ["02138", "*", None], "job": ["x", None, None]})
    result = audit([a, b], {"zip": zip_h}, k=1)
    # Missing job matches missing job; a missing ZIP is compatible with itself and '*'.
    assert _classes(result) == {("02138",): 1, (None,): 2, ("*",): 1}


def test_quasi_identifier_absent_from_a_release_is_unknown_there() -> None:
    race = Hierarchy("race", (("black", "white"), ("person", "person")))
    a = pl.DataFrame({"race": ["black", "white"], "job": ["x", "y"]})
    b = pl.DataFrame({"job": ["x", "y"]})
    assert _classes(audit([a, b], {"race": race}, k=1)) == {("black",): 1, ("white",): 1}


def test_mask_and_suppress_are_rebuilt_from_released_values() -> None:
    a = pl.DataFrame(
        {"zip": ["0213*", "0213*", "0214*"], "sex": ["*", "*", "*"], "p": ["a", "b", "c"]}
    )
    b = pl.DataFrame(
        {"zip": ["02138", "02139", "02141"], "sex": ["F", "M", "M"], "p": ["a", "b", "c"]}
    )
    result = audit([a, b], {"zip": "mask", "sex": "suppress"}, k=2)
    assert _classes(result) == {("02138", "F"): 1, ("02139", "M"): 1, ("02141", "M"): 1}


def test_issue10_p4_an_audit_that_links_nothing_is_an_error() -> None:
    """Issue 10, point 4: "0 linked rows ... is k-anonymous" was a pass that proved nothing."""
    a = pl.DataFrame({"zip": ["0213*"], "p": ["a"]})
    b = pl.DataFrame({"zip": ["02138"], "p": ["b"]})
    with pytest.raises(InputError, match=r"nothing linked: .* on p; .* name it with its hierarchy"):
        audit([a, b], {"zip": "mask"}, k=2)
    # The linking core itself reports what it found, for callers that know the
    # quasi-identifiers are complete (the ledger).
    zip_hierarchy = Hierarchy("mask", (("02138",), ("0213*",), ("*",)))
    result = link([a, b], ["a", "b"], {"zip": [zip_hierarchy]}, 2, join=["p"])
    assert result.linked_rows == 0 and result.k_anonymous and result.smallest_class is None


def test_ancestor_pairs_of_an_arx_style_self_mapping() -> None:
    h = Hierarchy("y", (("1964", "1965"), ("1964", "1965"), ("*", "*")))
    assert sorted(ancestor_pairs(h).rows()) == [
        ("*", "*"),
        ("1964", "*"),
        ("1964", "1964"),
        ("1965", "*"),
        ("1965", "1965"),
    ]


@pytest.mark.parametrize(
    ("releases", "qi", "k", "needle"),
    [
        ([seed.GT1], None, 2, "at least two releases"),
        ([seed.GT1, seed.GT3], None, 0, "`k` must be"),
        ([seed.GT1, seed.GT3], {"Age": "suppress"}, 2, "'Age' is in none of the releases"),
    ],
)
def test_bad_input(hierarchies, releases, qi, k, needle) -> None:
    with pytest.raises(InputError, match=needle):
        audit([seed.frame(r) for r in releases], qi or hierarchies, k=k)


def test_no_shared_column_to_join_on(hierarchies: dict[str, str]) -> None:
    gt1 = seed.frame(seed.GT1)
    with pytest.raises(InputError, match="share no column outside the quasi-identifier"):
        audit([gt1.drop("Problem"), gt1], hierarchies, k=2)


def test_value_in_no_level_of_the_hierarchy(hierarchies: dict[str, str]) -> None:
    gt3 = seed.frame(seed.GT3).with_columns(pl.col("ZIP").replace("02141", "99999"))
    with pytest.raises(HierarchyError, match="column 'ZIP': value '99999' is not in hierarchy"):
        audit([seed.frame(seed.GT1), gt3], hierarchies, k=2)


def test_interval_hierarchy_cannot_be_rebuilt_from_labels() -> None:
    a = pl.DataFrame({"age": ["30-34"], "p": ["a"]})
    with pytest.raises(InputError, match="cannot be rebuilt from released values"):
        audit([a, a], {"age": "interval:5"}, k=1)


def test_columns_that_are_not_text() -> None:
    a = pl.DataFrame({"zip": ["x"], "p": [["a", "b"]]})
    with pytest.raises(InputError, match="a column cannot be read as text"):
        audit([a, a], {"zip": "suppress"}, k=1)


def test_reserved_names() -> None:
    a = pl.DataFrame({"records": ["x"], "p": ["a"]})
    with pytest.raises(InputError, match="clashes"):
        audit([a, a], {"records": "suppress"}, k=1)
    b = pl.DataFrame({"zip": ["x"], "__kanonym_t": ["a"]})
    with pytest.raises(InputError, match="reserved prefix"):
        audit([b, b], {"zip": "suppress"}, k=1)


def _generalize(table: pl.DataFrame, hs: dict[str, Hierarchy], node: list[int]) -> pl.DataFrame:
    return table.with_columns(
        pl.col(name).replace_strict(
            dict(zip(h.leaves, h.levels[level], strict=True)), return_dtype=pl.String
        )
        for (name, h), level in zip(hs.items(), node, strict=True)
    )


@settings(max_examples=40, deadline=None)
@given(problem=problems(), data=st.data())
def test_linking_two_full_domain_releases_refines_to_their_meet(problem, data) -> None:
    """Two generalizations of one table linked on a row id refine, per attribute, to the
    lower of the two levels; the classes are those of the table at that meet."""
    table, hs = problem
    table = table.with_columns(pl.Series("rid", [str(i) for i in range(table.height)]))
    nodes = [[data.draw(st.integers(0, h.height)) for h in hs.values()] for _ in range(2)]
    k = data.draw(st.integers(1, 4))
    meet = [min(a, b) for a, b in zip(*nodes, strict=True)]
    expected = Counter(_generalize(table, hs, meet).select(list(hs)).rows())
    result = audit([_generalize(table, hs, node) for node in nodes], hs, k=k)
    assert _classes(result) == dict(expected)
    assert result.linked_rows == table.height
    assert result.k_anonymous == all(size >= k for size in expected.values())


def test_issue10_p4_hierarchies_of_a_growing_table_nest() -> None:
    old = Hierarchy("date", (("1961-03-25",), ("1961-03",), ("1961",), ("*",)))
    # The new table has a second 1961 date, so '1961' covers more than '1961-03'.
    new = Hierarchy(
        "date",
        (("1961-03-25", "1961-07-01", "1962-01-02"), ("1961", "1961", "1962"), ("*",) * 3),
    )
    pairs = nested_pairs([old, new], column="birth")
    assert ("1961-03", "1961") in pairs.rows() and ("1962-01-02", "*") in pairs.rows()
    assert ("1961", "1961-03") not in pairs.rows()


def test_issue10_p4_crossing_hierarchies_are_refused() -> None:
    low = Hierarchy("interval:10", (("3", "7", "12"), ("0-9", "0-9", "10-19"), ("*",) * 3))
    shifted = Hierarchy("interval", (("3", "7", "12"), ("0-4", "5-14", "5-14"), ("*",) * 3))
    with pytest.raises(InputError, match=r"column 'age': .* overlap without nesting"):
        nested_pairs([low, shifted], column="age")


def test_issue10_p4_an_exact_shared_quasi_identifier_joins_and_splits_classes() -> None:
    """A column both releases publish exactly is matched by equality and still splits classes."""
    sex = Hierarchy("suppress", (("F", "M"), ("*", "*")))
    zip_h = Hierarchy("mask", (("02138", "02139"), ("0213*", "0213*"), ("*", "*")))
    a = pl.DataFrame({"sex": ["F", "F", "M", "M"], "zip": ["0213*"] * 4, "p": ["x"] * 4})
    b = pl.DataFrame(
        {"sex": ["F", "F", "M", "M"], "zip": ["02138"] * 2 + ["02139"] * 2, "p": ["x"] * 4}
    )
    result = link([a, b], ["a", "b"], {"sex": [sex], "zip": [zip_h]}, 2, join=["sex", "p"])
    assert sorted(result.classes.rows()) == [("F", "02138", 2), ("M", "02139", 2)]
    assert result.k_anonymous
