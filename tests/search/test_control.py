"""Time limits and progress reports of the optimizing searches."""

from __future__ import annotations

import pytest

from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.encode import encode
from kanonym.errors import SearchTimeoutError
from kanonym.evaluation import NodeEvaluator
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, Progress, SearchControl, run_search


class _StopAfter(SearchControl):
    """A deadline that passes after a given number of questions, for determinism."""

    def __init__(self, questions: int) -> None:
        super().__init__()
        self.left = questions

    def expired(self) -> bool:
        self.left -= 1
        if self.left < 0:
            self.timed_out = True
        return self.timed_out


@pytest.fixture(scope="module")
def adult_problem():
    encoded = encode(load_adult(), adult_hierarchies())
    return encoded


def _run(encoded, control: SearchControl, algorithm: str = "optimal"):
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=5)], max_suppressed_rows=1206)
    metric = make_metric(
        "dm-star", MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=5)
    )
    return run_search(ALGORITHMS[algorithm], evaluator, metric=metric, control=control)


@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
def test_stopping_early_returns_a_solution_not_proven_optimal(adult_problem, algorithm) -> None:
    complete = _run(adult_problem, SearchControl(), algorithm)
    partial = _run(adult_problem, _StopAfter(40), algorithm)
    assert complete.proven_optimal and not partial.proven_optimal
    assert partial.best.satisfied
    assert partial.best.score >= complete.best.score
    assert partial.nodes_checked < complete.nodes_checked


def test_a_deadline_before_any_solution_is_an_error(adult_problem) -> None:
    with pytest.raises(SearchTimeoutError, match="time limit"):
        _run(adult_problem, SearchControl(deadline=0.0))


def test_progress_is_reported(adult_problem) -> None:
    seen: list[Progress] = []
    _run(adult_problem, SearchControl(on_progress=seen.append))
    assert seen and all(p.lattice_size == 12960 for p in seen)
    assert [p.checked for p in seen] == sorted(p.checked for p in seen)
