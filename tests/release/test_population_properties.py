"""Releases of a sample under delta-presence, checked by brute force on small tables.

The population is a random small table; the sample a random subset of its
rows. Every release is judged here by counting, per released class, the
population rows whose values generalize to the class's labels (the
hierarchies' own level tables, nothing from kanonym's encoding). Without
suppression delta-presence is monotone, so the optimal search and Incognito
must find a node of the least height among those brute force accepts.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import polars as pl
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tests.strategies import problems

import kanonym
from kanonym.hierarchy import Hierarchy


def _labels(row: tuple[str, ...], hs: dict[str, Hierarchy], node: tuple[int, ...]) -> tuple:
    return tuple(
        h.levels[level][h.leaves.index(value)]
        for value, h, level in zip(row, hs.values(), node, strict=True)
    )


def _accepts(
    population: pl.DataFrame,
    sample: pl.DataFrame,
    hs: dict[str, Hierarchy],
    node: tuple[int, ...],
    low: Fraction,
    high: Fraction,
) -> bool:
    """Brute force, without suppression: every population class's share is within bounds."""
    people = Counter(_labels(r, hs, node) for r in population.rows())
    chosen = Counter(_labels(r, hs, node) for r in sample.rows())
    return all(low <= Fraction(chosen[c], n) <= high for c, n in people.items())


@st.composite
def samples(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Hierarchy]]:
    population, hs = draw(problems())
    picked = draw(st.lists(st.booleans(), min_size=population.height, max_size=population.height))
    assume(any(picked))
    return population, population.filter(pl.Series(picked)), hs


@settings(max_examples=80, deadline=None)
@given(
    case=samples(),
    low=st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 4)]),
    high=st.sampled_from([Fraction(1, 2), Fraction(3, 4), Fraction(1)]),
    algorithm=st.sampled_from(["optimal", "incognito"]),
)
def test_optimum_without_suppression_equals_brute_force(case, low, high, algorithm) -> None:
    population, sample, hs = case
    nodes = list(itertools.product(*(range(h.height + 1) for h in hs.values())))
    accepted = [n for n in nodes if _accepts(population, sample, hs, n, low, high)]
    try:
        result = kanonym.anonymize(
            sample,
            quasi_identifiers=hs,
            k=1,
            models=[kanonym.DeltaPresence(delta_min=float(low), delta_max=float(high))],
            population=population,
            algorithm=algorithm,
            metric="height",
            seed=0,
        )
    except kanonym.NoSolutionError:
        assert not accepted
        return
    chosen = tuple(result.transformation.values())
    assert chosen in accepted
    assert sum(chosen) == min(sum(n) for n in accepted)
    assert result.table.height == sample.height


@settings(max_examples=80, deadline=None)
@given(
    case=samples(),
    high=st.sampled_from([0.3, 0.5, 0.8]),
    max_sup=st.integers(0, 4),
)
def test_every_released_class_is_delta_present(case, high, max_sup) -> None:
    """With suppression too: counted apart, each released class's share is at most high."""
    population, sample, hs = case
    try:
        result = kanonym.anonymize(
            sample,
            quasi_identifiers=hs,
            k=1,
            models=[kanonym.DeltaPresence(delta_min=0.0, delta_max=high)],
            population=population,
            max_suppressed_rows=max_sup,
            seed=0,
        )
    except kanonym.NoSolutionError:
        # Brute force agrees: at every node the classes above the bound hold too many rows.
        for node in itertools.product(*(range(h.height + 1) for h in hs.values())):
            people = Counter(_labels(r, hs, node) for r in population.rows())
            chosen = Counter(_labels(r, hs, node) for r in sample.rows())
            over = sum(n for c, n in chosen.items() if Fraction(n, people[c]) > Fraction(high))
            assert over > max_sup
        return
    node = tuple(result.transformation.values())
    people = Counter(_labels(r, hs, node) for r in population.rows())
    released = Counter(tuple(r) for r in result.table.select(list(hs)).rows())
    assert sample.height - result.table.height <= max_sup
    for labels, rows in released.items():
        assert Fraction(rows, people[labels]) <= Fraction(high).limit_denominator(10**6)
