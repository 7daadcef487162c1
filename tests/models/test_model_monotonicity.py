"""Each model's monotonicity flags: random merges for the claims, counterexamples for the rest.

Generalization merges classes; the table (so P) stays the same. Monotone without
suppression: if every class passes, every merged class passes. Monotone with
suppression: the rows in failing classes never grow.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import hierarchies

from kanonym.hierarchy import Hierarchy
from kanonym.models import (
    BasicBetaLikeness,
    ClassStatistics,
    DeltaDisclosurePrivacy,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    OrderedDistanceTCloseness,
    PrivacyModel,
    RecursiveCLDiversity,
)


def stats(counts: np.ndarray, labels: tuple[str, ...]) -> ClassStatistics:
    return ClassStatistics(
        sizes=counts.sum(axis=1),
        sensitive={"a": counts},
        overall={"a": counts.sum(axis=0)},
        values={"a": labels},
    )


def merged(counts: np.ndarray, groups: list[int]) -> np.ndarray:
    """Classes with the same group number merged into one."""
    out = np.zeros((max(groups) + 1, counts.shape[1]), dtype=np.int64)
    np.add.at(out, groups, counts)
    return out[out.sum(axis=1) > 0]


def failing_rows(model: PrivacyModel, counts: np.ndarray, labels: tuple[str, ...]) -> int:
    ok = model.satisfied_classes(stats(counts, labels))
    return int(counts.sum(axis=1)[~ok].sum())


@st.composite
def cases(draw: st.DrawFn) -> tuple[PrivacyModel, np.ndarray, list[int], tuple[str, ...]]:
    """A model, class counts over a hierarchy's leaves and a merge of the classes."""
    hierarchy: Hierarchy = draw(hierarchies("v", max_leaves=4))
    labels = tuple(str(leaf) for leaf in hierarchy.leaves)
    m = len(labels)
    n = draw(st.integers(1, 5))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, 4), min_size=m, max_size=m).filter(any),
            min_size=n,
            max_size=n,
        )
    )
    groups = draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    number = st.floats(0.05, 4, allow_nan=False)
    t = st.floats(0, 1, allow_nan=False)
    model = draw(
        st.one_of(
            st.builds(DistinctLDiversity, attribute=st.just("a"), l=st.integers(1, 4)),
            st.builds(EntropyLDiversity, attribute=st.just("a"), l=st.floats(1, 4)),
            st.builds(RecursiveCLDiversity, attribute=st.just("a"), c=number, l=st.integers(1, 4)),
            st.builds(EqualDistanceTCloseness, attribute=st.just("a"), t=t),
            st.builds(
                OrderedDistanceTCloseness,
                attribute=st.just("a"),
                t=t,
                order=st.just(labels),
            ),
            st.builds(
                HierarchicalDistanceTCloseness,
                attribute=st.just("a"),
                t=t,
                hierarchy=st.just(hierarchy),
            ),
            st.builds(BasicBetaLikeness, attribute=st.just("a"), beta=number),
            st.builds(EnhancedBetaLikeness, attribute=st.just("a"), beta=number),
            st.builds(DeltaDisclosurePrivacy, attribute=st.just("a"), delta=number),
        )
    )
    return model, np.array(rows, dtype=np.int64), groups, labels


@settings(max_examples=400, deadline=None)
@given(cases())
def test_claimed_monotonicity_holds_on_random_merges(
    case: tuple[PrivacyModel, np.ndarray, list[int], tuple[str, ...]],
) -> None:
    model, counts, groups, labels = case
    coarse = merged(counts, groups)
    if model.monotone_without_suppression and failing_rows(model, counts, labels) == 0:
        assert failing_rows(model, coarse, labels) == 0
    if model.monotone_with_suppression:
        assert failing_rows(model, coarse, labels) <= failing_rows(model, counts, labels)


def test_only_distinct_l_diversity_claims_monotonicity_with_suppression() -> None:
    hierarchy = Hierarchy("v", (("x", "y"), ("*", "*")))
    claims = {
        model.name: (model.monotone_with_suppression, model.monotone_without_suppression)
        for model in [
            DistinctLDiversity(attribute="a", l=2),
            EntropyLDiversity(attribute="a", l=2),
            RecursiveCLDiversity(attribute="a", c=2, l=2),
            EqualDistanceTCloseness(attribute="a", t=0.2),
            OrderedDistanceTCloseness(attribute="a", t=0.2),
            HierarchicalDistanceTCloseness(attribute="a", t=0.2, hierarchy=hierarchy),
            BasicBetaLikeness(attribute="a", beta=1),
            EnhancedBetaLikeness(attribute="a", beta=1),
            DeltaDisclosurePrivacy(attribute="a", delta=1),
        ]
    }
    assert claims == {
        "distinct-l-diversity": (True, True),
        "entropy-l-diversity": (False, True),
        "recursive-c-l-diversity": (False, True),
        "equal-distance-t-closeness": (False, True),
        "ordered-distance-t-closeness": (False, True),
        "hierarchical-distance-t-closeness": (False, True),
        "basic-beta-likeness": (False, True),
        "enhanced-beta-likeness": (False, True),
        "delta-disclosure-privacy": (False, False),
    }


# Counterexamples to monotonicity with suppression: a passing class merged with a
# failing one fails, so the failing rows grow. Values x, y (numbers 1, 2 for the
# ordered distance); the table is the three classes.
@pytest.mark.parametrize(
    ("model", "classes"),
    [
        (EntropyLDiversity(attribute="a", l=2), [[1, 1], [6, 0], [0, 6]]),
        (RecursiveCLDiversity(attribute="a", c=2, l=2), [[1, 1], [5, 0], [0, 5]]),
        (EqualDistanceTCloseness(attribute="a", t=0.2), [[1, 1], [4, 0], [0, 4]]),
        (OrderedDistanceTCloseness(attribute="a", t=0.2), [[1, 1], [4, 0], [0, 4]]),
        (
            HierarchicalDistanceTCloseness(
                attribute="a", t=0.2, hierarchy=Hierarchy("v", (("1", "2"), ("*", "*")))
            ),
            [[1, 1], [4, 0], [0, 4]],
        ),
        (BasicBetaLikeness(attribute="a", beta=0.5), [[1, 1], [4, 0], [0, 4]]),
        (EnhancedBetaLikeness(attribute="a", beta=0.5), [[1, 1], [4, 0], [0, 4]]),
        (DeltaDisclosurePrivacy(attribute="a", delta=0.2), [[1, 1], [4, 0], [0, 4]]),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_merging_a_passing_and_a_failing_class_can_grow_the_failing_rows(
    model: PrivacyModel, classes: list[list[int]]
) -> None:
    assert not model.monotone_with_suppression
    counts = np.array(classes, dtype=np.int64)
    labels = ("1", "2")
    assert model.satisfied_classes(stats(counts, labels)).tolist()[0] is True
    assert failing_rows(model, merged(counts, [0, 0, 2]), labels) > failing_rows(
        model, counts, labels
    )


def test_delta_disclosure_is_not_monotone_even_without_suppression() -> None:
    # p_x = 0.1 in 1000 rows. Classes of 100 rows with 11 x's and with none both pass
    # delta = 0.2 (|ln 1.1| = 0.095, |ln(1/0.9)| = 0.105); together q_x = 0.055 and
    # |ln 0.55| = 0.598 fails. The last class (89 x's in 800 rows) passes throughout.
    model = DeltaDisclosurePrivacy(attribute="a", delta=0.2)
    counts = np.array([[11, 89], [0, 100], [89, 711]], dtype=np.int64)
    labels = ("x", "y")
    assert failing_rows(model, counts, labels) == 0
    assert failing_rows(model, merged(counts, [0, 0, 2]), labels) == 200
