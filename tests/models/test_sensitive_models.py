"""The sensitive-attribute models on hand-made classes: answers, parameters, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kanonym.errors import InputError
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

DISEASES = Hierarchy(
    "disease",
    (
        ("flu", "pneumonia", "ulcer", "gastritis"),
        ("respiratory", "respiratory", "stomach", "stomach"),
        ("*",) * 4,
    ),
)


def statistics(attribute: str, classes: list[list[str]]) -> ClassStatistics:
    """Class statistics of ``classes`` (each a list of values), which make up the table."""
    labels = tuple(sorted({value for rows in classes for value in rows}))
    counts = np.array([[rows.count(label) for label in labels] for rows in classes])
    return ClassStatistics(
        sizes=np.array([len(rows) for rows in classes]),
        sensitive={attribute: counts.reshape(len(classes), len(labels))},
        overall={attribute: counts.sum(axis=0)},
        values={attribute: labels},
    )


def every_model(attribute: str = "a") -> list[PrivacyModel]:
    return [
        DistinctLDiversity(attribute=attribute, l=2),
        EntropyLDiversity(attribute=attribute, l=2),
        RecursiveCLDiversity(attribute=attribute, c=2, l=2),
        EqualDistanceTCloseness(attribute=attribute, t=0.2),
        OrderedDistanceTCloseness(attribute=attribute, t=0.2),
        HierarchicalDistanceTCloseness(attribute=attribute, t=0.2, hierarchy=DISEASES),
        BasicBetaLikeness(attribute=attribute, beta=1),
        EnhancedBetaLikeness(attribute=attribute, beta=1),
        DeltaDisclosurePrivacy(attribute=attribute, delta=1),
    ]


def judged(model: PrivacyModel, classes: list[list[str]]) -> list[bool]:
    return model.satisfied_classes(statistics(model.sensitive_attributes[0], classes)).tolist()


# Seed 003 (Samarati's slides, "Attribute disclosure"): the 2-anonymous medical table's
# classes on Race, DOB, Sex, ZIP, in that order: asian 64 F, asian 63 M, black 64 F
# (Carol's), white 64 F (Hellen's).
SEED_003 = [
    ["hypertension", "obesity", "chest pain"],
    ["obesity", "obesity"],
    ["short breath", "short breath"],
    ["chest pain", "short breath"],
]


def test_homogeneity_example_fails_distinct_2_diversity() -> None:
    verdicts = judged(DistinctLDiversity(attribute="disease", l=2), SEED_003)
    assert verdicts[2] is False  # Carol's class: everyone has short breath
    assert verdicts == [True, False, False, True]


def test_background_knowledge_example_is_distinct_2_diverse() -> None:
    # Hellen's class holds chest pain and short breath: 2-diverse, yet knowing that
    # Hellen runs two hours a day rules out short breath. l-diversity cannot see that.
    assert judged(DistinctLDiversity(attribute="disease", l=2), SEED_003)[3] is True
    assert judged(EntropyLDiversity(attribute="disease", l=2), SEED_003)[3] is True


def test_distinct_l_diversity_counts_missing_as_a_value() -> None:
    stats = ClassStatistics(
        np.array([2]),
        sensitive={"a": np.array([[1, 1]])},
        overall={"a": np.array([1, 1])},
        values={"a": ("x", None)},
    )
    assert DistinctLDiversity(attribute="a", l=2).satisfied_classes(stats).tolist() == [True]


def test_entropy_l_diversity_bound_is_inclusive_and_real() -> None:
    # Three equally frequent values: entropy exactly ln 3, the bound for l = 3.
    classes = [["x", "y", "z"], ["x", "x", "y"]]
    assert judged(EntropyLDiversity(attribute="a", l=3), classes) == [True, False]
    # (2/3, 1/3): entropy 0.6365, exp = 1.8899 -> passes l = 1.88, fails l = 1.89.
    assert judged(EntropyLDiversity(attribute="a", l=1.88), classes) == [True, True]
    assert judged(EntropyLDiversity(attribute="a", l=1.89), classes) == [True, False]


def test_recursive_c_l_diversity_is_strict_and_1_diversity_always_holds() -> None:
    classes = [["x", "x", "x", "y", "z"], ["x", "x", "y", "z"]]
    # r = (3, 1, 1): 3 < c (1 + 1) needs c > 1.5; r = (2, 1, 1): c > 1.
    assert judged(RecursiveCLDiversity(attribute="a", c=1.5, l=2), classes) == [False, True]
    assert judged(RecursiveCLDiversity(attribute="a", c=1.51, l=2), classes) == [True, True]
    # l = 3: r_3 alone; 3 < c * 1 needs c > 3; fewer than l values always fails.
    assert judged(RecursiveCLDiversity(attribute="a", c=3, l=3), classes) == [False, True]
    assert judged(RecursiveCLDiversity(attribute="a", c=100, l=4), classes) == [False, False]
    assert judged(RecursiveCLDiversity(attribute="a", c=0.01, l=1), [["x"]]) == [True]


def test_equal_distance_t_closeness() -> None:
    # P = (1/2, 1/2); the classes' distances are 1/2, 0 and 1/2.
    classes = [["x"], ["x", "y"], ["y"]]
    assert judged(EqualDistanceTCloseness(attribute="a", t=0.5), classes) == [True] * 3
    assert judged(EqualDistanceTCloseness(attribute="a", t=0.49), classes) == [False, True, False]


def test_ordered_distance_t_closeness_on_the_papers_salaries() -> None:
    # Li, Li & Venkatasubramanian 2007's example: salaries 3k..11k, one of each in
    # the table; {3k, 4k, 5k} is 0.375 from P and {6k, 8k, 11k} is 0.167.
    salaries = [str(s * 1000) for s in range(3, 12)]
    low, spread = ["3000", "4000", "5000"], ["6000", "8000", "11000"]
    rest = [s for s in salaries if s not in low + spread]
    classes = [low, spread, rest]
    assert judged(OrderedDistanceTCloseness(attribute="a", t=0.375), classes)[:2] == [True, True]
    assert judged(OrderedDistanceTCloseness(attribute="a", t=0.374), classes)[:2] == [False, True]
    assert judged(OrderedDistanceTCloseness(attribute="a", t=1 / 6), classes)[1] is True
    assert judged(OrderedDistanceTCloseness(attribute="a", t=0.166), classes)[1] is False


def test_ordered_distance_orders_numbers_not_text() -> None:
    # P is uniform over 9, 10, 11. The class {9, 11} has p - q = (-1/6, 1/3, -1/6) in
    # numeric order: cumulative sums -1/6, 1/6, so distance (1/6 + 1/6) / 2 = 1/6. In
    # text order (10, 11, 9) it would be (1/3 + 1/6) / 2 = 1/4. {10} is 1/3 away.
    classes = [["9", "11"], ["10"]]
    stats = statistics("a", classes)
    assert stats.values["a"] == ("10", "11", "9")
    model = OrderedDistanceTCloseness(attribute="a", t=1 / 6)
    assert model.value_order(stats.values["a"]).tolist() == [2, 0, 1]
    assert model.satisfied_classes(stats).tolist() == [True, False]


def test_ordered_distance_with_an_explicit_order() -> None:
    model = OrderedDistanceTCloseness(attribute="a", t=0.3, order=("low", "medium", "high"))
    # P = (1/3, 1/3, 1/3); {low} is 1/2 away under this order; alphabetically
    # (high < low < medium) it would be 1/3 away.
    assert judged(model, [["low"], ["medium", "high"]]) == [False, True]
    with pytest.raises(InputError, match="'extreme' is not in the given order"):
        judged(model, [["low"], ["extreme"]])


@pytest.mark.parametrize(
    ("values", "message"),
    [(("1", "x"), "value 'x' is not a number"), (("1", None), "missing value"),
     (("1", "inf"), "not a finite number")],
)  # fmt: skip
def test_ordered_distance_needs_numbers(values: tuple[str | None, ...], message: str) -> None:
    stats = ClassStatistics(
        np.array([1, 1]),
        sensitive={"a": np.eye(2, dtype=np.int64)},
        overall={"a": np.array([1, 1])},
        values={"a": values},
    )
    with pytest.raises(InputError, match=message):
        OrderedDistanceTCloseness(attribute="a", t=0.5).satisfied_classes(stats)


def test_hierarchical_distance_t_closeness() -> None:
    # P uniform over 4 diseases in 2 groups. {flu, pneumonia} stays in one group: all
    # its mass moves across the root (distance 1 for half the mass): 1/2.
    # {flu, ulcer} keeps half in each group; mass moves within groups (1/2 apart): 1/4.
    classes = [
        ["flu", "pneumonia"],
        ["flu", "ulcer"],
        ["gastritis", "ulcer"],
        ["pneumonia", "gastritis"],
    ]
    model = HierarchicalDistanceTCloseness(attribute="a", t=0.25, hierarchy=DISEASES)
    assert judged(model, classes) == [False, True, False, True]
    # The equal distance sees no difference: every class is 1/2 from P.
    assert judged(EqualDistanceTCloseness(attribute="a", t=0.5), classes) == [True] * 4
    assert judged(EqualDistanceTCloseness(attribute="a", t=0.49), classes) == [False] * 4


def test_hierarchical_distance_needs_every_value_in_the_hierarchy() -> None:
    model = HierarchicalDistanceTCloseness(attribute="a", t=0.5, hierarchy=DISEASES)
    with pytest.raises(InputError, match="'cold' is not one of its values"):
        judged(model, [["flu"], ["cold"]])


def test_basic_and_enhanced_beta_likeness() -> None:
    # P = (3/4, 1/4). Class 1 = (1/2, 1/2): gain for y (1/2 - 1/4) / (1/4) = 1,
    # under y's cap -ln(1/4) = 1.386. Class 2 = (1, 0): gain for x 1/3, above x's cap
    # -ln(3/4) = 0.288: no beta makes it enhanced beta-like.
    classes = [["x", "y"], ["x", "x"], ["x", "x", "y", "x"]]
    assert judged(BasicBetaLikeness(attribute="a", beta=1), classes) == [True, True, True]
    assert judged(BasicBetaLikeness(attribute="a", beta=0.99), classes) == [False, True, True]
    assert judged(EnhancedBetaLikeness(attribute="a", beta=1), classes) == [True, False, True]
    assert judged(EnhancedBetaLikeness(attribute="a", beta=1000), classes)[1] is False


def test_delta_disclosure_is_strict_and_skips_absent_values() -> None:
    # P = (1/2, 1/2). {x} lacks y: only |ln(1 / (1/2))| = ln 2 counts.
    classes = [["x"], ["y", "x", "y", "x"], ["y"]]
    assert judged(DeltaDisclosurePrivacy(attribute="a", delta=math.log(2)), classes) == [
        False,
        True,
        False,
    ]
    assert judged(DeltaDisclosurePrivacy(attribute="a", delta=0.7), classes) == [True] * 3


@pytest.mark.parametrize("model", every_model(), ids=lambda m: m.name)
def test_every_model_takes_an_empty_class_set(model: PrivacyModel) -> None:
    empty = ClassStatistics(sizes=np.zeros(0, dtype=np.int64))
    assert model.satisfied_classes(empty).tolist() == []
    shaped = ClassStatistics(
        sizes=np.zeros(0, dtype=np.int64),
        sensitive={"a": np.zeros((0, 0), dtype=np.int64)},
        overall={"a": np.zeros(0, dtype=np.int64)},
        values={"a": ()},
    )
    assert model.satisfied_classes(shaped).tolist() == []


@pytest.mark.parametrize("model", every_model(), ids=lambda m: m.name)
def test_every_model_is_a_privacy_model_naming_its_attribute(model: PrivacyModel) -> None:
    assert isinstance(model, PrivacyModel)
    assert model.sensitive_attributes == ("a",)
    description = model.describe()
    assert description["model"] == model.name and description["attribute"] == "a"


@pytest.mark.parametrize("model", every_model(), ids=lambda m: m.name)
def test_missing_statistics_are_an_input_error(model: PrivacyModel) -> None:
    with pytest.raises(InputError, match="attribute 'a' were not provided"):
        model.satisfied_classes(ClassStatistics(sizes=np.array([2])))


@pytest.mark.parametrize(
    "build",
    [
        lambda: DistinctLDiversity(attribute="a", l=0),
        lambda: DistinctLDiversity(attribute="a", l=2.0),  # type: ignore[arg-type]
        lambda: DistinctLDiversity(attribute="", l=2),
        lambda: EntropyLDiversity(attribute="a", l=0.5),
        lambda: EntropyLDiversity(attribute="a", l=math.nan),
        lambda: RecursiveCLDiversity(attribute="a", c=0, l=2),
        lambda: RecursiveCLDiversity(attribute="a", c=2, l=True),
        lambda: EqualDistanceTCloseness(attribute="a", t=-0.1),
        lambda: OrderedDistanceTCloseness(attribute="a", t=1.5),
        lambda: OrderedDistanceTCloseness(attribute="a", t=0.2, order=("x", "x")),
        lambda: HierarchicalDistanceTCloseness(
            attribute="a", t=0.2, hierarchy=Hierarchy("h", (("x",),))
        ),
        lambda: BasicBetaLikeness(attribute="a", beta=0),
        lambda: EnhancedBetaLikeness(attribute="a", beta=math.inf),
        lambda: DeltaDisclosurePrivacy(attribute="a", delta=-1),
    ],
)
def test_bad_parameters_are_input_errors(build: object) -> None:
    with pytest.raises(InputError):
        build()  # type: ignore[operator]


def test_t_may_be_zero_and_one() -> None:
    assert judged(EqualDistanceTCloseness(attribute="a", t=0), [["x", "y"]]) == [True]
    assert judged(EqualDistanceTCloseness(attribute="a", t=1), [["x"], ["y"]]) == [True, True]
