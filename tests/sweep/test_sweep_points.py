"""Prosecutor risk from class sizes (El Emam & Dankar 2008)."""

from __future__ import annotations

import numpy as np

from kanonym.sweep.points import prosecutor_risk


def test_risk_of_known_sizes() -> None:
    # Classes of 2, 5 and 3 rows: highest 1/2, average 3/10, the 5 rows of the classes
    # of 2 and 3 above 0.2 (a class of five is exactly at 0.2: not above).
    assert prosecutor_risk(np.array([2, 5, 3]), threshold=0.2) == (0.5, 0.3, 5)


def test_nothing_released_has_no_risk() -> None:
    assert prosecutor_risk(np.array([], dtype=np.int64), threshold=0.2) == (0.0, 0.0, 0)


def test_equal_classes_average_is_the_highest() -> None:
    highest, average, _ = prosecutor_risk(np.full(7, 3), threshold=0.5)
    assert average == highest == 1 / 3
