"""ARX's fits of the population-uniqueness estimators: Newton's solver, digamma and
trigamma, Pitman's fit by Newton, SNB, and Dankar et al.'s rule."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kanonym.attacks.gamma import digamma, trigamma
from kanonym.attacks.newton import STARTS, solve
from kanonym.attacks.population import (
    estimate_pitman,
    estimate_snb,
    estimate_zayatz,
    pitman_uniques,
    population_uniqueness,
    snb_uniques,
)
from kanonym.errors import InputError


def test_prepared_start_values_accumulate_as_arx_adds_them() -> None:
    assert len(STARTS) == 16
    assert STARTS[1] == (0.0, 0.33) and STARTS[-1] == (0.99, 0.99)


def test_newton_gives_up_with_nan() -> None:
    # x^2 + 1 = 0 has no real root.
    def master(p):
        return (p[0] ** 2 + 1.0, p[1]), (2.0 * p[0], 0.0, 0.0, 1.0)

    assert all(math.isnan(v) for v in solve(master, (0.5, 0.0)))


@settings(max_examples=200, deadline=None)
@given(x=st.floats(0.001, 200.0))
def test_digamma_and_trigamma_satisfy_their_recurrences(x) -> None:
    assert digamma(x + 1.0) - digamma(x) == pytest.approx(1.0 / x, rel=1e-9, abs=1e-12)
    assert trigamma(x) - trigamma(x + 1.0) == pytest.approx(1.0 / (x * x), rel=1e-9)


def test_gamma_functions_at_known_points() -> None:
    assert digamma(0.5) == pytest.approx(-0.5772156649015329 - 2 * math.log(2), abs=1e-14)
    assert trigamma(0.5) == pytest.approx(math.pi**2 / 2, abs=1e-12)
    assert digamma(-2.5) == pytest.approx(1.1031566406452432, abs=1e-12)


@pytest.mark.parametrize(
    "histogram",
    [
        {1: 40, 2: 12, 3: 6, 5: 3, 9: 1},
        {1: 120, 2: 30, 3: 10, 4: 5, 8: 2},
        {1: 900, 2: 200, 3: 60, 4: 30, 6: 10, 15: 3},
    ],
)
def test_pitman_by_newton_finds_the_maximum_estimate_pitman_finds(histogram) -> None:
    """Two ways to the same maximum likelihood: Newton (ARX) and bisection (kanonym risk),
    where the maximum is inside 0 < alpha < 1."""
    newton = pitman_uniques(histogram, 10**6)
    maximum = estimate_pitman(histogram, 10**6)
    assert not isinstance(maximum, str)
    assert newton == pytest.approx(maximum.population_uniques, rel=1e-5)


def test_pitman_by_newton_is_not_held_to_alpha_at_least_0() -> None:
    """kanonym risk's fit keeps 0 <= alpha < 1 and stops at alpha = 0 here; ARX's Newton
    (theta >= 0 only) reaches a stationary point with alpha < 0, fewer uniques."""
    histogram = {1: 57, 2: 23, 3: 17, 4: 9, 5: 5, 6: 2, 9: 1}
    maximum = estimate_pitman(histogram, 10**6)
    assert not isinstance(maximum, str) and maximum.parameters["alpha"] == 0.0
    assert pitman_uniques(histogram, 10**6) < maximum.population_uniques


def test_snb_against_arx_computation() -> None:
    """SNB's uniques for a sample of 175 from 271, as ARX's ModelSNB computes them
    (recomputed independently with ARX's formulas while writing these notes)."""
    histogram = {1: 57, 2: 23, 3: 17, 4: 9, 5: 5, 6: 2, 9: 1}
    assert snb_uniques(histogram, 271) == pytest.approx(55.354294808959935, rel=1e-12)
    estimate = estimate_snb(histogram, 271)
    assert not isinstance(estimate, str) and estimate.estimator == "snb"


def test_snb_without_a_solution_is_explained() -> None:
    assert isinstance(estimate_snb({1: 40, 2: 12, 3: 6, 5: 3, 9: 1}, 10_000), str)


@settings(max_examples=60, deadline=None)
@given(
    counts=st.dictionaries(st.integers(1, 8), st.integers(1, 30), min_size=1, max_size=5),
    extra=st.integers(0, 10**6),
)
def test_dankar_rule_chooses_by_sampling_fraction(counts, extra) -> None:
    assume(1 in counts)
    n = sum(size * count for size, count in counts.items())
    population = n + extra
    chosen = population_uniqueness(counts, population, "dankar")
    if n / population <= 0.1:
        pitman = pitman_uniques(counts, population)
        expected = None if math.isnan(pitman) or pitman == 0 else pitman / population
        assert chosen == expected
    else:
        zayatz = estimate_zayatz(counts, population).population_uniques
        snb = snb_uniques(counts, population)
        valid = [v for v in (zayatz, snb) if not math.isnan(v) and v != 0]
        if math.isnan(snb) or snb == 0:
            valid = [zayatz] if zayatz else []
        assert chosen == (min(valid) / population if valid else None)


def test_no_sample_unique_means_no_population_unique() -> None:
    for estimator in ("pitman", "zayatz", "snb", "dankar"):
        assert population_uniqueness({2: 4, 3: 1}, 1000, estimator) == 0.0


def test_an_unknown_estimator_is_refused() -> None:
    with pytest.raises(InputError, match="estimator 'chen' is not one of"):
        population_uniqueness({1: 1, 2: 1}, 100, "chen")
