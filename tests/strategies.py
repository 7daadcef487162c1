"""Hypothesis strategies: random small tables with random valid hierarchies."""

from __future__ import annotations

import polars as pl
from hypothesis import strategies as st

from kanonym.hierarchy import Hierarchy


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
