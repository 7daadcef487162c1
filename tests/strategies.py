"""Shared test helpers: hypothesis strategies for random small tables with random
valid hierarchies, and ready-made search set-ups."""

from __future__ import annotations

import random

import polars as pl
from hypothesis import strategies as st

from kanonym.encode import EncodedTable, encode
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.metrics import MetricContext, UtilityMetric, make_metric
from kanonym.models import KAnonymity


@st.composite
def hierarchies(draw: st.DrawFn, name: str, max_leaves: int = 5) -> Hierarchy:
    """A random hierarchy: each level groups the values of the one below, ending in '*'."""
    n_leaves = draw(st.integers(1, max_leaves))
    leaves = tuple(f"{name}{i}" for i in range(n_leaves))
    levels = [leaves]
    groups = list(range(n_leaves))
    height = draw(st.integers(1, 3))
    for level in range(1, height):
        # Map each group of the previous level to a parent group: a function by construction.
        parents = draw(
            st.lists(st.integers(0, 2), min_size=max(groups) + 1, max_size=max(groups) + 1)
        )
        groups = [parents[g] for g in groups]
        levels.append(tuple(f"{name}L{level}g{g}" for g in groups))
    levels.append(("*",) * n_leaves)
    return Hierarchy(name, tuple(levels))


@st.composite
def problems(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """A table of 1..30 rows over 1..3 quasi-identifiers with hierarchies covering it."""
    n_qi = draw(st.integers(1, 3))
    hs = {f"q{j}": draw(hierarchies(f"q{j}")) for j in range(n_qi)}
    n_rows = draw(st.integers(1, 30))
    columns = {
        name: draw(st.lists(st.sampled_from(h.leaves), min_size=n_rows, max_size=n_rows))
        for name, h in hs.items()
    }
    return pl.DataFrame(columns, schema=dict.fromkeys(hs, pl.String)), hs


@st.composite
def problems_with_k(draw: st.DrawFn, max_k: int) -> tuple[pl.DataFrame, dict[str, Hierarchy], int]:
    """A problem (:func:`problems`) and a k from 1 to ``max_k`` that its rows can meet.

    A k above the row count is refused before any search (``kanonym.anonymize``
    says so), so tests of what a release does draw k within the table.
    """
    table, hs = draw(problems())
    return table, hs, draw(st.integers(1, min(max_k, table.height)))


def search_setup(
    table: pl.DataFrame, hs: dict[str, Hierarchy], k: int, max_sup: int, metric: str = "loss"
) -> tuple[EncodedTable, NodeEvaluator, UtilityMetric]:
    """Encoded table, a k-anonymity evaluator and a metric, as the searches take them."""
    encoded = encode(table, hs)
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=max_sup)
    context = MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=k)
    return encoded, evaluator, make_metric(metric, context)


def huge_lattice_table() -> tuple[pl.DataFrame, dict[str, str]]:
    """200 rows of 16 five-digit codes, each masked digit by digit: 6**16 (about 2.8e12) nodes."""
    rng = random.Random(7)
    columns = {f"q{j}": [f"{rng.randrange(10**5):05d}" for _ in range(200)] for j in range(16)}
    return pl.DataFrame(columns), dict.fromkeys(columns, "mask")
