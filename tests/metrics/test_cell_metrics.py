"""Metrics of cell-suppressed releases equal their definitions, recomputed from the table."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems_with_k

import kanonym
from kanonym.encode import encode
from kanonym.hierarchy import Hierarchy
from kanonym.metrics import Height, Loss, MetricContext
from kanonym.metrics.cells import CellView, cell_score, precision_by_attribute


def _counts(values: list) -> dict:
    found: dict = {}
    for v in values:
        found[v] = found.get(v, 0) + 1
    return found


def _recomputed(source: pl.DataFrame, result: kanonym.Result, hs: dict[str, Hierarchy]) -> dict:
    """loss, 1 - precision, entropy, DM* and C_AVG straight from the released table."""
    released, n, k = result.table, source.height, result.config.k
    loss = precision_loss = entropy = 0.0
    for name, h in hs.items():
        level, root = result.transformation[name], h.levels[-1][0]
        to_label = dict(zip(h.levels[0], h.levels[level], strict=True))
        present = source[name].to_list()
        leaves = set(present)
        under = _counts([to_label[v] for v in leaves])
        generalized = _counts([to_label[v] for v in present])
        distinct = len(leaves)
        for shown in released[name].to_list():
            # A blanked cell shows the root, which covers every value: LM cost 1.
            covered = distinct if shown == root else under[shown]
            loss += (covered - 1) / (distinct - 1) if distinct > 1 else 0.0
            climbed = 1.0 if shown == root else level / h.height if h.height else 0.0
            precision_loss += climbed
            entropy += math.log2(n if shown == root else generalized[shown])
        entropy -= sum(math.log2(c) * c for c in _counts(present).values())
    sizes = released.group_by(list(hs)).len()["len"].to_list()
    return {
        "loss": loss / (n * len(hs)),
        "precision": 1 - precision_loss / (n * len(hs)),
        "entropy": entropy,
        "dm-star": sum(s * s for s in sizes),
        "dm": sum(s * s for s in sizes),
        "aecs": n / len(sizes) / k,
    }


@settings(max_examples=60, deadline=None)
@given(problems_with_k(max_k=4), st.sampled_from(["AG_CS", "_CS"]))
def test_reported_metrics_match_the_released_table(problem, technique) -> None:
    table, hs, k = problem
    result = kanonym.anonymize(
        table, quasi_identifiers=hs, k=k, technique=technique, max_suppression=1.0, seed=0
    )
    expected = _recomputed(table, result, hs)
    for name, value in expected.items():
        assert result.metrics[name] == pytest.approx(value, abs=1e-9), name


def test_loss_charges_a_blanked_cell_one() -> None:
    h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*",) * 3))
    encoded = encode(pl.DataFrame({"x": ["a", "b", "c", "c"]}), {"x": h})
    context = MetricContext(encoded=encoded, frequency_set=encoded.frequency_set)
    # At level 1: "ab" (2 rows, loss 1/2 each) and "c" (2 rows, loss 0), one "c" blanked.
    view = CellView(
        sizes=np.array([2, 1, 1]),
        codes=np.array([[0], [1], [1]]),
        blanked=np.array([[False], [False], [True]]),
        released_sizes=np.array([2, 1, 1]),
    )
    assert cell_score(Loss(context), (1,), view) == pytest.approx((0.5 + 0.5 + 0 + 1) / 4)
    assert cell_score(Height(context), (1,), view) == 1.0
    assert precision_by_attribute((1,), (2,), ("x",), view) == {"x": pytest.approx(1 - 2.5 / 4)}
