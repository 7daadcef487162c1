"""k-map: both forms' definitions, parameters, the derived k and monotonicity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kanonym.errors import InputError
from kanonym.models import (
    ClassStatistics,
    KMap,
    admits_absent_classes,
    model_spec,
    needs_population,
    parse_model,
)
from kanonym.models.k_map import described

USA = 317238626  # ARX's Region.USA
ESTIMATORS = ["poisson", "zero-truncated-poisson"]


def estimated(k: int, estimator: str, population: int, significance: float = 0.01) -> KMap:
    return KMap(
        k=k,
        estimator=estimator,  # type: ignore[arg-type]
        significance=significance,
        population_size=population,
    )


def test_with_a_population_classes_need_k_population_rows() -> None:
    stats = ClassStatistics(np.array([1, 2, 3]), population=np.array([4, 5, 30]))
    assert KMap(k=5).satisfied_classes(stats).tolist() == [False, True, True]


def test_without_a_population_table_it_names_the_parameter() -> None:
    with pytest.raises(InputError, match="`population`"):
        KMap(k=2).satisfied_classes(ClassStatistics(np.array([1])))


def test_the_population_form_reads_the_population_and_admits_absent_classes() -> None:
    assert needs_population(KMap(k=2)) and admits_absent_classes(KMap(k=2))
    model = estimated(2, "poisson", 100)
    assert not needs_population(model) and admits_absent_classes(model)
    assert model.monotone_with_suppression and model.monotone_without_suppression
    assert model.sensitive_attributes == ()


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize(("k", "derived"), [(3, 2), (1000, 3)])
def test_arx_derived_k_on_adult_against_the_us(estimator: str, k: int, derived: int) -> None:
    """ARX's TestAnonymizationKMap: adult's 30,162 rows, significance 0.01, Region.USA."""
    assert estimated(k, estimator, USA).derived_k(30162) == derived


def _pmf(x: int, mean: float) -> float:
    return math.exp(-mean) * mean**x / math.factorial(x)


def test_derived_k_by_hand() -> None:
    """n = 10, N = 100, k = 5, significance 0.05: lambda = 0.5.

    Poisson: F(0) = 0.607, F(1) = 0.910, F(2) = 0.986 >= 0.95 (stop after c = 2,
    c = 3), k' = 3 + 1 = 4. Zero-truncated: p(1)/(1 - p(0)) = 0.771, + p(2)/(1 - p(0))
    = 0.963 >= 0.95 (c = 3), k' = 3.
    """
    mean = 0.5
    assert sum(_pmf(x, mean) for x in range(2)) < 0.95 <= sum(_pmf(x, mean) for x in range(3))
    zero_free = 1 - _pmf(0, mean)
    assert _pmf(1, mean) / zero_free < 0.95 <= (_pmf(1, mean) + _pmf(2, mean)) / zero_free
    assert estimated(5, "poisson", 100, 0.05).derived_k(10) == 4
    assert estimated(5, "zero-truncated-poisson", 100, 0.05).derived_k(10) == 3


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_derived_k_is_capped_at_k_and_at_the_rows(estimator: str) -> None:
    # lambda = k: the loop reaches k, and the table has 2 rows only.
    assert estimated(10, estimator, 2).derived_k(2) == 2
    # The loop stops at k = 4 (Poisson returns 5, zero-truncated 4): capped at 4.
    assert estimated(4, estimator, 50).derived_k(50) == 4
    assert estimated(1, estimator, USA).derived_k(30162) == 1


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_estimated_form_is_k_anonymity_with_the_derived_k(estimator: str) -> None:
    # 30162 rows: k' = 3 for k = 1000.
    sizes = np.array([1, 2, 3, 30156])
    model = estimated(1000, estimator, USA)
    assert model.satisfied_classes(ClassStatistics(sizes)).tolist() == [False, False, True, True]


def test_an_enormous_population_gives_the_limit() -> None:
    # lambda underflows: the least positive mean, F(0) = 1, one row per class is k' 2.
    assert estimated(5, "poisson", 10**400).derived_k(10) == 2
    assert estimated(5, "zero-truncated-poisson", 10**400).derived_k(10) == 2


def test_a_population_smaller_than_the_sample_is_refused() -> None:
    model = estimated(3, "poisson", 5)
    with pytest.raises(InputError, match="population_size 5 is a population smaller than"):
        model.satisfied_classes(ClassStatistics(np.array([3, 3])))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"k": 0}, "k-map: k must be a whole number >= 1"),
        ({"k": True}, "k-map: k must be"),
        ({"k": 2.5}, "k-map: k must be"),
        ({"k": 2, "population_size": 10}, "population_size is read only with an estimator"),
        ({"k": 2, "estimator": "poisson"}, "population_size must be given with an estimator"),
        ({"k": 2, "estimator": "normal", "population_size": 9}, "estimator must be one of"),
        ({"k": 2, "estimator": "poisson", "population_size": 0}, "population_size must be"),
        ({"k": 2, "estimator": "poisson", "population_size": 9.0}, "population_size must be"),
        ({"k": 2, "significance": 0.0}, "significance must be"),
        ({"k": 2, "significance": 1.0}, "significance must be below 1"),
        ({"k": 2, "significance": float("nan")}, "significance must be"),
    ],
)
def test_bad_parameters_are_refused(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        KMap(**arguments)  # type: ignore[arg-type]


def test_describe_and_the_derived_k_for_the_report() -> None:
    assert KMap(k=4).describe() == {"model": "k-map", "k": 4}
    model = estimated(3, "zero-truncated-poisson", USA)
    assert model.describe() == {
        "model": "k-map",
        "k": 3,
        "estimator": "zero-truncated-poisson",
        "significance": 0.01,
        "population_size": USA,
    }
    assert described(model, 30162)["derived_k"] == 2
    assert "derived_k" not in described(KMap(k=4), 30162)


@pytest.mark.parametrize(
    ("spec", "model"),
    [
        ("k-map:5", KMap(k=5)),
        ("k-map:3:poisson:0.05:1000", estimated(3, "poisson", 1000, 0.05)),
        (
            "k-map:1000:zero-truncated-poisson:0.01:317238626",
            estimated(1000, "zero-truncated-poisson", USA),
        ),
    ],
)
def test_specs_read_and_write_back(spec: str, model: KMap) -> None:
    assert parse_model(spec) == model
    assert model_spec(model) == spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("k-map", "expected the form k-map:K or"),
        ("k-map:3:poisson:0.01", "expected the form k-map:K or"),
        ("k-map:3:poison:0.01:100", "estimator 'poison' is not .* \\(did you mean 'poisson'\\?\\)"),
        ("k-map:three", "K 'three' is not a whole number"),
        ("k-map:3:poisson:x:100", "SIGNIFICANCE 'x' is not a number"),
        ("k-map:3:poisson:0.01:1e9", "POPULATION_SIZE '1e9' is not a whole number"),
        ("k-map:0", "k must be a whole number >= 1"),
    ],
)
def test_bad_specs_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as raised:
        parse_model(spec)
    assert "\n" not in str(raised.value)


@given(
    st.sampled_from(ESTIMATORS),
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.integers(1, 10**5),
    st.integers(0, 10**7),
    st.sampled_from([0.001, 0.01, 0.05, 0.2, 0.5]),
)
def test_derived_k_is_at_most_k_and_non_decreasing_in_k(
    estimator: str, k: int, other: int, rows: int, more: int, significance: float
) -> None:
    low, high = sorted((k, other))
    population = rows + more
    lower = estimated(low, estimator, population, significance).derived_k(rows)
    upper = estimated(high, estimator, population, significance).derived_k(rows)
    assert 1 <= lower <= min(low, rows)
    assert upper <= min(high, rows)
    assert lower <= upper


@given(
    st.lists(st.tuples(st.integers(1, 20), st.integers(0, 20)), min_size=1, max_size=6).map(
        lambda pairs: [(s, s + extra) for s, extra in pairs]
    ),
    st.lists(st.integers(0, 5), min_size=6, max_size=6),
    st.integers(1, 40),
)
def test_merging_never_adds_failing_rows(
    classes: list[tuple[int, int]], groups: list[int], k: int
) -> None:
    """Monotone with and without suppression: merging classes (generalization) adds their
    population rows, so a class that passes stays passing and failing rows never grow."""
    model = KMap(k=k)
    sizes = np.array([s for s, _ in classes])
    population = np.array([p for _, p in classes])
    group = np.array(groups[: len(classes)])
    before = model.satisfied_classes(ClassStatistics(sizes, population=population))
    merged_sizes = np.bincount(group, weights=sizes).astype(np.int64)
    merged_population = np.bincount(group, weights=population).astype(np.int64)
    held = merged_sizes > 0
    after = model.satisfied_classes(
        ClassStatistics(merged_sizes[held], population=merged_population[held])
    )
    assert merged_sizes[held][~after].sum() <= sizes[~before].sum()
    assume(before.all())
    assert after.all()
