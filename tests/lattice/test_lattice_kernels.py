"""The compiled lattice walks agree with the n-d box views and with the lattice's order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kanonym.lattice import Lattice
from kanonym.lattice.kernels import raise_box, tag_box, upward_path


@st.composite
def lattices_and_nodes(draw: st.DrawFn) -> tuple[Lattice, tuple[int, ...]]:
    heights = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)))
    lower = tuple(draw(st.integers(0, h)) for h in heights)
    node = tuple(draw(st.integers(low, h)) for low, h in zip(lower, heights, strict=True))
    return Lattice(heights, lower), node


@given(lattices_and_nodes(), st.data())
def test_tag_box_and_raise_box_match_the_up_and_down_set_views(
    case: tuple[Lattice, tuple[int, ...]], data: st.DataObject
) -> None:
    lattice, node = case
    values = np.array(
        data.draw(st.lists(st.integers(0, 2), min_size=lattice.size, max_size=lattice.size)),
        dtype=np.int8,
    )
    strides = np.array(lattice.strides, dtype=np.int64)
    offsets = np.subtract(node, lattice.lower)
    for start, extents, box in [
        (lattice.index(node), np.array(lattice.spans) - offsets, lattice.up(node)),
        (0, offsets + 1, lattice.down(node)),
    ]:
        expected = values.copy()
        view = lattice.grid(expected)[box]
        view[view == 0] = 2
        tagged = values.copy()
        tag_box(tagged, start, extents.astype(np.int64), strides, 2)
        assert np.array_equal(tagged, expected)

        bounds = np.arange(lattice.size, dtype=np.float64)
        expected_bounds = bounds.copy()
        view_bounds = lattice.grid(expected_bounds)[box]
        np.maximum(view_bounds, lattice.size / 2, out=view_bounds)
        raise_box(bounds, start, extents.astype(np.int64), strides, lattice.size / 2)
        assert np.array_equal(bounds, expected_bounds)


@given(lattices_and_nodes(), st.data())
def test_upward_path_steps_up_through_unknown_nodes_in_attribute_order(
    case: tuple[Lattice, tuple[int, ...]], data: st.DataObject
) -> None:
    lattice, node = case
    values = np.array(
        data.draw(st.lists(st.integers(0, 1), min_size=lattice.size, max_size=lattice.size)),
        dtype=np.int8,
    )
    start = lattice.index(node)
    values[start] = 0
    indices, levels = upward_path(
        values,
        np.zeros(lattice.size),
        start,
        np.array(lattice.lower, dtype=np.int64),
        np.array(lattice.spans, dtype=np.int64),
        np.array(lattice.strides, dtype=np.int64),
        np.inf,
    )
    path = [tuple(row) for row in levels.tolist()]
    assert path[0] == node
    assert [lattice.index(n) for n in path] == indices.tolist()
    for here, there in itertools.pairwise(path):
        # The first successor that is still unknown, in attribute order.
        unknown = [s for s in lattice.successors(here) if values[lattice.index(s)] == 0]
        assert there == unknown[0]
    assert not any(values[lattice.index(s)] == 0 for s in lattice.successors(path[-1]))
