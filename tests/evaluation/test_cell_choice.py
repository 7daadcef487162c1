"""Choosing the cells to blank in a node's classes: patterns, absorption, limits, models."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from kanonym.evaluation.cell_choice import group_rows, suppress_cells


def _k_judge(sizes: np.ndarray, k: int):
    def judge(members, group, n_groups):
        return np.bincount(group, weights=sizes[members], minlength=n_groups) >= k

    return judge


def _run(codes, sizes, k, max_rows, star=None, mask=None, cost=None):
    codes = np.asarray(codes, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    m = codes.shape[1]
    return suppress_cells(
        codes,
        sizes,
        star=np.full(m, codes.max() + 1, dtype=np.int64) if star is None else np.asarray(star),
        suppressible=np.ones(m, dtype=bool),
        cost=np.ones(codes.shape) if cost is None else np.asarray(cost, dtype=float),
        judge=_k_judge(sizes, k),
        min_size=k,
        max_rows=max_rows,
        mask=mask,
    )


def _released_groups(codes, mask, star):
    shown = np.where(mask, np.asarray(star)[None, :], np.asarray(codes))
    return group_rows(shown)


def test_nothing_to_do_when_every_class_passes() -> None:
    out = _run([[0, 0], [1, 1]], [2, 3], k=2, max_rows=0)
    assert out is not None and out.total_cells == 0 and out.rows == 0
    assert out.group_sizes.tolist() == [2, 3]


def test_one_shared_cell_resolves_two_outliers() -> None:
    # (a, x) and (a, y) differ only in the second attribute.
    out = _run([[0, 0], [0, 1], [1, 2]], [1, 1, 2], k=2, max_rows=2)
    assert out is not None
    assert out.mask.tolist() == [[False, True], [False, True], [False, False]]
    assert out.cells.tolist() == [0, 2] and out.rows == 2


def test_the_pattern_resolving_most_rows_wins() -> None:
    # Seed 003's four 64/09/27 rows as (race, zip): blanking race pairs only the two
    # middle rows, blanking ZIP pairs all four; taking race first would strand two.
    codes = [[0, 0], [0, 1], [1, 1], [1, 2], [5, 5]]
    out = _run(codes, [1, 1, 1, 1, 2], k=2, max_rows=4)
    assert out is not None
    assert out.mask[:4].tolist() == [[False, True]] * 4
    assert out.total_cells == 4


def test_ties_go_to_the_cheaper_attribute() -> None:
    codes = [[0, 0], [1, 1], [2, 2]]
    # Classes 0 and 1 can pair by blanking both attributes only: no single pattern works.
    out = _run(codes, [1, 1, 2], k=2, max_rows=2, cost=[[1.0, 0.2]] * 3)
    assert out is not None
    # Each leftover is absorbed: the first into class 2 (blanking both, cells 2 + 4)
    # or into the other leftover's group, whichever costs fewer cells.
    assert out.rows <= 2 or out.rows == 4


def test_leftover_all_star_group_smaller_than_k_is_absorbed() -> None:
    # One outlier row cannot form a class of k = 3 alone: it joins the cheapest class.
    codes = [[0, 0], [0, 0], [1, 1], [0, 1]]
    sizes = [3, 0, 3, 1]
    codes = [codes[0], codes[2], codes[3]]
    sizes = [3, 3, 1]
    out = _run(codes, sizes, k=3, max_rows=4)
    assert out is not None
    # The outlier (0, 1) differs from (0, 0) and from (1, 1) in one attribute each:
    # 3 + 1 cells either way; the first class in order takes it.
    assert out.total_cells == 4 and out.rows == 4
    assert sorted(out.group_sizes.tolist()) == [3, 4]


def test_absorbing_counts_the_touched_rows_against_the_limit() -> None:
    codes = [[0, 0], [1, 1], [0, 1]]
    assert _run(codes, [3, 3, 1], k=3, max_rows=3) is None
    assert _run(codes, [3, 3, 1], k=3, max_rows=4) is not None


def test_more_failing_rows_than_the_limit_fail_at_once() -> None:
    assert _run([[0], [1], [2]], [1, 1, 1], k=2, max_rows=2) is None
    out = _run([[0], [1], [2]], [1, 1, 1], k=2, max_rows=3)
    assert out is not None and out.group_sizes.tolist() == [3]


def test_no_conversion_when_the_whole_table_is_below_k() -> None:
    assert _run([[0], [1]], [1, 1], k=3, max_rows=10) is None


def test_cells_already_showing_the_root_are_not_counted() -> None:
    # Attribute 1's code 2 is the root's own code (a label spelled like the root).
    codes = np.array([[0, 2], [1, 2], [2, 0], [2, 0]])
    out = suppress_cells(
        codes,
        np.ones(4, dtype=np.int64),
        star=np.array([3, 2]),
        suppressible=np.ones(2, dtype=bool),
        cost=np.ones((4, 2)),
        judge=_k_judge(np.ones(4, dtype=np.int64), 2),
        min_size=2,
        max_rows=2,
    )
    assert out is not None and out.cells.tolist() == [2, 0] and out.rows == 2


def test_an_initial_mask_stays_blanked() -> None:
    mask = np.array([[True, False], [False, False], [False, False]])
    out = _run([[0, 0], [1, 0], [2, 1]], [1, 1, 2], k=2, max_rows=2, mask=mask)
    assert out is not None
    assert out.mask[0, 0] and out.mask[1, 0]
    assert out.total_cells == 2


def test_models_beyond_k_judge_the_merged_groups() -> None:
    # Distinct 2-diversity on a sensitive value per class: classes 0 and 1 hold the
    # same value, so only merging with class 2 (a different value) passes.
    codes = np.array([[0, 0], [0, 1], [1, 0]])
    sizes = np.array([1, 1, 1])
    value = np.array([0, 0, 1])

    def diverse(members, group, n_groups):
        seen = np.zeros((n_groups, 2), dtype=bool)
        seen[group, value[members]] = True
        return seen.sum(axis=1) >= 2

    out = suppress_cells(
        codes,
        sizes,
        star=np.array([2, 2]),
        suppressible=np.ones(2, dtype=bool),
        cost=np.ones((3, 2)),
        judge=diverse,
        min_size=2,
        max_rows=3,
    )
    assert out is not None
    group, n_groups = _released_groups(codes, out.mask, [2, 2])
    for g in range(n_groups):
        assert len(set(value[group == g].tolist())) >= 2


def _whole_classes_can_be_blanked(sizes: list[int], k: int, max_rows: int) -> bool:
    """Whether blanking whole classes, every class below k among them, can leave
    every released group with k rows while touching at most ``max_rows`` rows.

    Blanked rows never match unblanked ones (no class shows the root), and if some
    blanking works, blanking every cell of the same rows works too (their union is
    one group of at least k rows); so it is enough to choose which passing classes
    join the failing ones, by brute force.
    """
    failing = sum(n for n in sizes if n < k)
    if failing == 0:
        return True
    passing = [n for n in sizes if n >= k]
    return any(
        k <= failing + sum(chosen) <= max_rows
        for r in range(len(passing) + 1)
        for chosen in itertools.combinations(passing, r)
    )


@st.composite
def _classes(draw):
    m = draw(st.integers(1, 4))
    n = draw(st.integers(1, 12))
    codes = draw(
        st.lists(st.lists(st.integers(0, 2), min_size=m, max_size=m), min_size=n, max_size=n)
    )
    unique = sorted(set(map(tuple, codes)))
    sizes = draw(st.lists(st.integers(1, 3), min_size=len(unique), max_size=len(unique)))
    return np.array(unique, dtype=np.int64), np.array(sizes, dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(_classes(), st.integers(1, 4), st.integers(0, 30))
def test_every_conversion_is_k_anonymous_within_the_limit(classes, k, max_rows) -> None:
    codes, sizes = classes
    out = _run(codes, sizes, k=k, max_rows=max_rows, star=[3] * codes.shape[1])
    failing_rows = int(sizes[sizes < k].sum())
    if out is None:
        # The conversion treats a class's rows alike: it fails only when no set of
        # whole classes can be blanked (brute force below).
        assert not _whole_classes_can_be_blanked(sizes.tolist(), k, max_rows)
        event("no conversion: none exists (brute force)")
        return
    group, n_groups = _released_groups(codes, out.mask, [3] * codes.shape[1])
    released = np.bincount(group, weights=sizes, minlength=n_groups)
    assert (released >= k).all()
    assert out.rows <= max_rows
    # Every row of a class below k was touched; passing classes untouched stay as they were.
    touched = out.mask.any(axis=1)
    assert touched[sizes < k].all()
    assert out.rows >= failing_rows
    assert out.group_sizes.sum() == sizes.sum()


@settings(max_examples=60, deadline=None)
@given(_classes(), st.data())
def test_a_conversion_exists_whenever_enough_rows_may_be_touched(classes, data) -> None:
    codes, sizes = classes
    k = data.draw(st.integers(1, min(3, int(sizes.sum()))), label="k")
    assert _run(codes, sizes, k=k, max_rows=int(sizes.sum()), star=[3] * codes.shape[1])


@pytest.mark.parametrize("display", [np.zeros((0, 2), dtype=np.int64)])
def test_group_rows_of_nothing(display) -> None:
    assert group_rows(display)[1] == 0
