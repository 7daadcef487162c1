"""mu-Argus's cell suppression of rare combinations of one to three attributes."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.evaluation.combinations import rare_involvement, suppress_rare_combinations


def _all_binary(m: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=m)), dtype=np.int64)


def test_the_cell_in_most_rare_combinations_goes_first() -> None:
    # Row 0 = (a, x, p): value a is rare alone, and so are its pairs and triple.
    codes = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 1], [1, 1, 1]])
    sizes = np.ones(5, dtype=np.int64)
    involvement = rare_involvement(
        codes, sizes, np.zeros(codes.shape, dtype=bool), k=2, attributes=[0, 1, 2]
    )
    # a: alone, with x, with p, with x and p: 4; x and p (held by 3 rows each, and
    # together too): only in the pair with a and in the triple.
    assert involvement[0].tolist() == [4, 2, 2]
    assert involvement[1:].sum() == 0
    mask = suppress_rare_combinations(
        codes, sizes, k=2, suppressible=np.ones(3, dtype=bool), cost=np.ones((5, 3))
    )
    assert mask.tolist() == [[True, False, False]] + [[False] * 3] * 4


def test_all_three_attribute_combinations_common_yet_not_k_anonymous() -> None:
    # Sweeney's point: every value of {0,1}^4 once. Each combination of up to three
    # attributes is held by at least 2 rows, but every row is unique on all four.
    codes = _all_binary(4)
    sizes = np.ones(16, dtype=np.int64)
    mask = suppress_rare_combinations(
        codes, sizes, k=2, suppressible=np.ones(4, dtype=bool), cost=np.ones((16, 4))
    )
    assert not mask.any()
    assert len({tuple(row) for row in codes.tolist()}) == 16  # still 1-anonymous


def test_blanked_cells_protect_their_combinations() -> None:
    codes = np.array([[0, 0], [1, 1], [2, 2], [2, 2]])
    sizes = np.ones(4, dtype=np.int64)
    mask = np.array([[True, True], [False, False], [False, False], [False, False]])
    involvement = rare_involvement(codes, sizes, mask, k=2, attributes=[0, 1])
    assert involvement[0].tolist() == [0, 0] and involvement[1].tolist() == [2, 2]


def test_ties_go_to_the_cheapest_cell() -> None:
    codes = np.array([[0, 0], [1, 1], [1, 1], [2, 2], [2, 2]])
    sizes = np.ones(5, dtype=np.int64)
    cost = np.tile([1.0, 0.5], (5, 1))
    mask = suppress_rare_combinations(
        codes, sizes, k=2, suppressible=np.ones(2, dtype=bool), cost=cost
    )
    # Both cells of row 0 are in 2 rare combinations; the cheaper second goes first,
    # then the first (its single value is still rare).
    assert mask[0].tolist() == [True, True]


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda m: st.lists(
            st.lists(st.integers(0, 2), min_size=m, max_size=m), min_size=1, max_size=15
        )
    ),
    st.integers(1, 4),
)
def test_no_rare_combination_of_up_to_three_attributes_survives(rows, k) -> None:
    codes = np.array(rows, dtype=np.int64)
    sizes = np.ones(len(rows), dtype=np.int64)
    m = codes.shape[1]
    mask = suppress_rare_combinations(
        codes, sizes, k=k, suppressible=np.ones(m, dtype=bool), cost=np.ones(codes.shape)
    )
    left = rare_involvement(codes, sizes, mask, k=k, attributes=list(range(m)))
    assert not left.any()
    # Only rows of classes below k are touched.
    _, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    below = counts[inverse.reshape(-1)] < k
    assert not mask[~below].any()
