"""The reported measures, on Samarati's example and by hand."""

from __future__ import annotations

import numpy as np
import pytest

from kanonym.metrics import (
    average_class_size,
    completeness,
    discernibility,
    precision,
    precision_by_attribute,
    solution_metrics,
)


def test_precision_is_one_minus_mean_relative_level() -> None:
    assert precision((1, 0), (1, 2)) == pytest.approx(0.5)
    assert precision((0, 1), (1, 2)) == pytest.approx(0.75)
    assert precision((0, 0), (3, 4)) == 1.0
    assert precision_by_attribute((1, 1), (2, 0), ("a", "b")) == {"a": 0.5, "b": 1.0}


def test_completeness_and_discernibility() -> None:
    assert completeness(2, 9) == pytest.approx(7 / 9)
    # Released classes of 2, 3 and 2 rows, two rows suppressed, n = 9.
    assert discernibility(np.array([2, 3, 2]), 2, 9) == 4 + 9 + 4 + 2 * 9


def test_average_class_size() -> None:
    assert average_class_size(7, 3, 2) == pytest.approx(7 / 6)
    assert average_class_size(0, 0, 2) is None


def test_solution_metrics_keys_for_samarati_gt01() -> None:
    metrics = solution_metrics(
        node=(0, 1),
        heights=(1, 2),
        names=("race", "zip"),
        released_sizes=np.array([2, 3, 2]),
        suppressed_rows=2,
        k=2,
    )
    assert metrics == {
        "precision": pytest.approx(0.75),
        "precision_by_attribute": {"race": 1.0, "zip": 0.5},
        "completeness": pytest.approx(7 / 9),
        "dm": 35,
        "equivalence_classes": 3,
        "aecs": pytest.approx(7 / 3 / 2),
        "height": 1,
    }
