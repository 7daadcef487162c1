"""Attribute disclosure (kanonym.disclosure) on seed 003's 2-anonymous table."""

from __future__ import annotations

from collections import Counter, defaultdict

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.attacks.attribute import measure_disclosure
from kanonym.errors import InputError

# Seed 003, "Attribute Disclosure": the 2-anonymous table (the slides' Cyrillic
# "M" read as the Latin letter).
RELEASED = pl.DataFrame(
    {
        "race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
        "dob": ["64", "64", "64", "63", "63", "64", "64", "64", "64"],
        "sex": ["F", "F", "F", "M", "M", "F", "F", "F", "F"],
        "zip": ["941**"] * 9,
        "disease": [
            "hypertension",
            "obesity",
            "chest pain",
            "obesity",
            "obesity",
            "short breath",
            "short breath",
            "chest pain",
            "short breath",
        ],
    }
)
QI = ["race", "dob", "sex", "zip"]


def test_homogeneity_attack_on_carol() -> None:
    summary = kanonym.disclosure(RELEASED, QI, ["disease"])
    d = summary.attributes["disease"]
    assert (d.classes, d.homogeneous_classes, d.homogeneous_records) == (4, 2, 4)
    # Hellen's class (white, female) is split 50/50: not dominated at 0.5.
    assert (d.dominated_classes, d.dominated_records) == (2, 4)
    assert dict(d.diversity) == {1: 2, 2: 1, 3: 1}
    carol = d.flagged[1]
    assert carol.values == {"race": "black", "dob": "64", "sex": "F", "zip": "941**"}
    assert (carol.top_value, carol.top_share, carol.homogeneous) == ("short breath", 1.0, True)
    assert [c.values["race"] for c in d.flagged] == ["asian", "black"]
    assert summary.as_dict()["sensitive"]["disease"]["homogeneous_records"] == 4  # type: ignore[index]


def test_lower_dominance_flags_the_background_knowledge_classes() -> None:
    d = kanonym.disclosure(RELEASED, QI, ["disease"], dominance=0.3).attributes["disease"]
    assert d.dominated_classes == 4 and d.dominated_records == 9
    # Largest first, then by top share, then by values; ties in a class go to text order.
    assert [(c.values["race"], c.size, c.top_value) for c in d.flagged] == [
        ("asian", 3, "chest pain"),
        ("asian", 2, "obesity"),
        ("black", 2, "short breath"),
        ("white", 2, "chest pain"),
    ]


def test_limit_bounds_the_list_not_the_counts() -> None:
    d = kanonym.disclosure(RELEASED, QI, ["disease"], limit=1).attributes["disease"]
    assert len(d.flagged) == 1 and d.dominated_classes == 2


def test_missing_sensitive_value_is_a_value() -> None:
    t = pl.DataFrame({"q": ["a"] * 3, "s": [None, None, "x"], "u": ["y"] * 3})
    summary = kanonym.disclosure(t, ["q"], ["s", "u"])
    (c,) = summary.attributes["s"].flagged
    assert (c.top_value, c.top_share, c.distinct) == (None, 2 / 3, 2)
    assert summary.attributes["u"].homogeneous_classes == 1
    assert list(summary.attributes) == ["s", "u"]


@pytest.mark.parametrize(
    ("sensitive", "kwargs", "needle"),
    [
        (["race"], {}, "both quasi-identifier and sensitive"),
        ([], {}, "at least one column"),
        (["disease"], {"dominance": 1.0}, "dominance"),
        (["disease"], {"limit": -1}, "limit"),
        (["illness"], {}, "column 'illness' not found"),
    ],
)
def test_bad_requests(sensitive: list[str], kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        kanonym.disclosure(RELEASED, QI, sensitive, **kwargs)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from(["x", "y", "z", None])),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([0.0, 0.25, 0.5, 0.75]),
)
def test_counts_match_a_direct_count(rows: list[tuple[str | None, ...]], alpha: float) -> None:
    frame = pl.DataFrame(rows, schema={"q": pl.String, "s": pl.String}, orient="row")
    d = measure_disclosure(frame, ["q"], ["s"], dominance=alpha, limit=100)["s"]
    classes: dict[str | None, Counter[str | None]] = defaultdict(Counter)
    for q, s in rows:
        classes[q][s] += 1
    dominated = [c for c in classes.values() if max(c.values()) > alpha * sum(c.values())]
    assert d.dominated_classes == len(dominated) == len(d.flagged)
    assert d.dominated_records == sum(sum(c.values()) for c in dominated)
    assert d.homogeneous_classes == sum(1 for c in classes.values() if len(c) == 1)
    assert d.homogeneous_classes <= d.dominated_classes
