"""Issue 10, point 5: ties between equally scored nodes go to the smallest distance vector.

Level-based metrics (``height``, ``precision``) are compared exactly, as
rationals with decimal weights, so ``0.1 + 0.2`` ties ``0.3`` and
``2/12 + 2/12 + 1/12 + 1/12`` ties ``3/12 + 3/12``; every exact search
(optimal, its exhaustive fallback, Incognito) then returns the lexicographically
smallest of the tied vectors, as the README promises.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.meaningful import assume_meaningful
from tests.strategies import problems

import kanonym
from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice, Node
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, SearchControl, run_search
from kanonym.search.optimal import _Optimizer

EXACT_SEARCHES = ["optimal", "incognito"]
Problem = tuple[pl.DataFrame, dict[str, Hierarchy]]


def precision_tie() -> Problem:
    """Four rows, four height-3 hierarchies; with k = 2 and no suppression the two
    nodes of lowest precision loss (1/2) are [0, 0, 3, 3] and [2, 2, 1, 1].

    Rows A, C and B, D share the values of ``a`` and ``b`` (x1, x2), which meet at
    level 2; A, B and C, D meet in ``c`` and ``d`` at level 1, A and C only at
    the root. So either ``c`` and ``d`` go to the root (pairs AC, BD), or ``a``
    and ``b`` climb to 2 and ``c`` and ``d`` to 1 (pairs AB, CD).
    """

    def pair(name: str) -> Hierarchy:
        return Hierarchy(name, (("x1", "x2"), ("x1+", "x2+"), ("x*", "x*"), ("*", "*")))

    def group(name: str) -> Hierarchy:
        leaves = ("y1", "y2", "y3", "y4")
        levels = (leaves, ("g1", "g1", "g2", "g2"), ("h1", "h1", "h2", "h2"), ("*",) * 4)
        return Hierarchy(name, levels)

    first, last = ["x1", "x2", "x1", "x2"], ["y1", "y2", "y3", "y4"]
    table = pl.DataFrame({"a": first, "b": first, "c": last, "d": last})
    return table, {"a": pair("a"), "b": pair("b"), "c": group("c"), "d": group("d")}


def height_tie() -> Problem:
    """Four rows, three height-1 hierarchies; with k = 2 and no suppression the
    minimal nodes are [1, 0, 0] (pairs AB, CD share ``b`` and ``c``) and
    [0, 1, 1] (pairs AC, BD share ``a``)."""
    hierarchies = {
        name: Hierarchy(name, ((f"{name}1", f"{name}2"), ("*", "*"))) for name in ("a", "b", "c")
    }
    table = pl.DataFrame(
        {
            "a": ["a1", "a2", "a1", "a2"],
            "b": ["b1", "b1", "b2", "b2"],
            "c": ["c1", "c1", "c2", "c2"],
        }
    )
    return table, hierarchies


@pytest.mark.parametrize("algorithm", EXACT_SEARCHES)
def test_issue10_p5_precision_tie_goes_to_smallest_vector(algorithm: str) -> None:
    """[0, 0, 3, 3] scores 3/12 + 3/12, exactly 0.5 in floats; [2, 2, 1, 1] scores
    2/12 + 2/12 + 1/12 + 1/12, 0.49999999999999994 in floats. Equal scores: the
    lexicographically smaller vector wins."""
    table, hierarchies = precision_tie()
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=2,
        max_suppressed_rows=0,
        algorithm=algorithm,
        metric="precision",
    )
    assert result.transformation == {"a": 0, "b": 0, "c": 3, "d": 3}


@pytest.mark.parametrize("algorithm", EXACT_SEARCHES)
def test_issue10_p5_weighted_height_tie_goes_to_smallest_vector(algorithm: str) -> None:
    """Weights 0.3, 0.1, 0.2: [1, 0, 0] scores 0.3 and [0, 1, 1] scores 0.1 + 0.2,
    0.30000000000000004 in floats but the same decimal. [0, 1, 1] must win."""
    table, hierarchies = height_tie()
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=2,
        max_suppressed_rows=0,
        algorithm=algorithm,
        metric="height",
        weights={"a": 0.3, "b": 0.1, "c": 0.2},
    )
    assert result.transformation == {"a": 0, "b": 1, "c": 1}


@pytest.mark.parametrize("algorithm", EXACT_SEARCHES)
def test_issue10_p5_loss_tie_within_tolerance_goes_to_smallest_vector(algorithm: str) -> None:
    """Loss is a float metric: its scores tie within a relative 1e-12. With weights
    0.7 and 0.7, [1, 0] and [0, 1] both lose exactly half the information, but the
    float sums over their different classes give 0.49999999999999994 and 0.5:
    [0, 1], the smaller vector, must win (the bottom fails k = 2)."""
    hierarchies = {
        name: Hierarchy(name, ((f"{name}0", f"{name}1"), ("*", "*"))) for name in ("a", "b")
    }
    table = pl.DataFrame({"a": ["a0", "a0", "a1", "a1", "a1"], "b": ["b0", "b0", "b0", "b1", "b1"]})
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=2,
        max_suppressed_rows=0,
        algorithm=algorithm,
        metric="loss",
        weights={"a": 0.7, "b": 0.7},
    )
    assert result.transformation == {"a": 0, "b": 1}


def _exact_score(
    metric: str, node: Node, heights: tuple[int, ...], weights: tuple[float, ...]
) -> Fraction:
    """The metric's value as a rational, each weight read as the decimal it prints as."""
    exact = [Fraction(str(w)) for w in weights]
    if metric == "height":
        return sum((w * level for w, level in zip(exact, node, strict=True)), Fraction(0))
    total = sum(exact, Fraction(0))
    if not total:
        return Fraction(0)
    climbed = sum(
        (w * Fraction(level, h) for w, level, h in zip(exact, node, heights, strict=True) if h),
        Fraction(0),
    )
    return climbed / total


# Decimal weights whose float sums round differently (0.1 + 0.2 != 0.3), and 0.
WEIGHTS = st.lists(
    st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 1.0, 1.5]), min_size=4, max_size=4
)


@pytest.mark.parametrize("search", ["optimal", "incognito", "exhaustive"])
@pytest.mark.parametrize("metric_name", ["height", "precision"])
@settings(max_examples=150, deadline=None)
@given(problem=problems(), k=st.integers(1, 4), max_sup=st.integers(0, 3), weights=WEIGHTS)
# The two cases of the issue, so that the property fails on rounding every run;
# random tables hit such a tie at the optimum in about 1 % of examples.
@example(problem=precision_tie(), k=2, max_sup=0, weights=[1.0, 1.0, 1.0, 1.0])
@example(problem=height_tie(), k=2, max_sup=0, weights=[0.3, 0.1, 0.2, 1.0])
def test_issue10_p5_exact_searches_equal_exact_brute_force(
    search: str, metric_name: str, problem: Problem, k: int, max_sup: int, weights: list[float]
) -> None:
    """Every exact search returns the lowest exact score, ties to the smallest vector:
    brute force scores every satisfying node as a rational."""
    table, hs = problem
    encoded = encode(table, hs)
    used = tuple(weights[: len(hs)])
    lattice = Lattice(encoded.heights)
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    nodes = [lattice.node(i) for i in range(lattice.size)]
    feasible = [node for node in nodes if evaluator.evaluate(node).satisfied]
    assume_meaningful(feasible, "no node satisfies")
    expected = min(
        feasible, key=lambda node: (_exact_score(metric_name, node, encoded.heights, used), node)
    )
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    context = MetricContext(
        encoded=encoded, frequency_set=evaluator.frequency_set, k=k, weights=used
    )
    metric = make_metric(metric_name, context)
    if search == "exhaustive":
        # The fallback the optimal search takes for non-monotone models, run directly.
        evaluator.use_metric(metric)
        found = _Optimizer(lattice, evaluator, SearchControl()).run_exhaustive()
        assert [e.node for e in found] == [expected]
    else:
        assert run_search(ALGORITHMS[search], evaluator, metric=metric).best.node == expected
