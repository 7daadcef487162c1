"""The per-class measures against the papers' examples and independent formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import hierarchies

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy
from kanonym.models.distribution import (
    basic_beta,
    delta_disclosure,
    emd_equal,
    emd_hierarchical,
    emd_ordered,
    enhanced_beta,
    entropy,
    largest_share,
    numeric_order,
    recursive_c,
    value_tree,
)


def test_ordered_distance_reproduces_li_li_venkatasubramanian_salaries() -> None:
    # Section 4.3 of the t-closeness paper: P uniform over 3k..11k;
    # Q1 = {3k, 4k, 5k} is 0.375 away, Q2 = {6k, 8k, 11k} 0.167.
    classes = np.zeros((2, 9), dtype=np.int64)
    classes[0, [0, 1, 2]] = 1
    classes[1, [3, 5, 8]] = 1
    distances = emd_ordered(classes, np.ones(9, dtype=np.int64), np.arange(9))
    assert distances[0] == pytest.approx(0.375)
    assert distances[1] == pytest.approx(1 / 6)


def tree_emd(hierarchy: Hierarchy, p: list[float], q: list[float]) -> float:
    """EMD on the hierarchy as a tree with every edge 1/(2H) long.

    Two leaves whose lowest common ancestor is at level j are 2j edges apart,
    j/H: the paper's ground distance. On a tree the EMD is the sum over edges of
    the edge's length times the mass that must cross it, |P(below) − Q(below)|.
    """
    height = hierarchy.height
    total = 0.0
    for level in range(height):  # the edge from each level-`level` node to its parent
        below: dict[str | None, float] = {}
        for leaf, (pi, qi) in enumerate(zip(p, q, strict=True)):
            node = hierarchy.levels[level][leaf]
            below[node] = below.get(node, 0.0) + pi - qi
        total += sum(abs(mass) for mass in below.values()) / (2 * height)
    return total


@settings(max_examples=200, deadline=None)
@given(
    hierarchy=hierarchies("v", max_leaves=5),
    data=st.data(),
)
def test_hierarchical_distance_equals_the_tree_earth_movers_distance(
    hierarchy: Hierarchy, data: st.DataObject
) -> None:
    m = len(hierarchy.leaves)
    overall = np.array(data.draw(st.lists(st.integers(0, 5), min_size=m, max_size=m).filter(any)))
    counts = np.array([data.draw(st.lists(st.integers(0, 5), min_size=m, max_size=m).filter(any))])
    p = (overall / overall.sum()).tolist()
    q = (counts[0] / counts.sum()).tolist()
    tree = value_tree(hierarchy, hierarchy.leaves)
    assert emd_hierarchical(counts, overall, tree)[0] == pytest.approx(tree_emd(hierarchy, p, q))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=4, max_size=4).filter(any), min_size=1))
def test_a_one_level_hierarchy_gives_the_equal_distance(rows: list[list[int]]) -> None:
    counts = np.array(rows, dtype=np.int64)
    overall = counts.sum(axis=0)
    flat = Hierarchy("v", (("a", "b", "c", "d"), ("*",) * 4))
    tree = value_tree(flat, flat.leaves)
    np.testing.assert_allclose(
        emd_hierarchical(counts, overall, tree), emd_equal(counts, overall), atol=1e-12
    )


def test_hierarchical_distance_of_values_the_hierarchy_keeps_apart() -> None:
    # Height 2: a and b meet at level 1 (1/2 apart), c only at the root (1 apart).
    h = Hierarchy("v", (("a", "b", "c"), ("ab", "ab", "c"), ("*",) * 3))
    tree = value_tree(h, ("a", "b", "c"))
    one_to = np.array([1, 0, 0])
    assert emd_hierarchical(np.array([[0, 1, 0]]), one_to, tree).tolist() == [0.5]
    assert emd_hierarchical(np.array([[0, 0, 1]]), one_to, tree).tolist() == [1.0]


def test_value_tree_takes_codes_in_any_order_and_ignores_absent_leaves() -> None:
    h = Hierarchy("v", (("a", "b", "c"), ("ab", "ab", "c"), ("*",) * 3))
    tree = value_tree(h, ("c", "a"))
    # a (code 1) and c (code 0) meet at the root only: all mass moves distance 1.
    assert emd_hierarchical(np.array([[0, 1]]), np.array([1, 0]), tree).tolist() == [1.0]


def test_entropy_largest_share_and_recursive_c_by_hand() -> None:
    counts = np.array([[3, 1, 0], [1, 1, 1], [2, 0, 0]])
    h = entropy(counts)
    assert h[0] == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert h[1] == pytest.approx(math.log(3))
    assert h[2] == 0.0
    assert largest_share(counts).tolist() == [0.75, 1 / 3, 1.0]
    assert recursive_c(counts, 2).tolist() == [3.0, 0.5, math.inf]
    assert recursive_c(counts, 3).tolist() == [math.inf, 1.0, math.inf]
    assert recursive_c(counts, 1).tolist() == [0.0, 0.0, 0.0]


def test_beta_and_delta_by_hand() -> None:
    # P = (1/2, 1/4, 1/4).
    overall = np.array([4, 2, 2])
    counts = np.array([[1, 1, 0], [2, 0, 2], [4, 0, 0]])
    # Gains (q - p) / p where q > p: class 1 y (1/2 - 1/4) / (1/4) = 1; class 2 z 1;
    # class 3 x (1 - 1/2) / (1/2) = 1.
    assert basic_beta(counts, overall).tolist() == [1.0, 1.0, 1.0]
    # Caps -ln p: x ln 2 = 0.693, y and z ln 4 = 1.386. The last class's gain 1 for x
    # exceeds ln 2.
    assert enhanced_beta(counts, overall).tolist() == [1.0, 1.0, math.inf]
    # |ln(q/p)| over present values: class 1 ln 2 (y), class 2 ln 2 (z), class 3 ln 2 (x).
    assert delta_disclosure(counts, overall) == pytest.approx([math.log(2)] * 3)


def test_every_measure_takes_zero_classes() -> None:
    counts = np.zeros((0, 3), dtype=np.int64)
    overall = np.array([1, 1, 1])
    for measure in (emd_equal, basic_beta, enhanced_beta, delta_disclosure):
        assert measure(counts, overall).shape == (0,)
    assert emd_ordered(counts, overall, np.arange(3)).shape == (0,)
    assert entropy(counts).shape == largest_share(counts).shape == (0,)
    assert recursive_c(counts, 2).shape == (0,)


def test_numeric_order_needs_finite_numbers() -> None:
    assert numeric_order(["2.5", "-1", "1e1", "10"]).tolist() == [1, 0, 3, 2]
    with pytest.raises(InputError, match="'nan' is not a finite number"):
        numeric_order(["1", "nan"])
