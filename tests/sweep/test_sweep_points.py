"""Prosecutor risk from class sizes (El Emam & Dankar 2008): the one function the sweep,
the notebook view of a release and ``kanonym risk`` share."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.attacks.measures import prosecutor_risk


def test_risk_of_known_sizes() -> None:
    # Classes of 2, 5 and 3 rows: highest 1/2, average 3/10, the 5 rows of the classes
    # of 2 and 3 above 0.2 (a class of five is exactly at 0.2: not above).
    risk = prosecutor_risk(np.array([2, 5, 3]), threshold=0.2)
    assert (risk.highest, risk.average, risk.records_at_risk) == (0.5, 0.3, 5)


def test_nothing_released_has_no_risk() -> None:
    risk = prosecutor_risk(np.array([], dtype=np.int64), threshold=0.2)
    assert (risk.highest, risk.average, risk.records_at_risk, risk.share_at_risk) == (0, 0, 0, 0)


def test_equal_classes_average_is_the_highest() -> None:
    risk = prosecutor_risk(np.full(7, 3), threshold=0.5)
    assert risk.average == risk.highest == 1 / 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=30), st.sampled_from([0.1, 0.2, 0.5]))
def test_sizes_give_the_per_record_definitions(sizes, threshold) -> None:
    # One record risk 1/f_j per row: the highest, the mean and the rows above the threshold.
    records = [1 / size for size in sizes for _ in range(size)]
    risk = prosecutor_risk(np.array(sizes, dtype=np.int64), threshold=threshold)
    assert risk.highest == max(records)
    assert risk.average == pytest.approx(sum(records) / len(records))
    assert risk.records_at_risk == sum(r > threshold for r in records)
