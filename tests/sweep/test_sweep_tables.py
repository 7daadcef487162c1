"""Merged lines of a sweep's table and figure labels: a label never claims a k it lacks."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kanonym.sweep.points import SweepPoint
from kanonym.sweep.tables import merged


def _point(k: int, release: int) -> SweepPoint:
    return SweepPoint(
        k=k,
        max_suppression=0.0,
        max_suppressed_rows=0,
        solution=True,
        transformation={"zip": release},
        metric="loss",
        score=float(release),
    )


def _ks(label: str) -> set[int]:
    found: set[int] = set()
    for run in label.split(", "):
        first, _, last = run.partition("-")
        found.update(range(int(first), int(last or first) + 1))
    return found


def test_a_release_made_again_after_another_is_listed_not_ranged() -> None:
    # k 3 and 4 make release 1, k 5 release 2, k 6 release 1 again: not "3-6".
    points = [_point(3, 1), _point(4, 1), _point(5, 2), _point(6, 1)]
    assert [(label, p.k) for label, p in merged(points)] == [("3-4, 6", 3), ("5", 5)]


def test_k_not_swept_are_not_claimed() -> None:
    assert [label for label, _ in merged([_point(k, 1) for k in (2, 5, 10)])] == ["2, 5, 10"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(1, 40), st.integers(0, 3), min_size=1, max_size=25))
def test_each_label_names_exactly_the_k_of_its_release(releases: dict[int, int]) -> None:
    points = [_point(k, releases[k]) for k in sorted(releases)]
    pairs = merged(points)
    assert len(pairs) == len(set(releases.values()))
    for label, point in pairs:
        assert _ks(label) == {k for k, r in releases.items() if r == releases[point.k]}
        # Runs are maximal: two ranges of a label never touch.
        runs = [sorted(_ks(run)) for run in label.split(", ")]
        assert all(b[0] > a[-1] + 1 for a, b in itertools.pairwise(runs))
