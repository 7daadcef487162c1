"""The evaluator's sample-based suppression: risk thresholds suppress the smallest kept
classes after the class-based models, ties broken as ARX breaks them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import AverageReidentificationRisk, KAnonymity, SampleUniqueness

# Values in order of first appearance: c, a, d, b (tuples are numbered so).
VALUES = ["c", "a", "a", "d", "b", "e", "e", "e", "e"]
LEAVES = ("a", "b", "c", "d", "e")


def _evaluator(models, max_suppressed: int) -> NodeEvaluator:
    h = Hierarchy("x", (LEAVES, ("ab", "ab", "cd", "cd", "e"), ("*",) * 5))
    encoded = encode(pl.DataFrame({"x": VALUES}), {"x": h})
    return NodeEvaluator(encoded, models, max_suppressed_rows=max_suppressed)


def test_sample_uniqueness_suppresses_uniques_in_order_of_first_appearance() -> None:
    # Classes at level 0: c 1, a 2, d 1, b 1, e 4 (9 rows, 3 uniques). u = 0.2 needs
    # (3 - j) / (9 - j) <= 0.2: j = 2 of the three uniques, the first two to appear.
    evaluator = _evaluator([SampleUniqueness(threshold=0.2)], max_suppressed=3)
    evaluation = evaluator.evaluate((0,))
    assert evaluation.satisfied and evaluation.suppressed_rows == 2
    classes = evaluator.classes((0,))
    kept = classes.satisfied[classes.tuple_class][evaluator.frequency_set.rows()]
    assert [v for v, k in zip(VALUES, kept.tolist(), strict=True) if not k] == ["c", "d"]


def test_the_limit_counts_the_class_based_suppression_too() -> None:
    # k = 2 suppresses the three uniques already; average risk 0.3 then needs no more:
    # 2 classes over 6 rows.
    models = [KAnonymity(k=2), AverageReidentificationRisk(average_risk=0.34)]
    assert _evaluator(models, max_suppressed=3).evaluate((0,)).suppressed_rows == 3
    # Average risk 0.25 needs the class of 2 to go as well (1/4), over a limit of 4.
    models = [KAnonymity(k=2), AverageReidentificationRisk(average_risk=0.25)]
    evaluation = _evaluator(models, max_suppressed=4).evaluate((0,))
    assert evaluation.suppressed_rows == 5 and not evaluation.satisfied


def test_generalization_can_spare_the_suppression() -> None:
    evaluator = _evaluator([SampleUniqueness(threshold=0.01)], max_suppressed=0)
    assert not evaluator.evaluate((0,)).satisfied
    # Level 1: ab 3, cd 2, e 4: no unique.
    assert evaluator.evaluate((1,)).satisfied and evaluator.evaluate((1,)).suppressed_rows == 0


def test_views_and_classes_agree() -> None:
    evaluator = _evaluator([AverageReidentificationRisk(average_risk=0.3)], max_suppressed=9)
    view = evaluator.view((0,))
    classes = evaluator.classes((0,))
    assert view.suppressed_rows == int(classes.sizes[~classes.satisfied].sum())
    assert view.released_classes == int(classes.satisfied.sum())


def test_arx_loss_orders_equal_sizes_by_their_loss() -> None:
    """Two uniques at level 1, B (2 of 6 leaves, first to appear) and A (1 of 6): one
    must go. By first appearance that is B; ARX's Loss takes the smaller loss, A."""
    h = Hierarchy("x", (("a", "b", "c", "d", "e", "f"), ("A", "B", "B", "C", "C", "C"), ("*",) * 6))
    encoded = encode(pl.DataFrame({"x": ["b", "a", "d", "d", "d", "d"]}), {"x": h})

    def suppressed_rows(metric: str | None) -> list[int]:
        evaluator = NodeEvaluator(
            encoded, [SampleUniqueness(threshold=0.25)], max_suppressed_rows=6
        )
        if metric is not None:
            context = MetricContext(encoded, evaluator.frequency_set)
            evaluator.use_metric(make_metric(metric, context))
        classes = evaluator.classes((1,))
        kept = classes.satisfied[classes.tuple_class][evaluator.frequency_set.rows()]
        return [row for row, k in enumerate(kept.tolist()) if not k]

    assert suppressed_rows(None) == [0]
    assert suppressed_rows("non-monotonic-entropy") == [0]
    assert suppressed_rows("arx-loss") == [1]


def test_a_population_size_below_the_rows_is_refused_before_the_search() -> None:
    from kanonym.errors import InputError
    from kanonym.models import PopulationUniqueness

    with pytest.raises(InputError, match="population_size 5 is smaller than the table's 9 rows"):
        _evaluator([PopulationUniqueness(threshold=0.1, estimator="zayatz", population_size=5)], 0)


def test_tie_break_among_equal_sizes_uses_the_class_loss_before_appearance() -> None:
    """Equal sizes and equal Loss: first appearance decides; different Loss: the loss."""
    h = Hierarchy("x", (("a", "b", "c"), ("ab", "ab", "c"), ("*",) * 3))
    context_table = pl.DataFrame({"x": ["c", "a", "b", "b", "c", "a"]})
    encoded = encode(context_table, {"x": h})
    metric = make_metric("arx-loss", MetricContext(encoded, encoded.frequency_set))
    losses = metric.class_losses((0,), np.array([[0], [1], [2]]), np.array([1, 1, 2]))  # type: ignore[attr-defined]
    assert losses[0] == losses[1] < losses[2]
