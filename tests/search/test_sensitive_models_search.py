"""Optimal search with sensitive-attribute models equals brute force.

Monotone combinations use the pruning search; the others (l-diversity,
t-closeness, beta-likeness, delta-disclosure with suppression) its exhaustive
fallback. Class histograms reach the models through roll-ups, so this also
checks that histograms add up correctly from any specialization.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.strategies import problems

from kanonym.encode import encode, encode_sensitive
from kanonym.errors import InputError, NoSolutionError
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics import MetricContext, make_metric, score_tolerance
from kanonym.metrics.ranking import best_of
from kanonym.models import (
    BasicBetaLikeness,
    DeltaDisclosurePrivacy,
    DistinctLDiversity,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
    RecursiveCLDiversity,
)
from kanonym.search import ALGORITHMS, run_search

# Each model with its spec for the brute force of tests.oracle.
MODELS = [
    (DistinctLDiversity(l=2, attribute="s"), "l-diversity:distinct:2:s"),
    (EntropyLDiversity(l=1.5, attribute="s"), "l-diversity:entropy:1.5:s"),
    (RecursiveCLDiversity(c=2.0, l=2, attribute="s"), "l-diversity:recursive:2:2:s"),
    (EqualDistanceTCloseness(t=0.4, attribute="s"), "t-closeness:equal:0.4:s"),
    (OrderedDistanceTCloseness(t=0.4, attribute="s"), "t-closeness:ordered:0.4:s"),
    (BasicBetaLikeness(beta=2.0, attribute="s"), "beta-likeness:basic:2:s"),
    (DeltaDisclosurePrivacy(delta=1.5, attribute="s"), "delta-disclosure:1.5:s"),
]


@pytest.mark.parametrize(("model", "spec"), MODELS, ids=[type(m).__name__ for m, _ in MODELS])
@settings(max_examples=40, deadline=None)
@given(
    problem=problems(),
    sensitive=st.data(),
    max_sup=st.integers(0, 4),
    metric_name=st.sampled_from(["dm-star", "loss"]),
)
def test_optimal_with_sensitive_models_equals_brute_force(
    model, spec, problem, sensitive, max_sup, metric_name
) -> None:
    table, hs = problem
    values = sensitive.draw(
        st.lists(st.sampled_from(["1", "2", "3"]), min_size=table.height, max_size=table.height)
    )
    table = table.with_columns(pl.Series("s", values))
    encoded = encode(table, hs)
    attributes = encode_sensitive(table, ["s"])
    models = [KAnonymity(k=2), model]

    def fresh() -> tuple[NodeEvaluator, object]:
        evaluator = NodeEvaluator(
            encoded, models, max_suppressed_rows=max_sup, sensitive=attributes
        )
        context = MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=2)
        return evaluator, make_metric(metric_name, context)

    reference, metric = fresh()
    reference.use_metric(metric)
    lattice = Lattice(encoded.heights)
    feasible = [
        e for e in (reference.evaluate(lattice.node(i)) for i in range(lattice.size)) if e.satisfied
    ]
    evaluator, metric = fresh()
    if not feasible:
        # Refused only when the brute force of tests.oracle, too, finds no node.
        assert not oracle.satisfying_nodes(table, hs, 2, max_sup, models=[oracle.Model(spec)])
        with pytest.raises(NoSolutionError, match="no generalization satisfies"):
            run_search(ALGORITHMS["optimal"], evaluator, metric=metric)
        return
    expected = best_of(feasible, score_tolerance(metric))
    assert expected is not None
    outcome = run_search(ALGORITHMS["optimal"], evaluator, metric=metric)
    assert outcome.best.node == expected.node


def test_non_monotone_models_are_rejected_by_searches_that_assume_monotonicity(samarati) -> None:
    table, hs = samarati
    table = table.with_columns(pl.Series("s", ["a", "b"] * 4 + ["a"]))
    evaluator = NodeEvaluator(
        encode(table, hs),
        [EqualDistanceTCloseness(t=0.2, attribute="s")],
        max_suppressed_rows=2,
        sensitive=encode_sensitive(table, ["s"]),
    )
    with pytest.raises(InputError, match="not monotone"):
        run_search(ALGORITHMS["minimal"], evaluator, policy="min-suppression")


def test_models_need_their_sensitive_attribute_encoded(samarati) -> None:
    table, hs = samarati
    with pytest.raises(InputError, match="needs sensitive attribute"):
        NodeEvaluator(
            encode(table, hs), [DistinctLDiversity(l=2, attribute="s")], max_suppressed_rows=0
        )
