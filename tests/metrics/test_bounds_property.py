"""A node bound must never exceed the node's own score beyond the prune limit.

The optimal search drops a node whose bound lies above ``prune_limit`` of the
lowest score seen; a bound one rounding step too high there prunes an optimum
tied with the incumbent (hypothesis found arx-loss choosing (2,2,0) over the
tied (1,2,0): its bound, a dot product floored at 10 decimals, crossed a
1e-10 step that the score's class sum did not).
"""

from __future__ import annotations

from hypothesis import given, settings
from tests.strategies import problems

from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics import METRICS, MetricContext, make_metric
from kanonym.metrics.ranking import prune_limit
from kanonym.models import KAnonymity


@settings(max_examples=150, deadline=None)
@given(problem=problems())
def test_bounds_never_exceed_the_score_with_every_row_kept(problem) -> None:
    table, hs = problem
    encoded = encode(table, hs)
    lattice = Lattice(encoded.heights)
    for name in sorted(METRICS):
        # k=1 keeps every row, where a bound may equal the score.
        evaluator = NodeEvaluator(encoded, [KAnonymity(k=1)], max_suppressed_rows=0)
        context = MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=1)
        metric = make_metric(name, context)
        evaluator.use_metric(metric)
        bounds = metric.node_bounds(lattice.levels)
        if bounds is None:
            continue
        for i in range(lattice.size):
            evaluation = evaluator.evaluate(lattice.node(i))
            assert evaluation.score is not None
            assert bounds[i] <= prune_limit(evaluation.score), (name, evaluation.node)
