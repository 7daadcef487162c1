"""The risk thresholds (El Emam 2013; ARX's risk-based criteria) on hand-made class sizes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kanonym.errors import InputError
from kanonym.models import (
    AverageReidentificationRisk,
    ClassStatistics,
    PopulationUniqueness,
    SampleUniqueness,
    model_spec,
    parse_model,
)
from kanonym.models._smallest_first import smallest_first
from kanonym.models.base import SampleModel, is_sample_model

ascending_sizes = st.lists(st.integers(1, 9), min_size=0, max_size=25).map(
    lambda sizes: np.array(sorted(sizes), dtype=np.int64)
)


def _arx_binary(n: int, holds, rows, budget: int) -> int:
    """ARX's suppressWhileNotFulfilledBinary, written out with a suppressed flag per entry."""
    suppressed = [False] * n

    def prefix() -> int:
        return sum(suppressed)

    def condition() -> str:
        j = prefix()
        assert suppressed[:j] == [True] * j  # the suppressed entries always form a prefix
        if holds(j):
            return "F"
        return "ABORT" if rows(j) > budget else "NF"

    if n == 0 or holds(0):
        return 0
    low, high = 0, n - 1
    mid = int((low + high) / 2)
    for i in range(low, mid + 1):
        suppressed[i] = True
    state = "ABORT"
    while low <= high:
        state = condition()
        if state == "ABORT":
            break
        if state == "F":
            high = mid - 1
            mid = int((low + high) / 2)  # Java: truncation toward 0
            i = mid + 1
            while i < n and suppressed[i]:
                suppressed[i] = False
                i += 1
        else:
            low = mid + 1
            mid = int((low + high) / 2)
            for i in range(low, mid + 1):
                suppressed[i] = True
    if state != "ABORT":
        state = condition()
        if state == "NF" and mid + 1 < n and not suppressed[mid + 1]:
            suppressed[mid + 1] = True
    return prefix()


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(0, 40),
    answers=st.lists(st.booleans(), min_size=41, max_size=41),
    budget=st.integers(0, 60),
)
def test_smallest_first_is_arx_binary_search_for_any_criterion(n, answers, budget) -> None:
    """Any criterion, monotone or not, lands on the prefix ARX's control flow lands on."""
    sizes = np.ones(n, dtype=np.int64)

    def holds(j: int) -> bool:
        return answers[j]

    assert smallest_first(sizes, holds, budget=budget) == _arx_binary(n, holds, lambda j: j, budget)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 40), first=st.integers(0, 40))
def test_smallest_first_finds_the_shortest_prefix_of_a_monotone_criterion(n, first) -> None:
    assume(first <= n)
    sizes = np.ones(n, dtype=np.int64)
    assert smallest_first(sizes, lambda j: j >= first, budget=n) == first


def test_the_java_division_quirk_keeps_the_first_class_suppressed() -> None:
    """Holding from one class on: ARX's high goes to -1, mid stays 0, one class goes."""
    assert smallest_first(np.array([1, 2, 3]), lambda j: j >= 1, budget=10) == 1


def test_a_failing_prefix_over_the_budget_stops_the_search() -> None:
    # The first prefix tried, 3 classes (3 rows), fails and exceeds the budget of 1:
    # ARX aborts there, the node fails.
    assert smallest_first(np.array([1, 1, 1, 1, 1]), lambda j: j >= 5, budget=1) == 3


@settings(max_examples=200, deadline=None)
@given(sizes=ascending_sizes, r=st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.5, 1.0]))
def test_average_risk_suppresses_the_fewest_smallest_classes(sizes, r) -> None:
    model = AverageReidentificationRisk(average_risk=r)
    rows = int(sizes.sum())
    j = model.classes_to_suppress(sizes, rows=rows, budget=rows)

    def holds(i: int) -> bool:
        left = sizes[i:]
        return left.sum() > 0 and len(left) / left.sum() <= r

    assert holds(j) or j == len(sizes)
    assert not any(holds(i) for i in range(j))


@settings(max_examples=200, deadline=None)
@given(sizes=ascending_sizes, u=st.sampled_from([0.01, 0.1, 0.25, 0.5, 1.0]))
def test_sample_uniqueness_suppresses_only_uniques_and_the_fewest(sizes, u) -> None:
    model = SampleUniqueness(threshold=u)
    rows = int(sizes.sum())
    j = model.classes_to_suppress(sizes, rows=rows, budget=rows)
    left = sizes[j:]
    assert (sizes[:j] == 1).all()
    assert left.sum() == 0 or (left == 1).sum() / left.sum() <= u
    if j:
        before = sizes[j - 1 :]
        assert (before == 1).sum() / before.sum() > u


def test_average_risk_with_a_highest_risk() -> None:
    """Risk above 0.34 (classes of 1 and 2 rows) for at most 5 % of the records."""
    model = AverageReidentificationRisk(average_risk=0.5, highest_risk=0.34, records_at_risk=0.05)
    sizes = np.array([1, 2, 3, 3, 4, 5, 5, 7], dtype=np.int64)  # 30 rows, 8 classes
    assert model.smallest_safe_size == 3
    assert model.measure(sizes, rows=30) == pytest.approx(8 / 30)
    assert model.share_at_risk(sizes) == pytest.approx(3 / 30)
    # 3/30 and, without the singleton, 2/29 are above 0.05: both classes go.
    assert model.classes_to_suppress(sizes, rows=30, budget=30) == 2
    # h is read as the decimal it prints as: 1/3 prints as 0.3333333333333333, below
    # 1/3, so classes of 3 are at risk too.
    assert (
        AverageReidentificationRisk(
            average_risk=0.5, highest_risk=1 / 3, records_at_risk=0.5
        ).smallest_safe_size
        == 4
    )


def test_population_uniqueness_by_each_estimator() -> None:
    sizes = np.array([1] * 57 + [2] * 23 + [3] * 17 + [4] * 9 + [5] * 5 + [6] * 2 + [9])
    measured = {
        name: PopulationUniqueness(threshold=0.5, estimator=name, population_size=271).measure(
            sizes, rows=175
        )
        for name in ("zayatz", "snb", "pitman", "dankar")
    }
    assert measured["snb"] == pytest.approx(55.354294808959935 / 271, rel=1e-12)
    # Above 10 % sampling, Dankar's rule takes the smaller of Zayatz's and SNB's.
    assert measured["dankar"] == min(measured["zayatz"], measured["snb"])


def test_population_uniqueness_from_a_sampling_fraction() -> None:
    model = PopulationUniqueness(threshold=0.01, estimator="zayatz", sampling_fraction=0.3)
    assert model.population(10) == 33  # 10 / 0.3 = 33.3, rounded half up
    # No sample unique: nothing is estimated, the threshold holds.
    assert model.measure(np.array([2, 3]), rows=5) == 0.0
    assert model.classes_to_suppress(np.array([2, 3]), rows=5, budget=0) == 0


def test_an_invalid_dankar_estimate_fails_and_leads_to_suppression() -> None:
    # Every record of several a sample unique: Pitman has no fit, Dankar's rule no
    # estimate, which fails; a single record gets one (35 uniques in 10**6).
    model = PopulationUniqueness(threshold=0.5, estimator="dankar", population_size=10**6)
    sizes = np.array([1, 1, 1, 1], dtype=np.int64)
    assert model.measure(sizes, rows=4) is None
    assert model.measure(sizes[:1], rows=4) == pytest.approx(3.5275945291633635e-05)
    assert model.classes_to_suppress(sizes, rows=4, budget=4) == 3


def test_sample_models_pass_every_class_and_declare_arx_monotonicity() -> None:
    stats = ClassStatistics(np.array([1, 5]))
    models = [
        AverageReidentificationRisk(average_risk=0.1),
        SampleUniqueness(threshold=0.1),
        PopulationUniqueness(threshold=0.1, estimator="zayatz", population_size=100),
    ]
    for model in models:
        assert is_sample_model(model) and isinstance(model, SampleModel)
        assert model.satisfied_classes(stats).tolist() == [True, True]
        assert model.sensitive_attributes == ()
    assert [(m.monotone_with_suppression, m.monotone_without_suppression) for m in models] == [
        (True, True),
        (True, True),
        (False, False),
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: AverageReidentificationRisk(average_risk=0), "average_risk must be a number > 0"),
        (lambda: AverageReidentificationRisk(average_risk=1.5), "and <= 1"),
        (
            lambda: AverageReidentificationRisk(average_risk=0.1, highest_risk=0.2),
            "give highest_risk and records_at_risk together",
        ),
        (lambda: SampleUniqueness(threshold=0.0), "threshold must be a number > 0"),
        (lambda: SampleUniqueness(threshold=2), "and <= 1"),
        (
            lambda: PopulationUniqueness(threshold=0.1, estimator="chen", population_size=10),
            "estimator 'chen' is not one of",
        ),
        (lambda: PopulationUniqueness(threshold=0.1), "exactly one of population_size"),
        (
            lambda: PopulationUniqueness(threshold=0.1, population_size=0),
            "population_size must be a whole number >= 1",
        ),
        (
            lambda: PopulationUniqueness(threshold=0.1, sampling_fraction=0),
            "sampling_fraction must be a number > 0",
        ),
    ],
)
def test_bad_parameters_are_one_line_input_errors(make, message) -> None:
    with pytest.raises(InputError, match=message) as raised:
        make()
    assert "\n" not in str(raised.value)


def test_a_population_smaller_than_the_table_is_refused() -> None:
    model = PopulationUniqueness(threshold=0.1, estimator="pitman", population_size=3)
    with pytest.raises(InputError, match="population_size 3 is smaller than the table's 5 rows"):
        model.measure(np.array([5]), rows=5)


@pytest.mark.parametrize(
    "spec",
    [
        "average-risk:0.01",
        "average-risk:0.1:0.2:0.05",
        "sample-uniqueness:0.01",
        "population-uniqueness:0.0001:dankar:317238626",
        "population-uniqueness:0.0001:pitman:317238626",
        "population-uniqueness:0.001:zayatz:0.01",
        "population-uniqueness:0.5:snb:1.0",
    ],
)
def test_specs_read_and_write_back(spec) -> None:
    model = parse_model(spec)
    assert model_spec(model) == spec
    assert parse_model(model_spec(model) or "") == model


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("average-risk:0", "average_risk must be a number > 0"),
        ("average-risk:0.1:0.2", "expected the form average-risk:R or average-risk:R:H:F"),
        ("sample-uniqueness:1.5", "threshold must be a number > 0 and <= 1"),
        ("sample-uniqueness", "expected the form sample-uniqueness:U"),
        ("population-uniqueness:0.1:pitmann:100", "did you mean 'pitman'"),
        ("population-uniqueness:0.1:zayatz:1.5", "sampling_fraction must be a number > 0"),
        ("population-uniqueness:0.1:zayatz", "expected the form population-uniqueness"),
    ],
)
def test_bad_specs_name_the_spec(spec, message) -> None:
    with pytest.raises(InputError, match=message) as raised:
        parse_model(spec)
    assert f"model '{spec}'" in str(raised.value)


def _rows_suppressed(model: SampleModel, sizes: np.ndarray) -> int:
    ascending = np.sort(sizes)
    rows = int(ascending.sum())
    return int(ascending[: model.classes_to_suppress(ascending, rows=rows, budget=rows)].sum())


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=20),
    data=st.data(),
    model=st.sampled_from(
        [
            AverageReidentificationRisk(average_risk=0.3),
            AverageReidentificationRisk(average_risk=0.5),
            SampleUniqueness(threshold=0.1),
            SampleUniqueness(threshold=0.3),
        ]
    ),
)
def test_merging_classes_never_needs_more_suppression(sizes, data, model) -> None:
    """The monotonicity the two declare: generalization merges classes, and the rows the
    model suppresses (ARX's binary search) never grow."""
    groups = data.draw(st.lists(st.integers(0, 4), min_size=len(sizes), max_size=len(sizes)))
    merged = np.bincount(groups, weights=sizes).astype(np.int64)
    merged = merged[merged > 0]
    assume(len(merged) < len(sizes))
    assert _rows_suppressed(model, merged) <= _rows_suppressed(model, np.array(sizes))


def test_population_uniqueness_is_not_monotone_under_merges() -> None:
    """A counterexample to its declaring monotonicity: merging two classes of 2 into one
    of 4 leaves the 3 uniques a sample that Zayatz rates above the threshold."""
    model = PopulationUniqueness(threshold=0.15, estimator="zayatz", population_size=30)
    finer = np.array([1, 1, 1, 2, 2, 3], dtype=np.int64)
    coarser = np.array([1, 1, 1, 3, 4], dtype=np.int64)
    measured = (model.measure(finer, rows=10), model.measure(coarser, rows=10))
    assert measured[0] is not None and measured[1] is not None
    assert measured[0] <= 0.15 < measured[1]


def test_a_highest_risk_is_not_monotone_with_suppression() -> None:
    """Classes 1, 1, 4 (h = 0.25: classes below 4 at risk, at most 20 %): one singleton
    goes (1/5); merged into 2, 4 the class of 2 must go whole (2 rows)."""
    model = AverageReidentificationRisk(average_risk=0.5, highest_risk=0.25, records_at_risk=0.2)
    assert _rows_suppressed(model, np.array([1, 1, 4])) == 1
    assert _rows_suppressed(model, np.array([2, 4])) == 2
    assert not model.monotone_with_suppression and model.monotone_without_suppression


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=20),
    data=st.data(),
)
def test_a_highest_risk_is_monotone_without_suppression(sizes, data) -> None:
    """Merging never fails a release that passed with nothing suppressed."""
    model = AverageReidentificationRisk(average_risk=0.5, highest_risk=0.25, records_at_risk=0.2)
    groups = data.draw(st.lists(st.integers(0, 4), min_size=len(sizes), max_size=len(sizes)))
    merged = np.sort(np.bincount(groups, weights=sizes).astype(np.int64))
    merged = merged[merged > 0]
    finer = np.sort(np.array(sizes))
    assume(model.classes_to_suppress(finer, rows=int(finer.sum()), budget=0) == 0)
    assert model.classes_to_suppress(merged, rows=int(merged.sum()), budget=0) == 0
