"""Every reported measure on Samarati's example, GT[0,1] with k=2 and MaxSup=2.

GT[0,1] keeps race and generalizes ZIP one step: classes asian/9414* (2 rows),
asian/9413* (3), black/9413* (2), white/9413* (1), white/9414* (1); the two
singleton classes are suppressed, so 7 of 9 rows are released.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kanonym.encode import encode
from kanonym.metrics import (
    METRICS,
    ClassView,
    MetricContext,
    completeness,
    make_metric,
    precision_by_attribute,
    report_measures,
)

NODE = (0, 1)
SIZES = np.array([2, 3, 2, 1, 1])
KEPT = SIZES >= 2


@pytest.fixture
def context(samarati) -> MetricContext:
    table, hs = samarati
    encoded = encode(table, hs)
    return MetricContext(encoded=encoded, frequency_set=encoded.frequency_set, k=2)


def _view(context: MetricContext) -> ClassView:
    # Codes of the five classes at GT[0,1]: race (asian 0, black 1, white 2), ZIP
    # at level 1 (9413* 0, 9414* 1), in the order of SIZES.
    codes = np.array([[0, 1], [0, 0], [1, 0], [2, 0], [2, 1]])
    return ClassView(SIZES, KEPT, lambda: codes)


def test_known_values(context) -> None:
    view = _view(context)
    scores = {name: make_metric(name, context).score(NODE, view) for name in METRICS}
    assert scores["dm-star"] == 4 + 9 + 4 + 1 + 1
    assert scores["dm"] == 4 + 9 + 4 + 2 * 9
    # ZIP counts 94138:1, 94139:5, 94141:2, 94142:1; 9413*: 6, 9414*: 3; race unchanged.
    entropy = math.log2(6) + 5 * math.log2(6 / 5) + 2 * math.log2(3 / 2) + math.log2(3)
    assert scores["entropy"] == pytest.approx(entropy)
    # 7 released ZIP cells cover 2 of 4 values: (2-1)/(4-1) each; 2 rows x 2 cells suppressed.
    assert scores["loss"] == pytest.approx((7 / 3 + 4) / 18)
    assert scores["precision"] == pytest.approx(0.25)  # 1 - precision, (0/1 + 1/2) / 2
    assert scores["aecs"] == pytest.approx(7 / 3 / 2)
    assert scores["height"] == 1


def test_node_bounds_bound_scores_and_are_monotone(context) -> None:
    from kanonym.lattice import Lattice

    lattice = Lattice(context.encoded.heights)
    view = _view(context)
    for name in METRICS:
        metric = make_metric(name, context)
        bounds = metric.node_bounds(lattice.levels)
        if bounds is None:
            continue
        assert bounds[lattice.index(NODE)] <= metric.score(NODE, view) + 1e-12
        for i in range(lattice.size):
            for successor in lattice.successors(lattice.node(i)):
                assert bounds[lattice.index(successor)] >= bounds[i] - 1e-12


def test_weights_scale_the_additive_metrics(samarati) -> None:
    table, hs = samarati
    encoded = encode(table, hs)
    fs = encoded.frequency_set
    plain = MetricContext(encoded=encoded, frequency_set=fs, k=2)
    zip_only = MetricContext(encoded=encoded, frequency_set=fs, k=2, weights=(0.0, 1.0))
    view = _view(plain)
    assert make_metric("height", zip_only).score((1, 1), view) == 1
    assert make_metric("precision", zip_only).score(NODE, view) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        MetricContext(encoded=encoded, frequency_set=fs, weights=(1.0,))


def test_report_measures() -> None:
    assert precision_by_attribute((1, 1), (2, 0), ("a", "b")) == {"a": 0.5, "b": 1.0}
    assert completeness(2, 9) == pytest.approx(7 / 9)
    measures = report_measures(
        node=NODE,
        heights=(1, 2),
        names=("race", "zip"),
        released_sizes=SIZES[KEPT],
        suppressed_rows=2,
    )
    assert measures == {
        "precision_by_attribute": {"race": 1.0, "zip": 0.5},
        "completeness": pytest.approx(7 / 9),
        "equivalence_classes": 3,
    }


def test_level_metrics_bound_every_node_by_exactly_its_score() -> None:
    """A node bound one rounding step above the score would let the optimal search
    prune an optimum tied with the incumbent: for metrics that depend on the levels
    alone, bound and score must be the same float (hypothesis once found precision
    0.3888888888888889 against 0.38888888888888884 on this lattice)."""
    import polars as pl

    from kanonym.hierarchy import Hierarchy
    from kanonym.lattice import Lattice

    hs = {
        "q0": Hierarchy("q0", (("a", "b", "c"), ("ab", "c", "ab"), ("*",) * 3)),
        "q1": Hierarchy("q1", (("d", "e", "f"), ("de", "de", "f"), ("x",) * 3, ("*",) * 3)),
        "q2": Hierarchy("q2", (("g", "h"), ("gh",) * 2, ("y",) * 2, ("*",) * 2)),
    }
    encoded = encode(pl.DataFrame({"q0": ["a"] * 3, "q1": ["d"] * 3, "q2": ["g"] * 3}), hs)
    lattice = Lattice(encoded.heights)
    for weights in ((1.0, 1.0, 1.0), (0.3, 1.7, 0.1)):
        context = MetricContext(
            encoded=encoded,
            frequency_set=encoded.frequency_set,
            weights=weights,
        )
        for name in ("precision", "height", "entropy"):
            metric = make_metric(name, context)
            bounds = metric.node_bounds(lattice.levels)
            assert bounds is not None
            view = ClassView(np.array([3]), np.array([True]), lambda: np.zeros((1, 3), np.int64))
            for i in range(lattice.size):
                assert bounds[i] == metric.score(lattice.node(i), view), (name, i)
