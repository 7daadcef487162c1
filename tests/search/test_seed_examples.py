"""Known answers from Samarati's FOSAD 2008 slides (seed 003), k = 2, MaxSup = 2."""

from __future__ import annotations

import polars as pl
import pytest

from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search


def _evaluator(
    samarati: tuple[pl.DataFrame, dict[str, Hierarchy]], max_sup: int = 2
) -> NodeEvaluator:
    table, hs = samarati
    return NodeEvaluator(encode(table, hs), [KAnonymity(k=2)], max_suppressed_rows=max_sup)


def test_bottom_is_not_2_anonymous_within_maxsup(samarati) -> None:
    bottom = _evaluator(samarati).evaluate((0, 0))
    assert bottom.suppressed_rows == 6
    assert not bottom.satisfied


@pytest.mark.parametrize("node", [(1, 0), (0, 1)])
def test_height_one_nodes_satisfy_with_two_suppressed(samarati, node) -> None:
    evaluation = _evaluator(samarati).evaluate(node)
    assert (evaluation.suppressed_rows, evaluation.satisfied) == (2, True)


@pytest.mark.parametrize("algorithm", ["minimal", "samarati"])
def test_the_2_minimal_generalizations_are_gt10_and_gt01(samarati, algorithm) -> None:
    outcome = run_search(ALGORITHMS[algorithm], _evaluator(samarati), policy="min-suppression")
    assert sorted(e.node for e in outcome.solutions) == [(0, 1), (1, 0)]


@pytest.mark.parametrize(
    ("policy", "preferred"),
    [
        # Relative distance: 0/1 + 1/2 beats 1/1 + 0/2.
        ("min-relative-distance", (0, 1)),
        # Released distinct tuples: GT[0,1] keeps 3 classes, GT[1,0] only 2.
        ("max-distribution", (0, 1)),
        # Both take one step and suppress two tuples: the tie rule (smallest
        # vector lexicographically) decides.
        ("min-absolute-distance", (0, 1)),
        ("min-suppression", (0, 1)),
    ],
)
def test_preference_policies(samarati, policy, preferred) -> None:
    outcome = run_search(ALGORITHMS["minimal"], _evaluator(samarati), policy=policy)
    assert outcome.best.node == preferred


def test_distribution_counts_after_suppression(samarati) -> None:
    evaluator = _evaluator(samarati)
    assert evaluator.evaluate((0, 1)).released_classes == 3
    assert evaluator.evaluate((1, 0)).released_classes == 2


def test_without_suppression_only_higher_nodes_qualify(samarati) -> None:
    outcome = run_search(ALGORITHMS["minimal"], _evaluator(samarati, 0), policy="min-suppression")
    # With MaxSup = 0: [1,1] gives person/9413* (6) and person/9414* (3);
    # [0,2] gives asian (5), black (2), white (2) under 941**; [1,0] and [0,1]
    # each leave single rows, so both height-two nodes are minimal.
    assert sorted(e.node for e in outcome.solutions) == [(0, 2), (1, 1)]
