"""The re-check of the risk thresholds, on released tables regrouped apart."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import polars as pl
import pytest

from kanonym.errors import VerificationError
from kanonym.verify import verify_models
from kanonym.verify.definitions import average_risk, records_at_risk, sample_uniqueness
from kanonym.verify.risk import judges_release

# Classes 1, 1, 2, 4: 8 rows, 4 classes, 2 sample uniques.
RELEASE = pl.DataFrame({"zip": ["a", "b", "c", "c", "d", "d", "d", "d"]})


@dataclass
class Average:
    average_risk: float
    highest_risk: float | None = None
    records_at_risk: float | None = None
    name: str = "average-risk"


@dataclass
class Unique:
    threshold: float
    name: str = "sample-uniqueness"


@dataclass
class Population:
    threshold: float
    estimator: str
    population_size: int | None = None
    sampling_fraction: float | None = None
    name: str = "population-uniqueness"


def _check(model: object, released: pl.DataFrame = RELEASE) -> None:
    verify_models(released, columns=["zip"], source=released, models=[model])


def test_definitions() -> None:
    assert average_risk([1, 1, 2, 4]) == Fraction(1, 2)
    assert sample_uniqueness([1, 1, 2, 4]) == Fraction(1, 4)
    assert records_at_risk([1, 1, 2, 4], Fraction(1, 2)) == Fraction(1, 4)


def test_average_risk_passes_at_its_bound_and_fails_above() -> None:
    _check(Average(0.5))
    with pytest.raises(VerificationError, match=r"average risk 1/2 \(0.5\) above 0.49"):
        _check(Average(0.49))


def test_records_at_risk() -> None:
    _check(Average(0.5, highest_risk=0.5, records_at_risk=0.25))
    with pytest.raises(VerificationError, match=r"records at risk above 0\.5: 1/4"):
        _check(Average(0.5, highest_risk=0.5, records_at_risk=0.2))


def test_sample_uniqueness() -> None:
    _check(Unique(0.25))
    with pytest.raises(VerificationError, match=r"sample uniqueness 1/4 \(0.25\) above 0.2"):
        _check(Unique(0.2))


def test_population_uniqueness_by_zayatz() -> None:
    # Classes 1, 1, 2 from a population of 10: Zayatz estimates 3 uniques, 30 %.
    released = pl.DataFrame({"zip": ["a", "b", "c", "c"]})
    _check(Population(0.3, "zayatz", population_size=10), released)
    with pytest.raises(VerificationError, match=r"estimated population uniqueness 0.3 "):
        _check(Population(0.29, "zayatz", population_size=10), released)
    # From a sampling fraction: 4 / 0.4 = 10.
    _check(Population(0.3, "zayatz", sampling_fraction=0.4), released)


def test_population_uniqueness_without_uniques_and_without_an_estimate() -> None:
    _check(Population(0.01, "dankar", population_size=100), pl.DataFrame({"zip": ["a", "a"]}))
    with pytest.raises(VerificationError, match="dankar gives no estimate while 3 records"):
        _check(Population(0.5, "dankar", population_size=10**6), RELEASE.head(3))


def test_population_below_the_rows_fails_the_check() -> None:
    with pytest.raises(VerificationError, match="cannot be estimated: population size 3"):
        _check(Population(0.5, "zayatz", population_size=3))


def test_bad_declarations_fail() -> None:
    with pytest.raises(VerificationError, match="estimator 'chen'"):
        _check(Population(0.5, "chen", population_size=100))
    with pytest.raises(VerificationError, match="neither a whole population_size"):
        _check(Population(0.5, "zayatz"))
    with pytest.raises(VerificationError, match="parameter threshold is 'x', not a number"):
        _check(Unique("x"))  # type: ignore[arg-type]


def test_weighted_release() -> None:
    counted = pl.DataFrame({"zip": ["a", "b", "c", "d"], "n": [1, 1, 2, 4]})
    verify_models(counted, columns=["zip"], source=counted, models=[Unique(0.25)], weight="n")
    with pytest.raises(VerificationError, match="sample uniqueness 1/4"):
        verify_models(counted, columns=["zip"], source=counted, models=[Unique(0.2)], weight="n")


def test_judges_release() -> None:
    assert judges_release([Unique(0.1)]) and not judges_release([])
