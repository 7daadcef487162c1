"""Every optimal algorithm's score equals brute force over the whole lattice, for every metric."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.strategies import problems

from kanonym.encode import encode
from kanonym.errors import NoSolutionError
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics import METRICS, MetricContext, make_metric, score_tolerance
from kanonym.metrics.ranking import best_of
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search


def _brute_force(evaluator: NodeEvaluator, lattice: Lattice):
    """The best satisfying node (lowest score, ties to the smallest vector, as
    kanonym.metrics.ranking compares scores), scoring every node of the lattice."""
    evaluations = [evaluator.evaluate(lattice.node(i)) for i in range(lattice.size)]
    feasible = [e for e in evaluations if e.satisfied]
    assert evaluator.metric is not None
    return best_of(feasible, score_tolerance(evaluator.metric))


@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
@pytest.mark.parametrize("metric_name", sorted(METRICS))
@settings(max_examples=60, deadline=None)
@given(problem=problems(), k=st.integers(1, 4), max_sup=st.integers(0, 5))
def test_optimal_equals_brute_force(algorithm, metric_name, problem, k, max_sup) -> None:
    table, hs = problem
    encoded = encode(table, hs)
    lattice = Lattice(encoded.heights)

    def evaluator_with_metric() -> tuple[NodeEvaluator, object]:
        evaluator = NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=max_sup)
        context = MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=k)
        return evaluator, make_metric(metric_name, context)

    reference_evaluator, reference_metric = evaluator_with_metric()
    reference_evaluator.use_metric(reference_metric)
    expected = _brute_force(reference_evaluator, lattice)
    evaluator, metric = evaluator_with_metric()
    if expected is None:
        # Refused only when the brute force of tests.oracle, too, finds no node.
        assert not oracle.satisfying_nodes(table, hs, k, max_sup)
        with pytest.raises(NoSolutionError, match="no generalization satisfies"):
            run_search(ALGORITHMS[algorithm], evaluator, metric=metric)
        return
    outcome = run_search(ALGORITHMS[algorithm], evaluator, metric=metric)
    assert outcome.best.score == pytest.approx(expected.score, rel=1e-12, abs=1e-12)
    assert outcome.best.node == expected.node
    assert outcome.best.satisfied and outcome.best.suppressed_rows <= max_sup
    assert outcome.proven_optimal
