"""Population uniqueness estimates against their formulas evaluated by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.attacks.population import (
    estimate_pitman,
    estimate_population,
    estimate_zayatz,
    fit_pitman,
    pitman_log_likelihood,
)
from kanonym.errors import InputError


def _by_the_formula(histogram: dict[int, int], big_n: int) -> tuple[Fraction, Fraction]:
    """P(F=1 | f=1) and the population uniques, with exact binomials (Dankar et al. 2012)."""
    n = sum(size * count for size, count in histogram.items())

    def h(i: int) -> Fraction:
        return Fraction(i * math.comb(big_n - i, n - 1), math.comb(big_n, n))

    p = histogram[1] * h(1) / sum(count * h(size) for size, count in histogram.items())
    return p, histogram[1] * p / Fraction(n, big_n)


def test_zayatz_worked_example() -> None:
    # n = 4 in classes 1, 1, 2; N = 10: h_1 = 84/210, h_2 = 2 * 56/210, P = 0.6.
    e = estimate_zayatz({1: 2, 2: 1}, population_size=10)
    assert e.parameters["unique_given_sample_unique"] == pytest.approx(0.6)
    assert e.population_uniques == pytest.approx(3.0)
    assert (e.sampling_fraction, e.population_uniqueness) == (0.4, pytest.approx(0.3))


def test_zayatz_census_keeps_every_sample_unique() -> None:
    e = estimate_zayatz({1: 3, 2: 2, 5: 1}, population_size=12)
    assert e.parameters["unique_given_sample_unique"] == 1.0 and e.population_uniques == 3.0


def test_no_sample_uniques_means_none() -> None:
    estimates = estimate_population({2: 4}, population_size=100)
    assert estimates.zayatz.population_uniques == 0.0
    assert estimates.pitman is not None and estimates.pitman.population_uniques == 0.0
    assert estimates.zayatz.parameters == {"unique_given_sample_unique": None}


def test_zayatz_classes_too_large_to_leave_one_record() -> None:
    # N - n + 1 = 2: a population class of 3 or more always leaves 2+ records.
    e = estimate_zayatz({1: 1, 4: 1}, population_size=6)
    p, uniques = _by_the_formula({1: 1, 4: 1}, 6)
    assert e.parameters["unique_given_sample_unique"] == pytest.approx(float(p))
    assert e.population_uniques == pytest.approx(float(uniques))


@pytest.mark.parametrize("size", [3, 2.5, True])
def test_bad_population_sizes(size: object) -> None:
    with pytest.raises(InputError, match="population size"):
        estimate_population({1: 2, 2: 1}, population_size=size)  # type: ignore[arg-type]


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.integers(1, 6), st.integers(1, 5), min_size=1, max_size=4),
    st.integers(0, 60),
)
def test_zayatz_matches_the_formula(histogram: dict[int, int], extra: int) -> None:
    histogram = {1: histogram.get(1, 1), **histogram}
    n = sum(size * count for size, count in histogram.items())
    e = estimate_zayatz(histogram, population_size=n + extra)
    p, uniques = _by_the_formula(histogram, n + extra)
    assert e.parameters["unique_given_sample_unique"] == pytest.approx(float(p), rel=1e-9)
    assert e.population_uniques == pytest.approx(float(uniques), rel=1e-9)
    assert 0.0 <= e.population_uniqueness <= 1.0


def _rising(x: float, m: int) -> float:
    return math.prod(x + j for j in range(m))


def test_pitman_likelihood_is_the_sampling_formula() -> None:
    # Classes 1, 1, 2, 3 (u = 4, n = 7): Pitman 1995's probability of the partition.
    theta, alpha = 1.7, 0.3
    probability = (
        math.prod(theta + i * alpha for i in range(1, 4))
        / _rising(theta + 1, 6)
        * _rising(1 - alpha, 1)
        * _rising(1 - alpha, 2)
    )
    assert pitman_log_likelihood({1: 2, 2: 1, 3: 1}, theta, alpha) == pytest.approx(
        math.log(probability)
    )


def _scores(histogram: dict[int, int], theta: float, alpha: float) -> tuple[float, float]:
    """dl/dtheta and dl/dalpha, summed term by term."""
    n = sum(size * count for size, count in histogram.items())
    u = sum(histogram.values())
    d_theta = sum(1 / (theta + i * alpha) for i in range(1, u)) - sum(
        1 / (theta + i) for i in range(1, n)
    )
    d_alpha = sum(i / (theta + i * alpha) for i in range(1, u)) - sum(
        count * sum(1 / (m - alpha) for m in range(1, size)) for size, count in histogram.items()
    )
    return d_theta, d_alpha


HISTOGRAMS = [{1: 40, 2: 12, 3: 6, 5: 3, 9: 1}, {1: 5, 2: 20, 4: 10}, {1: 3, 7: 2, 30: 1}]


@pytest.mark.parametrize("histogram", HISTOGRAMS)
def test_pitman_fit_is_a_maximum(histogram: dict[int, int]) -> None:
    fitted = fit_pitman(histogram)
    assert not isinstance(fitted, str)
    theta, alpha = fitted
    best = pitman_log_likelihood(histogram, theta, alpha)
    d_theta, _ = _scores(histogram, theta, alpha)
    assert d_theta == pytest.approx(0.0, abs=1e-7)
    if alpha > 1e-6:  # interior: the alpha score vanishes too
        assert _scores(histogram, theta, alpha)[1] == pytest.approx(0.0, abs=1e-5)
    for t in (theta * 0.5, theta * 2, theta + 1):
        for a in (0.0, alpha / 2, min(0.99, alpha + 0.1), 0.5, 0.9):
            if t > -a:
                assert pitman_log_likelihood(histogram, t, a) <= best + 1e-9


@pytest.mark.parametrize("histogram", HISTOGRAMS)
def test_pitman_estimate_by_hand(histogram: dict[int, int]) -> None:
    fitted = fit_pitman(histogram)
    assert not isinstance(fitted, str)
    theta, alpha = fitted
    e = estimate_pitman(histogram, population_size=100_000)
    assert not isinstance(e, str)
    # Hoshino 2001: N^alpha Gamma(theta + 1) / Gamma(theta + alpha).
    assert e.population_uniques == pytest.approx(
        100_000**alpha * math.gamma(theta + 1) / math.gamma(theta + alpha), rel=1e-9
    )
    assert e.parameters == {"theta": theta, "alpha": alpha}


def test_pitman_needs_a_repeated_class() -> None:
    estimates = estimate_population({1: 5}, population_size=50)
    assert estimates.pitman is None and "without bound" in str(estimates.pitman_reason)
    assert estimates.recommended is estimates.zayatz
    assert estimates.as_dict()["pitman"] is None and "pitman_reason" in estimates.as_dict()


def test_recommended_follows_dankar_et_al() -> None:
    histogram = HISTOGRAMS[0]
    n = sum(size * count for size, count in histogram.items())
    assert estimate_population(histogram, 10 * n).recommended.estimator == "pitman"
    assert estimate_population(histogram, 10 * n - 1).recommended.estimator == "zayatz"
