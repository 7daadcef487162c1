"""Zayatz's population uniqueness estimate against the formula evaluated by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.attacks.population import estimate_zayatz
from kanonym.errors import InputError


def _by_the_formula(histogram: dict[int, int], big_n: int) -> tuple[Fraction, Fraction]:
    """P(F=1 | f=1) and the population uniques, with exact binomials (Dankar et al. 2012)."""
    n = sum(size * count for size, count in histogram.items())

    def h(i: int) -> Fraction:
        return Fraction(i * math.comb(big_n - i, n - 1), math.comb(big_n, n))

    p = histogram[1] * h(1) / sum(count * h(size) for size, count in histogram.items())
    return p, histogram[1] * p / Fraction(n, big_n)


def test_worked_example() -> None:
    # n = 4 in classes 1, 1, 2; N = 10: h_1 = 84/210, h_2 = 2 * 56/210, P = 0.6.
    e = estimate_zayatz({1: 2, 2: 1}, population_size=10)
    assert e.unique_given_sample_unique == pytest.approx(0.6)
    assert e.population_uniques == pytest.approx(3.0)
    assert (e.sampling_fraction, e.population_uniqueness) == (0.4, pytest.approx(0.3))
    assert e.as_dict()["estimator"] == "zayatz"


def test_census_keeps_every_sample_unique() -> None:
    e = estimate_zayatz({1: 3, 2: 2, 5: 1}, population_size=12)
    assert e.unique_given_sample_unique == 1.0 and e.population_uniques == 3.0


def test_no_sample_uniques_means_none() -> None:
    e = estimate_zayatz({2: 4}, population_size=100)
    assert e.unique_given_sample_unique is None and e.population_uniques == 0.0


def test_classes_too_large_to_leave_one_record() -> None:
    # N - n + 1 = 2: a population class of 3 or more always leaves 2+ records.
    e = estimate_zayatz({1: 1, 4: 1}, population_size=6)
    p, uniques = _by_the_formula({1: 1, 4: 1}, 6)
    assert e.unique_given_sample_unique == pytest.approx(float(p))
    assert e.population_uniques == pytest.approx(float(uniques))


@pytest.mark.parametrize("size", [3, 2.5, True])
def test_bad_population_sizes(size: object) -> None:
    with pytest.raises(InputError, match="population size"):
        estimate_zayatz({1: 2, 2: 1}, population_size=size)  # type: ignore[arg-type]


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.integers(1, 6), st.integers(1, 5), min_size=1, max_size=4),
    st.integers(0, 60),
)
def test_matches_the_formula(histogram: dict[int, int], extra: int) -> None:
    histogram = {1: histogram.get(1, 1), **histogram}
    n = sum(size * count for size, count in histogram.items())
    e = estimate_zayatz(histogram, population_size=n + extra)
    p, uniques = _by_the_formula(histogram, n + extra)
    assert e.unique_given_sample_unique == pytest.approx(float(p), rel=1e-9)
    assert e.population_uniques == pytest.approx(float(uniques), rel=1e-9)
    assert 0.0 <= e.population_uniqueness <= 1.0
