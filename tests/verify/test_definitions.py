"""The re-check's own definitions on small tables from the papers, worked out by hand."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import polars as pl
import pytest

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy
from kanonym.verify.classes import class_sizes, class_value_counts, value_counts
from kanonym.verify.definitions import (
    Ranking,
    Reference,
    Tree,
    at_least,
    at_most,
    basic_beta,
    beyond_cap,
    delta_disclosure,
    distinct_values,
    emd_equal,
    emd_hierarchical,
    emd_ordered,
    entropy,
    exact,
    k_anonymous,
    largest_share,
    numeric_order,
    recursive_ratio,
    relative_gains,
)

# Li, Li & Venkatasubramanian 2007, Table 3: salary and disease of nine patients.
SALARIES = [f"{s}K" for s in range(3, 12)]
DISEASES = [
    "gastric ulcer",
    "gastritis",
    "stomach cancer",
    "gastritis",
    "flu",
    "bronchitis",
    "bronchitis",
    "pneumonia",
    "stomach cancer",
]
# The same paper's Figure 2: the disease hierarchy, height 3.
DISEASE_HIERARCHY = Hierarchy(
    "disease",
    (
        (
            "flu",
            "pneumonia",
            "bronchitis",
            "pulmonary edema",
            "pulmonary embolism",
            "gastric ulcer",
            "gastritis",
            "stomach cancer",
            "colitis",
            "colon cancer",
        ),
        ("respiratory infection",) * 3
        + ("vascular lung diseases",) * 2
        + ("stomach diseases",) * 3
        + ("colon diseases",) * 2,
        ("respiratory diseases",) * 5 + ("digestive diseases",) * 5,
        ("*",) * 10,
    ),
)


def salary_ranking() -> Ranking:
    return Ranking.of(Reference.of(dict.fromkeys(SALARIES, 1)), SALARIES)


def test_k_anonymity_is_a_bound_on_class_size() -> None:
    # Sweeney 2002: each QI combination appears at least k times.
    table = pl.DataFrame({"zip": ["0213*", "0213*", "0214*", None, None]})
    sizes = sorted(class_sizes(table, ["zip"]).to_list())
    assert sizes == [1, 2, 2]  # missing values group together
    assert [k_anonymous(s, 2) for s in sizes] == [False, True, True]


def test_ordered_distance_of_the_papers_low_salary_class() -> None:
    # Li et al. 2007: Q1 = {3K, 4K, 5K} against the nine salaries is 0.375 away.
    q1 = dict.fromkeys(["3K", "4K", "5K"], 1)
    assert emd_ordered(q1, salary_ranking()) == Fraction(3, 8)
    # By hand: the steps p − q are −2/9 three times, then 1/9 six times; the
    # running sums −2/9, −4/9, −6/9, −5/9, … , −1/9 add to 27/9, over m − 1 = 8.
    assert Fraction(2 + 4 + 6 + 5 + 4 + 3 + 2 + 1, 9) / 8 == Fraction(3, 8)


def test_ordered_distance_of_the_papers_0_167_close_table() -> None:
    # Li et al. 2007, Table 4: the classes {3K, 5K, 9K}, {6K, 8K, 11K} and
    # {4K, 7K, 10K} make the table 0.167-close on salary.
    classes = [("3K", "5K", "9K"), ("6K", "8K", "11K"), ("4K", "7K", "10K")]
    distances = [emd_ordered(dict.fromkeys(c, 1), salary_ranking()) for c in classes]
    assert distances == [Fraction(1, 6), Fraction(1, 6), Fraction(1, 12)]


def test_ordered_distance_follows_the_order_not_the_text() -> None:
    reference = Reference.of({"10": 1, "9": 1, "11": 1})
    ranking = Ranking.of(reference, numeric_order(list(reference.counts)))
    assert dict(ranking.rank) == {"9": 0, "10": 1, "11": 2}
    # {10}: running sums 1/3, −1/3: 2/3 over m − 1 = 2; {9, 11}: −1/6, 1/6: 1/3 over 2.
    assert emd_ordered({"10": 1}, ranking) == Fraction(1, 3)
    assert emd_ordered({"9": 1, "11": 1}, ranking) == Fraction(1, 6)
    assert emd_ordered({"5": 3}, Ranking.of(Reference.of({"5": 9}), ["5"])) == 0


def test_numeric_order_refuses_what_is_not_a_number() -> None:
    with pytest.raises(InputError, match="value 'flu' is not a number"):
        numeric_order(["3", "flu", None])
    with pytest.raises(InputError, match="missing value"):
        numeric_order(["3", None])
    with pytest.raises(InputError, match="not a finite number"):
        numeric_order(["inf"])
    with pytest.raises(InputError, match="not in the given order"):
        Ranking.of(Reference.of({"low": 1, "odd": 1}), ["low", "high"])


def test_hierarchical_distance_on_the_papers_diseases() -> None:
    # P: gastric ulcer 1/9, gastritis 2/9, stomach cancer 2/9, flu 1/9,
    # bronchitis 2/9, pneumonia 1/9. Q1 = the three stomach diseases, 1/3 each.
    # The paper's bottom-up: the stomach node's extras (−2/9, −1/9, −1/9) all
    # negative, cost 0; the respiratory infection node's all positive, cost 0;
    # the root matches 4/9 against 4/9 at level 3 / 3: D = 4/9. No plan is
    # cheaper: 4/9 of the mass must cross the root, at distance 1.
    tree = Tree.of(Reference.of(Counter(DISEASES)), DISEASE_HIERARCHY)
    q1 = Counter(["gastric ulcer", "gastritis", "stomach cancer"])
    assert emd_hierarchical(q1, tree) == Fraction(4, 9)
    # Table 4's class {gastric ulcer, stomach cancer, pneumonia}: extras at the
    # leaves ulcer −2/9, cancer −1/9, gastritis 2/9 (stomach node: cost
    # (1/3) min(2/9, 3/9) = 2/27, extra −1/9); flu 1/9, bronchitis 2/9, pneumonia
    # −2/9 (respiratory infection: (1/3) min(3/9, 2/9) = 2/27, extra 1/9); the
    # root (3/3) min(1/9, 1/9) = 1/9. D = 2/27 + 2/27 + 3/27 = 7/27.
    assert emd_hierarchical(Counter(["gastric ulcer", "stomach cancer", "pneumonia"]), tree) == (
        Fraction(7, 27)
    )


def test_hierarchical_distance_under_a_root_of_height_one_is_the_equal_distance() -> None:
    flat = Hierarchy("d", (("a", "b", "c"), ("*",) * 3))
    reference = Reference.of({"a": 2, "b": 1, "c": 1})
    tree = Tree.of(reference, flat)
    for counts in ({"a": 1}, {"b": 2, "c": 1}, {"a": 2, "b": 1, "c": 1}):
        assert emd_hierarchical(counts, tree) == emd_equal(counts, reference)


def test_hierarchical_distance_needs_every_value_as_a_leaf() -> None:
    with pytest.raises(InputError, match="'measles' is not one of its values"):
        Tree.of(Reference.of({"flu": 1, "measles": 1}), DISEASE_HIERARCHY)
    with pytest.raises(InputError, match="needs a level above its values"):
        Tree.of(Reference.of({"a": 1}), Hierarchy("d", (("a",),)))


def test_equal_distance_is_half_the_l1_distance() -> None:
    # Li et al. 2007: any two values 1 apart. P = (3/4, 1/4).
    reference = Reference.of({"a": 3, "b": 1})
    assert emd_equal({"a": 2}, reference) == Fraction(1, 4)
    assert emd_equal({"a": 1, "b": 1}, reference) == Fraction(1, 4)
    assert emd_equal({"a": 3, "b": 1}, reference) == 0
    # A class lacking a value owes that value's whole share: {b} is 3/4 away.
    assert emd_equal({"b": 5}, reference) == Fraction(3, 4)
    # Q1 = {3K, 4K, 5K} with equal distance: ½ (3 × (1/3 − 1/9) + 6 × 1/9) = 2/3.
    assert emd_equal(dict.fromkeys(["3K", "4K", "5K"], 1), Reference.of(Counter(SALARIES))) == (
        Fraction(2, 3)
    )


def test_l_diversity_on_a_homogeneous_and_a_diverse_class() -> None:
    # Machanavajjhala et al. 2007: a class whose rows all share one disease
    # (the homogeneity attack) is 1-diverse; one of cancer twice, heart disease
    # and viral infection once is distinct 3-diverse, entropy 2^1.5-diverse and
    # recursive (c, 3)-diverse for c > r_1 / r_3 = 2.
    homogeneous = {"cancer": 4}
    diverse = {"cancer": 2, "heart disease": 1, "viral infection": 1}
    assert (distinct_values(homogeneous), distinct_values(diverse)) == (1, 3)
    assert entropy(homogeneous) == 0.0
    assert entropy(diverse) == pytest.approx(1.5 * math.log(2), abs=1e-15)
    assert at_least(entropy(diverse), math.log(2**1.5))
    assert not at_least(entropy(diverse), math.log(2.9))
    assert recursive_ratio(diverse, 3) == 2
    assert recursive_ratio(diverse, 2) == Fraction(2, 2)
    assert recursive_ratio(diverse, 4) is None  # three values cannot be 4-diverse
    assert recursive_ratio(homogeneous, 1) == 0  # 1-diversity always holds


def test_entropy_of_l_equal_values_is_exactly_at_the_bound() -> None:
    for size in range(2, 12):
        assert at_least(entropy({str(v): 3 for v in range(size)}), math.log(size))
        assert not at_least(entropy({str(v): 3 for v in range(size - 1)}), math.log(size))


def test_relative_gains_and_beta_likeness() -> None:
    # Cao & Karras 2012: D(p, q) = (q − p) / p for the values with q > p.
    reference = Reference.of({"a": 4, "b": 4})  # P = (1/2, 1/2)
    assert relative_gains({"a": 3, "b": 1}, reference) == {"a": Fraction(1, 2)}
    assert basic_beta({"a": 3, "b": 1}, reference) == Fraction(1, 2)
    assert basic_beta({"a": 1, "b": 1}, reference) == 0
    # Enhanced: P = (7/8, 1/8). {a, a, a, b} gains 1 on b, under min(β, ln 8);
    # {a, a, a, a} gains 1/7 on a, beyond its cap −ln(7/8) ≈ 0.1335.
    skewed = Reference.of({"a": 7, "b": 1})
    assert basic_beta({"a": 3, "b": 1}, skewed) == 1
    assert beyond_cap({"a": 3, "b": 1}, skewed) == {}
    assert basic_beta({"a": 4}, skewed) == Fraction(1, 7)
    assert beyond_cap({"a": 4}, skewed) == pytest.approx({"a": 1 / 7 + math.log(7 / 8)})


def test_delta_disclosure_reads_only_the_values_a_class_holds() -> None:
    # Brickell & Shmatikov 2008: |ln(q / p)|; P = (1/2, 1/2), Q = (3/4, 1/4).
    reference = Reference.of({"a": 6, "b": 6})
    assert delta_disclosure({"a": 3, "b": 1}, reference) == math.log(2)
    assert delta_disclosure({"a": 2, "b": 2}, reference) == 0.0
    # {a} lacks b: ln 0 is skipped, |ln 2| remains.
    assert delta_disclosure({"a": 4}, reference) == math.log(2)


def test_largest_share() -> None:
    assert largest_share({"a": 3, "b": 1}) == Fraction(3, 4)


def test_bounds_allow_rounding_only() -> None:
    assert exact(0.2) == Fraction(1, 5)
    assert at_most(Fraction(1, 3), exact(1 / 3))  # 0.3333333333333333 is below 1/3
    assert not at_most(Fraction(1, 5) + Fraction(1, 10**9), exact(0.2))
    assert at_most(Fraction(100) + Fraction(1, 10**11), Fraction(100))  # relative above 1
    assert not at_most(Fraction(100) + Fraction(1, 10**9), Fraction(100))


def test_counting_groups_missing_values_and_counts_them_as_values() -> None:
    table = pl.DataFrame(
        {
            "zip": ["1", "1", None, None, "2"],
            "sex": ["F", "F", "M", "M", "F"],
            "disease": ["flu", None, "flu", "flu", None],
        }
    )
    # Classes in the order of their values, missing last; dicts compare unordered.
    assert list(class_value_counts(table, ["zip", "sex"], "disease")) == [
        {"flu": 1, None: 1},
        {None: 1},
        {"flu": 2},
    ]
    assert value_counts(table.get_column("disease")) == {"flu": 3, None: 2}
    numbers = pl.DataFrame({"q": ["a", "a"], "s": [9, 10]})
    assert list(class_value_counts(numbers, ["q"], "s")) == [{"9": 1, "10": 1}]
    # No quasi-identifier: the whole table is one class.
    assert list(class_value_counts(table, [], "disease")) == [{"flu": 3, None: 2}]
    assert class_sizes(table, []).to_list() == [5]
