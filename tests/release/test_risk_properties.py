"""Every release under a risk threshold meets it, as ``kanonym.risk`` measures the release;
the monotone thresholds give the same optimum under optimal and Incognito as brute force."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests.meaningful import assume_meaningful
from tests.strategies import problems

import kanonym
from kanonym.attacks.population import population_uniqueness
from kanonym.encode import encode
from kanonym.errors import NoSolutionError
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics import MetricContext, make_metric, score_tolerance
from kanonym.metrics.ranking import best_of
from kanonym.models import PrivacyModel
from kanonym.search import ALGORITHMS, run_search

MODELS = st.one_of(
    st.sampled_from([0.2, 0.34, 0.5, 1.0]).map(
        lambda r: kanonym.AverageReidentificationRisk(average_risk=r)
    ),
    st.sampled_from([0.05, 0.2, 0.5]).map(lambda u: kanonym.SampleUniqueness(threshold=u)),
    st.tuples(
        st.sampled_from([0.05, 0.3, 0.9]),
        st.sampled_from(["dankar", "pitman", "zayatz", "snb"]),
        st.integers(30, 400),
    ).map(
        lambda p: kanonym.PopulationUniqueness(threshold=p[0], estimator=p[1], population_size=p[2])
    ),
)


def _meets(model: PrivacyModel, summary: kanonym.RiskSummary) -> bool:
    """The threshold, measured from ``kanonym.risk``'s counts of the released classes."""
    uniques = summary.class_sizes.get(1, 0)
    if isinstance(model, kanonym.AverageReidentificationRisk):
        return summary.classes / summary.rows <= model.average_risk * (1 + 1e-12)
    if isinstance(model, kanonym.SampleUniqueness):
        return uniques / summary.rows <= model.threshold * (1 + 1e-12)
    assert isinstance(model, kanonym.PopulationUniqueness)
    assert model.population_size is not None
    share = population_uniqueness(dict(summary.class_sizes), model.population_size, model.estimator)
    if share is None:
        return False
    return (0 < share <= model.threshold * (1 + 1e-12)) or (share == 0 and uniques == 0)


@settings(max_examples=80, deadline=None)
@given(
    problem=problems(),
    model=MODELS,
    k=st.integers(1, 2),
    max_sup=st.integers(0, 6),
    metric=st.sampled_from(["loss", "arx-loss", "non-monotonic-entropy", "dm-star"]),
)
def test_every_release_meets_its_risk_threshold(problem, model, k, max_sup, metric) -> None:
    table, hs = problem
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=min(k, table.height),
            models=[model],
            metric=metric,
            max_suppression=min(max_sup, table.height) / table.height,
            seed=1,
        )
    except NoSolutionError:
        event("refused")
        return
    assume_meaningful(result.table.height > 0, "every row suppressed")
    summary = kanonym.risk(result.table, list(hs))
    assert _meets(model, summary)
    assert result.suppressed_rows <= min(max_sup, table.height)
    (described,) = [m for m in result.report()["models"] if m["model"] == model.name]
    assert described["reached"] is None or described["reached"] >= 0


def _brute_force(evaluator: NodeEvaluator, lattice: Lattice):
    evaluations = [evaluator.evaluate(lattice.node(i)) for i in range(lattice.size)]
    assert evaluator.metric is not None
    return best_of([e for e in evaluations if e.satisfied], score_tolerance(evaluator.metric))


MONOTONE = st.one_of(
    st.sampled_from([0.2, 0.34, 0.5, 1.0]).map(
        lambda r: kanonym.AverageReidentificationRisk(average_risk=r)
    ),
    st.sampled_from([0.05, 0.2, 0.5]).map(lambda u: kanonym.SampleUniqueness(threshold=u)),
)


@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
@settings(max_examples=80, deadline=None)
@given(
    problem=problems(),
    model=MONOTONE,
    max_sup=st.integers(0, 5),
    metric_name=st.sampled_from(["loss", "arx-loss", "entropy", "dm-star", "height"]),
)
def test_monotone_thresholds_optimum_equals_brute_force(
    algorithm, problem, model, max_sup, metric_name
) -> None:
    table, hs = problem
    encoded = encode(table, hs)
    lattice = Lattice(encoded.heights)

    def evaluator_with_metric():
        evaluator = NodeEvaluator(encoded, [model], max_suppressed_rows=max_sup)
        context = MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set)
        return evaluator, make_metric(metric_name, context)

    reference, reference_metric = evaluator_with_metric()
    reference.use_metric(reference_metric)
    expected = _brute_force(reference, lattice)
    evaluator, metric = evaluator_with_metric()
    if expected is None:
        with pytest.raises(NoSolutionError):
            run_search(ALGORITHMS[algorithm], evaluator, metric=metric)
        return
    outcome = run_search(ALGORITHMS[algorithm], evaluator, metric=metric)
    assert outcome.best.node == expected.node
    assert outcome.best.score == pytest.approx(expected.score, rel=1e-12, abs=1e-12)
