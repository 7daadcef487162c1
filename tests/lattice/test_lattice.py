"""The lattice of distance vectors and inference by monotonicity."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kanonym.lattice import Lattice, NodeStatus
from kanonym.lattice.status import FAILED, SATISFIED, UNKNOWN

heights_strategy = st.lists(st.integers(0, 3), min_size=1, max_size=4).map(tuple)


@given(heights_strategy)
def test_index_and_node_are_inverse_and_lexicographic(heights) -> None:
    lattice = Lattice(heights)
    nodes = list(itertools.product(*(range(h + 1) for h in heights)))
    assert lattice.size == len(nodes)
    assert [lattice.node(i) for i in range(lattice.size)] == nodes
    assert [lattice.index(n) for n in nodes] == list(range(lattice.size))
    assert [tuple(row) for row in lattice.levels.tolist()] == nodes


@given(heights_strategy)
def test_successors_and_predecessors_are_one_step(heights) -> None:
    lattice = Lattice(heights)
    for node in map(lattice.node, range(lattice.size)):
        for s in lattice.successors(node):
            assert sum(s) == sum(node) + 1 and node in lattice.predecessors(s)
        assert len(lattice.successors(node)) == sum(
            n < h for n, h in zip(node, heights, strict=True)
        )


def test_nodes_at_height() -> None:
    lattice = Lattice((1, 2))
    assert lattice.nodes_at_height(1) == [(0, 1), (1, 0)]
    assert lattice.nodes_at_height(3) == [(1, 2)]
    assert lattice.max_height == 3 and lattice.top == (1, 2) and lattice.bottom == (0, 0)


def test_negative_heights_are_rejected() -> None:
    with pytest.raises(ValueError):
        Lattice((1, -1))


def test_tagging_propagates_up_and_down() -> None:
    lattice = Lattice((2, 2))
    status = NodeStatus(lattice)
    status.mark_satisfied((1, 1))
    status.mark_failed((1, 0))
    assert status.get((2, 2)) == SATISFIED and status.get((1, 2)) == SATISFIED
    assert status.get((0, 0)) == FAILED and status.get((1, 0)) == FAILED
    assert status.get((0, 2)) == UNKNOWN
    # Tags never overwrite what is already known.
    status.mark_failed((2, 2))
    assert status.get((1, 1)) == SATISFIED


def test_minimal_satisfied_needs_a_decided_lattice() -> None:
    status = NodeStatus(Lattice((1,)))
    with pytest.raises(RuntimeError):
        status.minimal_satisfied()
    status.values[:] = np.array([FAILED, SATISFIED])
    assert status.minimal_satisfied() == [(1,)]
