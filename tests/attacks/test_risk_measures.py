"""Risk measures (kanonym.risk): hand-computed answers, errors, invariants."""

from __future__ import annotations

import math
from collections import Counter

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kanonym
from kanonym.attacks.measures import measure_risk
from kanonym.errors import InputError

# Classes on zip: a (3 rows), b (2), c (1).
SAMPLE = pl.DataFrame({"zip": ["a", "a", "a", "b", "b", "c"], "x": list("uvwxyz")})
# Contains the sample: a 6, b 2, c 4, d 3, e 1 (16 rows).
POPULATION = pl.DataFrame({"zip": ["a"] * 6 + ["b"] * 2 + ["c"] * 4 + ["d"] * 3 + ["e"]})


def test_sample_measures_by_hand() -> None:
    r = kanonym.risk(SAMPLE, ["zip"], threshold=0.4)
    assert (r.rows, r.classes, dict(r.class_sizes)) == (6, 3, {1: 1, 2: 1, 3: 1})
    assert (r.sample_uniques, r.sample_uniqueness) == (1, 1 / 6)
    # Record risks 1/3, 1/2, 1: classes b and c are above 0.4.
    assert r.prosecutor.highest == 1.0
    assert r.prosecutor.average == 3 / 6
    assert (r.prosecutor.records_at_risk, r.prosecutor.share_at_risk) == (3, 0.5)
    assert r.marketer == 3 / 6
    assert r.journalist is None and r.reasons["journalist"] == "no population table given"
    assert r.estimates is None and r.population_uniques is None


def test_threshold_is_strict() -> None:
    # A class of two has risk 0.5, not above 0.5.
    assert kanonym.risk(SAMPLE, ["zip"], threshold=0.5).prosecutor.records_at_risk == 1
    assert kanonym.risk(SAMPLE, ["zip"]).prosecutor.records_at_risk == 6  # default 0.2
    assert kanonym.risk(SAMPLE, ["zip"], threshold=1.0).prosecutor.records_at_risk == 0


def test_journalist_and_marketer_with_a_population_by_hand() -> None:
    r = kanonym.risk(SAMPLE, ["zip"], population=POPULATION, threshold=0.4)
    assert r.journalist is not None
    # F = 6, 2, 4 for the sample's classes a, b, c.
    assert r.journalist.highest == 1 / 2
    shares = 3 / 6 + 2 / 2 + 1 / 4
    assert r.journalist.average == pytest.approx(max(3 / 12, shares / 6))
    assert (r.journalist.records_at_risk, r.journalist.share_at_risk) == (2, 2 / 6)
    assert r.marketer == pytest.approx(shares / 6)
    assert (r.population_rows, r.population_uniques, r.population_uniqueness) == (16, 1, 1 / 16)
    # Zayatz from the sample with N = 16: h_i is proportional to i C(N - i, n - 1).
    assert r.estimates is not None
    h = {i: i * math.comb(16 - i, 5) for i in (1, 2, 3)}
    p = h[1] / (h[1] + h[2] + h[3])
    zayatz = r.estimates.zayatz
    assert zayatz.parameters["unique_given_sample_unique"] == pytest.approx(p)
    assert zayatz.population_uniques == pytest.approx(p * 16 / 6)
    # pi = 6/16 is above 10 %: Dankar et al.'s rule does not take Pitman's.
    assert r.estimates.pitman is not None and r.estimates.recommended is zayatz


def test_population_equal_to_the_sample_gives_prosecutor_figures() -> None:
    r = kanonym.risk(SAMPLE, ["zip"], population=SAMPLE)
    assert r.journalist is not None
    assert r.journalist.highest == r.prosecutor.highest
    assert r.journalist.average == pytest.approx(r.prosecutor.average)
    assert r.marketer == pytest.approx(r.prosecutor.average)
    # A census: every sample unique is a population unique.
    assert r.estimates is not None
    assert r.estimates.zayatz.population_uniques == pytest.approx(1.0)


def test_population_size_gives_the_estimate_only() -> None:
    r = kanonym.risk(SAMPLE, ["zip"], population_size=16)
    assert r.journalist is None and r.population_uniques is None
    assert r.estimates is not None and r.estimates.zayatz.population_size == 16
    estimates = r.as_dict()["estimates"]
    assert estimates["sampling_fraction"] == 6 / 16  # type: ignore[index]
    assert set(estimates) == {  # type: ignore[arg-type]
        "population_size",
        "sampling_fraction",
        "recommended",
        "zayatz",
        "pitman",
    }


def test_missing_values_are_a_class_of_their_own() -> None:
    t = pl.DataFrame({"zip": ["a", None, None, "a", None]})
    r = kanonym.risk(t, ["zip"])
    assert dict(r.class_sizes) == {2: 1, 3: 1}


def test_as_dict_keys_and_reasons() -> None:
    d = kanonym.risk(SAMPLE, ["zip"]).as_dict()
    assert list(d) == [
        "columns",
        "rows",
        "classes",
        "class_sizes",
        "sample_uniques",
        "sample_uniqueness",
        "threshold",
        "prosecutor",
        "journalist",
        "journalist_reason",
        "marketer",
        "population_rows",
        "population_uniques",
        "population_uniques_reason",
        "population_uniqueness",
        "estimates",
        "estimates_reason",
    ]
    assert d["class_sizes"] == {"1": 1, "2": 1, "3": 1}


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"population_size": 5}, "smaller than the table"),
        ({"population": POPULATION, "population_size": 20}, "not both"),
        ({"population": POPULATION.filter(pl.col("zip") != "c")}, "zip='c'"),
        (
            {
                "population": POPULATION.filter(pl.col("zip") != "b").vstack(
                    pl.DataFrame({"zip": ["b"]})
                )
            },
            "2 records in the table but 1",
        ),
    ],
)
def test_bad_requests(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        kanonym.risk(SAMPLE, ["zip"], **kwargs)  # type: ignore[arg-type]


def test_missing_column_and_empty_table() -> None:
    with pytest.raises(InputError, match="column 'age' not found"):
        kanonym.risk(SAMPLE, ["age"])
    with pytest.raises(InputError, match="no rows"):
        kanonym.risk(SAMPLE.head(0), ["zip"])
    with pytest.raises(InputError, match="string"):
        kanonym.risk(SAMPLE, "zip")


rows = st.lists(
    st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from(["x", "y", "z"])),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(rows, st.sampled_from([0.1, 0.2, 1 / 3, 0.5, 1.0]), st.lists(rows, max_size=1))
def test_invariants(table: list[tuple[str | None, str]], threshold: float, extra) -> None:
    frame = pl.DataFrame(table, schema={"p": pl.String, "q": pl.String}, orient="row")
    counts = Counter(table)
    r = measure_risk(frame, ["p", "q"], threshold=threshold)
    assert r.prosecutor.highest == 1 / min(counts.values())
    assert r.sample_uniques == sum(1 for c in counts.values() if c == 1)
    assert 0.0 <= r.sample_uniqueness <= 1.0
    assert r.prosecutor.average == len(counts) / len(table) <= r.prosecutor.highest
    assert r.prosecutor.records_at_risk == sum(c for c in counts.values() if 1 / c > threshold)
    # A population holding the sample and more rows lowers every risk.
    population = frame.vstack(
        pl.DataFrame(
            extra[0] if extra else [], schema={"p": pl.String, "q": pl.String}, orient="row"
        )
    )
    p = measure_risk(frame, ["p", "q"], threshold=threshold, population=population)
    assert p.journalist is not None
    assert p.journalist.highest <= r.prosecutor.highest
    assert p.journalist.average <= p.journalist.highest
    assert p.marketer <= r.marketer
    assert p.estimates is not None
    assert 0.0 <= p.estimates.zayatz.population_uniqueness <= 1.0
