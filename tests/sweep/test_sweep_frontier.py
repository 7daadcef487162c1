"""The Pareto frontier: no point on it is dominated; every point off it is dominated by one."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from tests.meaningful import assume_meaningful

from kanonym.sweep.frontier import dominates, on_frontier

# Few distinct values, so that ties on one axis or both are drawn often.
values = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0])
pairs = st.lists(st.tuples(values, values), min_size=1, max_size=30)


def _dominated_by(p: tuple[float, float], q: tuple[float, float]) -> bool:
    """Whether q dominates p, written out (independent of the vectorized code)."""
    return q[0] <= p[0] and q[1] <= p[1] and (q[0] < p[0] or q[1] < p[1])


@given(pairs)
def test_no_frontier_point_is_dominated(points: list[tuple[float, float]]) -> None:
    marked = on_frontier(np.array([p[0] for p in points]), np.array([p[1] for p in points]))
    for p, on in zip(points, marked, strict=True):
        if on:
            assert not any(_dominated_by(p, q) for q in points)


@given(pairs)
def test_every_point_off_the_frontier_is_dominated_by_a_frontier_point(
    points: list[tuple[float, float]],
) -> None:
    marked = on_frontier(np.array([p[0] for p in points]), np.array([p[1] for p in points]))
    assume_meaningful(not marked.all(), "every point on the frontier")
    frontier = [p for p, on in zip(points, marked, strict=True) if on]
    for p, on in zip(points, marked, strict=True):
        if not on:
            assert any(_dominated_by(p, q) for q in frontier)


def test_equal_points_do_not_dominate_each_other() -> None:
    loss, risk = np.array([0.5, 0.5, 0.6]), np.array([0.1, 0.1, 0.1])
    assert on_frontier(loss, risk).tolist() == [True, True, False]
    assert not dominates(loss, risk)[0, 1]
