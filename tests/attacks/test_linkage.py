"""The linking attack (kanonym.link): seed 003's Sue J. Doe, rules, invariants."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import race_hierarchy, zip_hierarchy
from tests.strategies import hierarchies, problems

import kanonym
from kanonym.attacks.linkage import link_frames
from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import Hierarchy

# Samarati's medical table (seed 003, "The anonymity problem: Example"); the
# slides' two "M" are Cyrillic, read as the Latin letter.
MEDICAL = pl.DataFrame(
    {
        "race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
        "dob": [
            "64/04/12",
            "64/09/13",
            "64/04/15",
            "63/03/13",
            "63/03/18",
            "64/09/27",
            "64/09/27",
            "64/09/27",
            "64/09/27",
        ],
        "sex": ["F", "F", "F", "M", "M", "F", "F", "F", "F"],
        "zip": ["94142", "94141", "94139", "94139", "94139", "94138", "94139", "94139", "94141"],
        "marital": [
            "divorced",
            "divorced",
            "married",
            "married",
            "married",
            "single",
            "single",
            "single",
            "widow",
        ],
        "disease": [
            "hypertension",
            "obesity",
            "chest pain",
            "obesity",
            "short breath",
            "short breath",
            "obesity",
            "chest pain",
            "short breath",
        ],
    }
)
VOTERS = pl.DataFrame(
    {
        "name": ["Sue J. Doe"],
        "address": ["900 Market St."],
        "city": ["San Francisco"],
        "zip": ["94142"],
        "dob": ["64/04/12"],
        "sex": ["F"],
        "status": ["divorced"],
    }
)
ON = ["zip", "dob", "sex", ("status", "marital")]


def _dob_hierarchy() -> Hierarchy:
    """Birth date -> year of birth (as in the slides' 2-anonymous table) -> *."""
    days = ("64/04/12", "64/09/13", "64/04/15", "63/03/13", "63/03/18", "64/09/27")
    return Hierarchy("dob", (days, tuple(d[:2] for d in days), ("*",) * len(days)))


def _hierarchies() -> dict[str, Hierarchy | str]:
    return {
        "race": race_hierarchy(),
        "dob": _dob_hierarchy(),
        "sex": "suppress",
        "zip": zip_hierarchy(),
        "marital": "suppress",
    }


def test_sue_is_reidentified_in_the_raw_table() -> None:
    s = kanonym.link(MEDICAL, VOTERS, ON)
    assert (s.identities, s.unique_matches, s.below_k, dict(s.distribution)) == (1, 1, 1, {1: 1})


def test_sue_hides_among_two_after_2_anonymization() -> None:
    result = kanonym.anonymize(
        MEDICAL, quasi_identifiers=_hierarchies(), sensitive=["disease"], k=2, seed=3
    )
    linked = {k: v for k, v in _hierarchies().items() if k != "race"}
    s = kanonym.link(result.table, VOTERS, ON, quasi_identifiers=linked)
    (matches,) = s.distribution
    assert matches >= 2 and s.unique_matches == 0 and s.below_k == 0


def test_sue_in_the_slides_2_anonymous_table() -> None:
    # Seed 003, "Attribute Disclosure": Race, DOB (year), Sex, ZIP (941**).
    released = MEDICAL.select(
        "race",
        pl.col("dob").str.slice(0, 2),
        "sex",
        pl.lit("941**").alias("zip"),
        "disease",
    )
    s = kanonym.link(
        released,
        VOTERS,
        ["zip", "dob", "sex"],
        quasi_identifiers={"zip": zip_hierarchy(), "dob": _dob_hierarchy(), "sex": "suppress"},
    )
    # The voter list has no race: all seven women born in 1964 match.
    assert dict(s.distribution) == {7: 1} and s.below_k == 0


def test_suppressed_cells_match_anything_and_missing_matches_itself() -> None:
    release = pl.DataFrame({"zip": ["*", "02138", None, "0213*"], "sex": ["F", "*", "F", "*"]})
    external = pl.DataFrame({"zip": ["02138", None, "02139"], "sex": ["F", "F", "M"]})
    zips = Hierarchy("zip", (("02138", "02139", None), ("0213*", "0213*", None), ("*",) * 3))
    s = link_frames(release, external, [("zip", "zip"), ("sex", "sex")], {"zip": zips}, k=3)
    # 02138/F: rows 0, 1, 3; missing/F: rows 0, 2; 02139/M: row 3 only.
    assert dict(s.distribution) == {1: 1, 2: 1, 3: 1}
    assert (s.unique_matches, s.below_k, s.zero_matches) == (1, 2, 0)


def test_value_absent_from_the_hierarchy_is_an_error() -> None:
    voters = VOTERS.with_columns(pl.lit("94199").alias("zip"))
    with pytest.raises(HierarchyError, match=r"column 'zip': value '94199' is not in hierarchy"):
        kanonym.link(MEDICAL, voters, ON, quasi_identifiers={"zip": zip_hierarchy()})


@pytest.mark.parametrize(
    ("on", "hierarchies", "k", "needle"),
    [
        ([], {}, 2, "at least one pair"),
        (["name"], {}, 2, "column 'name' not found"),
        (["zip", ("zip", "dob")], {}, 2, "external column is compared twice"),
        (["zip"], {"dob": "suppress"}, 2, "not a compared release column"),
        (["zip"], {}, 0, "`k` must be"),
        ("zip", {}, 2, "got the string"),
        ([("zip",)], {}, 2, "neither a column nor"),
    ],
)
def test_bad_requests(on, hierarchies, k: int, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        kanonym.link(MEDICAL, VOTERS, on, quasi_identifiers=hierarchies, k=k)


def _matches(value: str | None, cell: str | None, hierarchy: Hierarchy | None) -> bool:
    """The matching rule, one pair of cells at a time."""
    if cell == "*":
        return True
    if hierarchy is None:
        return value == cell
    leaf = hierarchy.leaves.index(value)
    return any(level[leaf] == cell for level in hierarchy.levels)


@st.composite
def attacks(draw: st.DrawFn):
    """A release of randomly generalized (or suppressed) cells and an external table."""
    names = ["a", "b"]
    hs = {name: draw(hierarchies(name)) for name in names}
    with_hierarchy = {n: h for n, h in hs.items() if draw(st.booleans())}

    def cell(h: Hierarchy) -> str | None:
        leaf = draw(st.integers(0, len(h.leaves) - 1))
        level = draw(st.integers(-1, h.height))  # -1: a suppressed cell
        return "*" if level < 0 else h.levels[level][leaf]

    released = draw(st.integers(0, 12))
    release = pl.DataFrame(
        {n: [cell(h) for _ in range(released)] for n, h in hs.items()},
        schema=dict.fromkeys(names, pl.String),
    )
    identities = draw(st.integers(1, 12))
    external = pl.DataFrame(
        {
            n: draw(st.lists(st.sampled_from(h.leaves), min_size=identities, max_size=identities))
            for n, h in hs.items()
        },
        schema=dict.fromkeys(names, pl.String),
    )
    return release, external, hs, with_hierarchy


@settings(max_examples=80, deadline=None)
@given(attacks(), st.integers(1, 4))
def test_counts_equal_a_pairwise_comparison(attack, k: int) -> None:
    release, external, hs, with_hierarchy = attack
    pairs = [(n, n) for n in hs]
    # Columns left without their hierarchy are compared as text on purpose here.
    s = link_frames(release, external, pairs, with_hierarchy, k=k, check_generalized=False)
    expected: dict[int, int] = {}
    for identity in external.iter_rows(named=True):
        matches = sum(
            all(_matches(identity[n], row[n], with_hierarchy.get(n)) for n in hs)
            for row in release.iter_rows(named=True)
        )
        expected[matches] = expected.get(matches, 0) + 1
    assert dict(s.distribution) == dict(sorted(expected.items()))


@settings(max_examples=40, deadline=None)
@given(problems(), st.data())
def test_k_anonymous_release_leaves_no_identity_below_k(problem, data: st.DataObject) -> None:
    table, hs = problem
    k = data.draw(st.integers(1, table.height))
    max_sup = data.draw(st.integers(0, table.height))
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=k, max_suppressed_rows=max_sup, seed=0
    )
    s = kanonym.link(result.table, table, list(hs), quasi_identifiers=hs, k=k)
    assert s.below_k == 0
    # Only suppressed people can go unmatched: their own row is gone.
    assert s.zero_matches <= result.suppressed_rows
