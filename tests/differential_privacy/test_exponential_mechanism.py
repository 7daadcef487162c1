"""The exponential mechanism draws each candidate as often as it should, and ARX's draw exactly."""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt
import pytest

from kanonym.differential_privacy import (
    ARX_DETERMINISTIC_SEED,
    JavaRandom,
    arx_epsilon_per_step,
    exponential_mechanism,
    exponential_mechanism_arx,
)
from kanonym.errors import InputError

SCORES = [0.0, -1.0, -2.5, -0.5, -4.0]
SEEDS = range(4_000)


def _expected(scores: list[float], epsilon: float, sensitivity: float) -> npt.NDArray[np.float64]:
    weights = np.exp(np.array(scores) * epsilon / (2 * sensitivity))
    return np.asarray(weights / weights.sum(), dtype=np.float64)


def _close(drawn: list[int], expected: npt.NDArray[np.float64]) -> None:
    # One draw per seed from a fixed list of seeds: deterministic. Each share must lie
    # within 4.5 standard deviations of its probability (a chance of about 1e-5 per
    # candidate for a correct sampler, fixed once and for all by the seeds).
    counts = np.bincount(drawn, minlength=expected.shape[0])
    shares = counts / len(drawn)
    bounds = 4.5 * np.sqrt(expected * (1 - expected) / len(drawn))
    assert np.all(np.abs(shares - expected) <= bounds), (shares, expected)


def test_shares_follow_the_exponential_weights() -> None:
    drawn = [exponential_mechanism(SCORES, 2.0, 1.0, np.random.default_rng(seed)) for seed in SEEDS]
    _close(drawn, _expected(SCORES, 2.0, 1.0))


def test_sensitivity_scales_the_scores() -> None:
    drawn = [exponential_mechanism(SCORES, 3.0, 2.0, np.random.default_rng(seed)) for seed in SEEDS]
    _close(drawn, _expected(SCORES, 3.0, 2.0))


def test_arx_shares_follow_the_exponential_weights() -> None:
    # ARX takes scores already divided by the sensitivity. The first doubles of
    # java.util.Random(seed) for neighbouring seeds are nearly equal (its seed is
    # only XORed with the multiplier), so each of 40 seeds draws 100 times, as
    # ARX's search draws many times from one generator.
    drawn = []
    for seed in range(40):
        random = JavaRandom(seed)
        drawn += [exponential_mechanism_arx(SCORES, 2.0, random) for _ in range(100)]
    _close(drawn, _expected(SCORES, 2.0, 1.0))


def test_huge_scores_are_stable() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = {
            exponential_mechanism([1e308, -1e308, 1e308], 1.0, 1e-300, np.random.default_rng(seed))
            for seed in range(200)
        }
        # The middle weight underflows to 0: never drawn; the others are even.
        assert drawn == {0, 2}
        shares = [
            exponential_mechanism([1e300, 1e300 - 2e285], 1e-285, 1.0, np.random.default_rng(s))
            for s in SEEDS
        ]
    _close(shares, _expected([0.0, -2.0], 1.0, 1.0))


def test_extreme_ratios_of_epsilon_to_sensitivity() -> None:
    scores = [1.0, 3.0, 3.0, -2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # epsilon / sensitivity overflows: only the best scores can be drawn, evenly.
        sharp = [
            exponential_mechanism(scores, 1e300, 1e-300, np.random.default_rng(s)) for s in SEEDS
        ]
        # epsilon / sensitivity underflows: every candidate is as likely.
        flat = [
            exponential_mechanism(scores, 1e-300, 1e300, np.random.default_rng(s)) for s in SEEDS
        ]
    _close(sharp, np.array([0.0, 0.5, 0.5, 0.0]))
    _close(flat, np.full(4, 0.25))


def test_a_common_shift_changes_nothing() -> None:
    scores = np.array([3.0, 1.0, 2.0, 0.0])
    for seed in range(100):
        plain = exponential_mechanism(scores, 1.0, 1.0, np.random.default_rng(seed))
        shifted = exponential_mechanism(scores + 1e6, 1.0, 1.0, np.random.default_rng(seed))
        assert plain == shifted


def test_one_uniform_per_draw() -> None:
    rng = np.random.default_rng(5)
    exponential_mechanism(SCORES, 1.0, 1.0, rng)
    reference = np.random.default_rng(5)
    reference.random()
    assert rng.random() == reference.random()


def test_arx_draws() -> None:
    # Printed by ARX's ExponentialMechanism re-typed in Java (Commons Math's
    # EnumeratedDistribution included) on OpenJDK 17.0.15, one Random(0xDEADBEEF)
    # for all thirty draws, as ARX's search shares it across its steps.
    random = JavaRandom(ARX_DETERMINISTIC_SEED)
    scores = [-3.5, -1.25, 0.0, -2.0, -0.75, -10.0, -1.25]
    assert [exponential_mechanism_arx(scores, 2.0, random) for _ in range(30)] == [
        *[2, 6, 2, 0, 4, 6, 6, 2, 4, 2, 4, 2, 4, 6, 2],
        *[3, 1, 2, 3, 2, 1, 2, 2, 2, 2, 1, 4, 4, 2, 1],
    ]
    random = JavaRandom(7)
    huge = [1e300, 1e300 - 1e285, -1e300, 5e299]
    drawn = [exponential_mechanism_arx(huge, 1e-299, random) for _ in range(10)]
    assert drawn == [1, 1, 0, 1, 1, 0, 0, 1, 0, 1]


class _FixedDraw(JavaRandom):
    """A JavaRandom whose nextDouble() is a given value."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def next_double(self) -> float:
        return self.value


def test_arx_returns_the_last_candidate_on_an_exact_cumulative_value() -> None:
    # Three equal weights: cumulative 1/3, 2/3, 1. A draw of exactly 1/3 is found by
    # Java's binary search, fails ARX's `u < cumulative[index]` and falls through to
    # the last candidate, not the second.
    third = 1.0 / 3.0
    even = [0.0, 0.0, 0.0]
    assert exponential_mechanism_arx(even, 1.0, _FixedDraw(third)) == 2
    assert exponential_mechanism_arx(even, 1.0, _FixedDraw(math.nextafter(third, 1))) == 1
    assert exponential_mechanism_arx(even, 1.0, _FixedDraw(math.nextafter(third, 0))) == 0
    assert exponential_mechanism_arx(even, 1.0, _FixedDraw(0.0)) == 0


def test_arx_epsilon_per_step() -> None:
    assert arx_epsilon_per_step(0.1, 100) == math.nextafter(0.001, 0.0)
    assert arx_epsilon_per_step(1.0, 0) == 0.0


@pytest.mark.parametrize(
    ("scores", "epsilon", "sensitivity", "named"),
    [
        ([], 1.0, 1.0, "`scores`"),
        ([[1.0, 2.0]], 1.0, 1.0, "`scores`"),
        ([1.0, math.nan], 1.0, 1.0, "`scores`"),
        ([1.0, math.inf], 1.0, 1.0, "`scores`"),
        (["a"], 1.0, 1.0, "`scores`"),
        ([1.0], 0.0, 1.0, "`epsilon`"),
        ([1.0], math.inf, 1.0, "`epsilon`"),
        ([1.0], 1.0, 0.0, "`sensitivity`"),
        ([1.0], 1.0, -2.0, "`sensitivity`"),
    ],
)
def test_bad_arguments(scores: object, epsilon: float, sensitivity: float, named: str) -> None:
    with pytest.raises(InputError, match=named):
        exponential_mechanism(scores, epsilon, sensitivity, np.random.default_rng(0))  # type: ignore[arg-type]


def test_arx_refuses_overflowing_exponents() -> None:
    with pytest.raises(InputError, match="overflow"):
        exponential_mechanism_arx([1e308, 0.0], 8.0, JavaRandom(0))
    with pytest.raises(InputError, match="`steps`"):
        arx_epsilon_per_step(0.1, -1)
