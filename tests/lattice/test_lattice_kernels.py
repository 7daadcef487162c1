"""The compiled lattice walks: boxes cover exactly the up- and down-sets; paths go up in order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.lattice import Lattice
from kanonym.lattice.kernels import raise_box, tag_box, upward_path


@st.composite
def lattices_and_nodes(draw: st.DrawFn) -> tuple[Lattice, tuple[int, ...]]:
    heights = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)))
    lower = tuple(draw(st.integers(0, h)) for h in heights)
    node = tuple(draw(st.integers(low, h)) for low, h in zip(lower, heights, strict=True))
    return Lattice(heights, lower), node


# No deadline: the first example pays the kernels' compilation on a fresh clone.
@settings(deadline=None)
@given(lattices_and_nodes(), st.data())
def test_tag_box_and_raise_box_cover_exactly_the_up_and_down_sets(
    case: tuple[Lattice, tuple[int, ...]], data: st.DataObject
) -> None:
    lattice, node = case
    values = np.array(
        data.draw(st.lists(st.integers(0, 2), min_size=lattice.size, max_size=lattice.size)),
        dtype=np.int8,
    )
    strides = lattice.arrays[2]
    levels = lattice.levels
    up_set = (levels >= np.array(node)).all(axis=1)
    down_set = (levels <= np.array(node)).all(axis=1)
    for (start, extents), in_box in [
        (lattice.up_box(node), up_set),
        (lattice.down_box(node), down_set),
    ]:
        expected = values.copy()
        expected[in_box & (values == 0)] = 2
        tagged = values.copy()
        tag_box(tagged, start, extents, strides, 2)
        assert np.array_equal(tagged, expected)

        bounds = np.arange(lattice.size, dtype=np.float64)
        expected_bounds = np.where(in_box, np.maximum(bounds, lattice.size / 2), bounds)
        raise_box(bounds, start, extents, strides, lattice.size / 2)
        assert np.array_equal(bounds, expected_bounds)


# No deadline: the first example pays the kernels' compilation on a fresh clone.
@settings(deadline=None)
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
    indices, levels = upward_path(values, np.zeros(lattice.size), start, *lattice.arrays, np.inf)
    path = [tuple(row) for row in levels.tolist()]
    assert path[0] == node
    assert [lattice.index(n) for n in path] == indices.tolist()
    for here, there in itertools.pairwise(path):
        # The first successor that is still unknown, in attribute order.
        unknown = [s for s in lattice.successors(here) if values[lattice.index(s)] == 0]
        assert there == unknown[0]
    assert not any(values[lattice.index(s)] == 0 for s in lattice.successors(path[-1]))
