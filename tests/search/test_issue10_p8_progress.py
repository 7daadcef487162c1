"""Issue 10, point 8: the searches report progress with totals that mean something."""

from __future__ import annotations

from tests.patients import patients

from kanonym.config import AnonymizationConfig, SuppressionLimit
from kanonym.encode import encode
from kanonym.engine import EmbeddedEngine
from kanonym.evaluation import NodeEvaluator
from kanonym.io import load
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import EntropyLDiversity
from kanonym.release.steps import build_evaluator, declare
from kanonym.search import Progress, SearchControl, run_search
from kanonym.search.optimal import OptimalSearch


def _entropy_problem() -> NodeEvaluator:
    """A 2,000-row patient table under entropy l-diversity with suppression: not
    monotone, so the optimal search falls back to its exhaustive walk."""
    table = load(patients(2000))
    config = AnonymizationConfig(
        quasi_identifiers={
            "birth_date": "date",
            "sex": "suppress",
            "zip": "mask",
            "length_of_stay": "interval:5,10",
        },
        k=5,
        identifying=("name", "ssn"),
        sensitive=("diagnosis",),
        insensitive=("admission_date",),
        models=(EntropyLDiversity(attribute="diagnosis", l=2),),
        suppression=SuppressionLimit(fraction=0.04),
    )
    engine = EmbeddedEngine(table)
    encoded = encode(table.frame, declare(engine, config))
    return build_evaluator(engine, config, encoded, config.suppression.max_rows(2000))


def test_issue10_p8_exhaustive_search_reports_progress() -> None:
    evaluator = _entropy_problem()
    assert not evaluator.proxy_monotone()  # the exhaustive walk, run_exhaustive
    metric = make_metric(
        "loss", MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set)
    )
    seen: list[Progress] = []
    control = SearchControl(on_progress=seen.append)
    control.interval = 0.0  # every report, for the test
    outcome = run_search(OptimalSearch(), evaluator, metric=metric, control=control)
    assert len(seen) > 1 and all(p.stage == "searching" for p in seen)
    size = seen[0].lattice_size
    # The total counts the nodes checked and those their bound still leaves to
    # check: it starts at the lattice's size and shrinks once a best score rules
    # nodes out, ending near the nodes actually checked.
    assert all(p.total is not None and p.done == p.checked <= p.total <= size for p in seen)
    assert seen[-1].total is not None and seen[-1].total < size
    assert seen[-1].total <= 2 * outcome.nodes_checked
    assert [p.checked for p in seen] == sorted(p.checked for p in seen)
    assert seen[-1].best_score is not None


def test_issue10_p8_pruning_search_reports_no_total_but_undecided_nodes() -> None:
    # Without a model that breaks monotonicity the search prunes: it cannot
    # know how many nodes it will check, so it gives no total, and counts the
    # nodes still undecided, which only shrinks.
    table = load(patients(2000))
    config = AnonymizationConfig(
        quasi_identifiers={"birth_date": "date", "sex": "suppress", "zip": "mask"},
        k=5,
        keep_unlisted=True,
        suppression=SuppressionLimit(fraction=0.04),
    )
    engine = EmbeddedEngine(table)
    encoded = encode(table.frame, declare(engine, config))
    evaluator = build_evaluator(engine, config, encoded, config.suppression.max_rows(2000))
    metric = make_metric(
        "dm-star", MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=5)
    )
    seen: list[Progress] = []
    control = SearchControl(on_progress=seen.append)
    control.interval = 0.0  # every report, for the test
    run_search(OptimalSearch(), evaluator, metric=metric, control=control)
    assert seen and all(p.total is None for p in seen)
    undecided = [p.unresolved for p in seen]
    assert all(u is not None for u in undecided)
    assert undecided == sorted(undecided, reverse=True)  # type: ignore[type-var]


def test_issue10_p8_reports_are_throttled_in_time() -> None:
    evaluator = _entropy_problem()
    metric = make_metric(
        "loss", MetricContext(encoded=evaluator.encoded, frequency_set=evaluator.frequency_set)
    )
    seen: list[Progress] = []
    # One report at the start, then none within the hour.
    control = SearchControl(on_progress=seen.append)
    control.interval = 3600.0
    run_search(OptimalSearch(), evaluator, metric=metric, control=control)
    assert len(seen) == 1
