"""k-map under the searches: the optimum equals brute force, and every release is
k-mapped when counted apart.

A sample (a random small table) is drawn from a population holding its rows
and more; k-map with the population table judges each class by the
population's rows, the estimated form is k-anonymity with a k derived from
the sample's rows. Both are monotone (ARX's ``KMap`` declares (true, true)),
so the pruning searches serve them.
"""

from __future__ import annotations

import itertools
from collections import Counter

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import problems

import kanonym
from kanonym.encode import encode, encode_with_population, group_frame
from kanonym.errors import NoSolutionError
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.metrics import MetricContext, make_metric, score_tolerance
from kanonym.metrics.ranking import best_of
from kanonym.models import KMap
from kanonym.search import ALGORITHMS, run_search
from kanonym.verify.definitions import estimated_k


@st.composite
def samples(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Hierarchy]]:
    """A table, a population holding its rows and up to 20 more, and the hierarchies."""
    table, hs = draw(problems())
    extra = draw(st.integers(0, 20))
    more = pl.DataFrame(
        {
            name: draw(st.lists(st.sampled_from(h.leaves), min_size=extra, max_size=extra))
            for name, h in hs.items()
        },
        schema=dict.fromkeys(hs, pl.String),
    )
    return table, pl.concat([table, more]), hs


@st.composite
def models(draw: st.DrawFn, rows: int) -> KMap:
    """Either form; the estimated one's population at least the sample's ``rows``."""
    k = draw(st.integers(1, 8))
    estimator = draw(st.sampled_from([None, "poisson", "zero-truncated-poisson"]))
    if estimator is None:
        return KMap(k=k)
    return KMap(
        k=k,
        estimator=estimator,
        significance=draw(st.sampled_from([0.01, 0.05, 0.3])),
        population_size=rows + draw(st.integers(0, 200)),
    )


@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
@settings(max_examples=50, deadline=None)
@given(sample=samples(), data=st.data(), max_sup=st.integers(0, 4))
def test_optimal_and_incognito_equal_brute_force(algorithm, sample, data, max_sup) -> None:
    table, population, hs = sample
    model = data.draw(models(table.height))
    encoded = encode(table, hs)
    if model.needs_population:
        grouped, _ = group_frame(population, list(hs))
        encoded = encode_with_population(encoded, grouped, hs)

    def fresh() -> tuple[NodeEvaluator, object]:
        evaluator = NodeEvaluator(encoded, [model], max_suppressed_rows=max_sup)
        context = MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set)
        return evaluator, make_metric("loss", context)

    reference, metric = fresh()
    assert reference.monotone()
    reference.use_metric(metric)
    lattice = Lattice(encoded.heights)
    every = [reference.evaluate(lattice.node(i)) for i in range(lattice.size)]
    expected = best_of([e for e in every if e.satisfied], score_tolerance(metric))
    evaluator, metric = fresh()
    if expected is None:
        with pytest.raises(NoSolutionError):
            run_search(ALGORITHMS[algorithm], evaluator, metric=metric)
        return
    outcome = run_search(ALGORITHMS[algorithm], evaluator, metric=metric)
    assert outcome.best.node == expected.node
    assert outcome.best.satisfied and outcome.proven_optimal


@settings(max_examples=40, deadline=None)
@given(sample=samples(), data=st.data(), fraction=st.sampled_from([0.0, 0.1, 0.3]))
def test_every_release_is_k_mapped_counted_apart(sample, data, fraction) -> None:
    table, population, hs = sample
    model = data.draw(models(table.height))
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=1,
            models=[model],
            population=population if model.needs_population else None,
            max_suppression=fraction,
            seed=0,
        )
    except NoSolutionError:
        return
    names = list(hs)
    assert result.transformation is not None
    if result.table.height == 0:
        return
    rows = result.table.group_by(names).len("rows")
    if model.estimator is None:
        # The population generalized by the release's levels, by the hierarchies' tables.
        generalized = population.select(
            pl.col(n).replace_strict(
                list(hs[n].leaves), list(hs[n].levels[result.transformation[n]])
            )
            for n in names
        )
        people = generalized.group_by(names).len("people")
        joined = rows.join(people, on=names, how="left", nulls_equal=True)
        assert joined["people"].null_count() == 0
        assert joined["people"].min() >= model.k
    else:
        # k' from the table's rows, by the rule written out here once more.
        assert rows["rows"].min() >= model.derived_k(table.height)
        assert model.derived_k(table.height) <= model.k


def _labels(row: tuple[str, ...], hs: dict[str, Hierarchy], node: tuple[int, ...]) -> tuple:
    return tuple(
        h.levels[level][h.leaves.index(value)]
        for value, h, level in zip(row, hs.values(), node, strict=True)
    )


def _failing_rows(
    table: pl.DataFrame, population: pl.DataFrame, hs: dict[str, Hierarchy], node, model: KMap
) -> int:
    """Brute force by counting, nothing from kanonym's encoding or models: the sample rows
    in classes with fewer than k population rows, or fewer rows than the k' the re-check's
    own derivation gives."""
    rows = Counter(_labels(r, hs, node) for r in table.rows())
    if model.estimator is None:
        people = Counter(_labels(r, hs, node) for r in population.rows())
        return sum(n for c, n in rows.items() if people[c] < model.k)
    assert model.population_size is not None
    least = estimated_k(
        model.k, table.height, model.population_size, model.significance, model.estimator
    )
    return sum(n for n in rows.values() if n < least)


@settings(max_examples=60, deadline=None)
@given(
    sample=samples(),
    data=st.data(),
    max_sup=st.integers(0, 4),
    algorithm=st.sampled_from(["optimal", "incognito"]),
)
def test_least_height_equals_brute_force_by_counting(sample, data, max_sup, algorithm) -> None:
    table, population, hs = sample
    model = data.draw(models(table.height))
    nodes = list(itertools.product(*(range(h.height + 1) for h in hs.values())))
    accepted = [n for n in nodes if _failing_rows(table, population, hs, n, model) <= max_sup]
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=1,
            models=[model],
            population=population if model.needs_population else None,
            algorithm=algorithm,
            metric="height",
            max_suppressed_rows=max_sup,
            seed=0,
        )
    except kanonym.NoSolutionError:
        assert not accepted
        return
    chosen = tuple(result.transformation.values())
    assert chosen in accepted
    assert sum(chosen) == min(sum(n) for n in accepted)
    assert table.height - result.table.height == _failing_rows(table, population, hs, chosen, model)
