"""delta-presence: the definition on class and population sizes, parameters, monotonicity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kanonym.errors import InputError
from kanonym.models import ClassStatistics, DeltaPresence, admits_absent_classes, needs_population


def test_share_of_the_population_within_bounds() -> None:
    stats = ClassStatistics(np.array([1, 2, 1, 3]), population=np.array([10, 10, 5, 3]))
    model = DeltaPresence(delta_min=0.1, delta_max=0.2)
    # 0.1 and 0.2 are in (bounds included), 0.2 exactly from 1/5, 1.0 is out.
    assert model.satisfied_classes(stats).tolist() == [True, True, True, False]


def test_without_a_population_it_names_the_parameter() -> None:
    with pytest.raises(InputError, match="`population`"):
        DeltaPresence(delta_min=0, delta_max=0.5).satisfied_classes(ClassStatistics(np.array([1])))


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (0.3, 0.2, "delta_min 0.3 is larger than delta_max 0.2"),
        (-0.1, 0.2, "delta_min must be"),
        (0.0, 1.5, "delta_max must be"),
        (float("nan"), 0.2, "delta_min must be"),
    ],
)
def test_bad_parameters_are_refused(low: float, high: float, message: str) -> None:
    with pytest.raises(InputError, match=message):
        DeltaPresence(delta_min=low, delta_max=high)


def test_it_reads_the_population_and_judges_absent_classes_only_with_a_lower_bound() -> None:
    assert needs_population(DeltaPresence(delta_min=0, delta_max=0.5))
    assert admits_absent_classes(DeltaPresence(delta_min=0, delta_max=0.5))
    assert not admits_absent_classes(DeltaPresence(delta_min=0.01, delta_max=0.5))


@given(
    st.lists(st.tuples(st.integers(1, 20), st.integers(0, 20)), min_size=1, max_size=6).map(
        lambda pairs: [(s, s + extra) for s, extra in pairs]
    ),
    st.floats(0, 0.5),
    st.floats(0.5, 1),
)
def test_merging_satisfying_classes_satisfies(
    classes: list[tuple[int, int]], low: float, high: float
) -> None:
    """Monotone without suppression: a merge of classes that all pass passes."""
    model = DeltaPresence(delta_min=low, delta_max=high)
    sizes = np.array([s for s, _ in classes])
    population = np.array([p for _, p in classes])
    assume(model.satisfied_classes(ClassStatistics(sizes, population=population)).all())
    merged = ClassStatistics(np.array([sizes.sum()]), population=np.array([population.sum()]))
    assert model.satisfied_classes(merged).all()


def test_not_monotone_with_suppression() -> None:
    """A failing class merged into a passing one can make both fail (more rows suppressed)."""
    model = DeltaPresence(delta_min=0.0, delta_max=0.5)
    apart = ClassStatistics(np.array([1, 3]), population=np.array([4, 3]))
    assert model.satisfied_classes(apart).tolist() == [True, False]  # 3 rows fail
    together = ClassStatistics(np.array([4]), population=np.array([7]))
    assert model.satisfied_classes(together).tolist() == [False]  # 4 rows fail
    assert not model.monotone_with_suppression and model.monotone_without_suppression
