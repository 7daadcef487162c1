"""NCP, DM and C_AVG of local recodings, and NCP of full-domain releases on the same scale."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import race_hierarchy, samarati_table, zip_hierarchy

import kanonym
from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.metrics.local import (
    categorical_penalty,
    generalization_ncp,
    hierarchy_penalties,
    local_recoding_measures,
    ncp,
    numeric_penalty,
)
from kanonym.models import KAnonymity


def test_penalties_run_from_zero_for_a_value_to_one_for_everything() -> None:
    assert numeric_penalty(np.array([3.0, 0.0]), np.array([3.0, 10.0]), 10.0).tolist() == [0, 1]
    assert numeric_penalty(np.array([5.0]), np.array([5.0]), 0.0).tolist() == [0]
    assert categorical_penalty(np.array([1, 4]), 4).tolist() == [0, 1]
    assert categorical_penalty(np.array([1]), 1).tolist() == [0]


def test_ncp_weighs_attributes_and_counts_suppressed_cells_as_one() -> None:
    penalties = np.array([[0.5, 0.0], [1.0, 0.25]])
    sizes = np.array([2, 4])
    assert ncp(penalties, sizes, (1.0, 1.0)) == pytest.approx((2 * 0.5 + 4 * 1.25) / 12)
    assert ncp(penalties, sizes, (0.0, 2.0)) == pytest.approx(4 * 0.5 / 12)
    assert ncp(penalties, sizes, (0.0, 0.0)) == 0.0
    assert ncp(penalties, sizes, (1.0, 1.0), suppressed_rows=6) == pytest.approx((6 + 12) / 24)


def test_full_domain_ncp_on_samarati_table() -> None:
    table = samarati_table()
    encoded = encode(table, {"race": race_hierarchy(), "zip": zip_hierarchy()})
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=1)], max_suppressed_rows=0)
    attributes = encoded.attributes
    assert generalization_ncp(attributes, (0, 0), evaluator.view((0, 0)), (1, 1), (None, None)) == 0
    assert generalization_ncp(attributes, (1, 2), evaluator.view((1, 2)), (1, 1), (None, None)) == 1
    # ZIP as numbers 94138..94142 at level 1: 9413* spans 1 of 4, 9414* 1 of 4.
    zips = np.array([94138.0, 94139.0, 94141.0, 94142.0])
    assert hierarchy_penalties(attributes[1], 1, zips).tolist() == [0.25, 0.25]
    # As categories, each of the two nodes covers 2 of the 4 codes: (2 - 1) / 3.
    assert hierarchy_penalties(attributes[1], 1, None).tolist() == pytest.approx([1 / 3, 1 / 3])
    numeric = generalization_ncp(attributes, (0, 1), evaluator.view((0, 1)), (1, 1), (None, zips))
    assert numeric == pytest.approx(0.25 / 2)


def test_local_measures_have_the_full_domain_keys_plus_ncp() -> None:
    full = kanonym.anonymize(
        samarati_table(),
        quasi_identifiers={"race": race_hierarchy(), "zip": zip_hierarchy()},
        k=2,
        seed=0,
    )
    local = local_recoding_measures(np.array([2, 3, 4]), k=2, ncp_value=0.5)
    assert set(local) == set(full.metrics) | {"ncp"}
    assert local["dm"] == local["dm-star"] == 29
    assert local["aecs"] == pytest.approx(1.5)
    assert local["completeness"] == 1.0
    assert [key for key, value in local.items() if value is None] == [
        "precision",
        "precision_by_attribute",
        "entropy",
        "loss",
        "non-monotonic-entropy",
        "arx-loss",
        "height",
    ]
