"""The re-check's definitions agree with every model's own verdict, class by class.

Random small tables: a release (its classes on ``q``) and an input that holds
its rows and possibly more (rows the release suppressed), whose distribution is
the reference. Parameters are drawn as short decimals (as a user writes them)
and, for the bounds with an allowance, also as a class's own measure computed
by the model (a tie at the bound).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

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
    KAnonymity,
    OrderedDistanceTCloseness,
    PrivacyModel,
    RecursiveCLDiversity,
)
from kanonym.models import distribution as measures
from kanonym.verify.classes import class_sizes, class_value_counts, value_counts
from kanonym.verify.definitions import Reference, k_anonymous
from kanonym.verify.models import SensitiveRule, read

VALUES = ["1", "2", "3", "10", None]
HIERARCHY = Hierarchy("s", (tuple(VALUES), ("low", "low", "low", "high", "x"), ("*",) * 5))
DECIMALS = st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0])


@st.composite
def tables(
    draw: st.DrawFn, missing: bool = True, suppressed: tuple[tuple[str, str], ...] = ()
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(release, input): released rows on ``q`` and ``s``, the input adding 0..4 rows.

    The input also holds the rows ``suppressed``, released or not.
    """
    values = st.sampled_from(VALUES if missing else VALUES[:-1])
    rows = st.tuples(st.sampled_from(["a", "b", "c", None]), values)
    released = draw(st.lists(rows, min_size=1, max_size=25))
    extra = draw(st.lists(rows, max_size=4)) + list(suppressed)
    schema = {"q": pl.String, "s": pl.String}
    frame = pl.DataFrame(released, schema=schema, orient="row")
    return frame, pl.concat([frame, pl.DataFrame(extra, schema=schema, orient="row")])


def statistics(
    released: pl.DataFrame, source: pl.DataFrame
) -> tuple[list[dict[str | None, int]], Reference, ClassStatistics]:
    """The classes as the re-check counts them, and the same counts as a model reads them."""
    classes = list(class_value_counts(released, ["q"], "s"))
    reference = Reference.of(value_counts(source.get_column("s")))
    labels = tuple(reference.counts)
    matrix = np.array([[c.get(v, 0) for v in labels] for c in classes], dtype=np.int64)
    stats = ClassStatistics(
        matrix.sum(axis=1),
        sensitive={"s": matrix},
        overall={"s": np.array([reference.counts[v] for v in labels], dtype=np.int64)},
        values={"s": labels},
    )
    return classes, reference, stats


def assert_agree(model: PrivacyModel, released: pl.DataFrame, source: pl.DataFrame) -> None:
    classes, reference, stats = statistics(released, source)
    rule = read(model)
    assert isinstance(rule, SensitiveRule)
    try:
        expected = model.satisfied_classes(stats).tolist()
    except InputError:
        # The model cannot judge this attribute (ordered values that are not
        # numbers); nor can the re-check.
        try:
            rule.prepare(reference)
        except InputError:
            return
        raise AssertionError(f"{model} refuses the attribute, the re-check does not") from None
    passes = rule.prepare(reference)
    assert [passes(c) for c in classes] == expected, (model, classes, reference.counts)


def tie(draw: st.DrawFn, measured: np.ndarray, high: float = math.inf) -> float:
    """A short decimal, or one class's own measure (a tie at the bound); in (0, ``high``]."""
    finite = [float(x) for x in measured if np.isfinite(x) and 0 < x <= high]
    if finite and draw(st.booleans()):
        return draw(st.sampled_from(finite))
    return float(draw(DECIMALS.filter(lambda x: x <= high)))


@settings(max_examples=150, deadline=None)
@given(table=tables(), data=st.data())
def test_l_diversities_agree(table: tuple[pl.DataFrame, pl.DataFrame], data: st.DataObject) -> None:
    released, source = table
    size = data.draw(st.integers(1, 4))
    entropy_l = data.draw(st.sampled_from([1, 1.5, 2, 2.5, 3, 4]))
    c = data.draw(st.sampled_from([0.5, 1, 1.5, 2, 2.5, 3, 0.1, 0.3]))
    for model in (
        DistinctLDiversity(attribute="s", l=size),
        EntropyLDiversity(attribute="s", l=entropy_l),
        RecursiveCLDiversity(attribute="s", c=c, l=size),
    ):
        assert_agree(model, released, source)


@settings(max_examples=150, deadline=None)
@given(table=tables(), data=st.data())
def test_t_closeness_agrees(table: tuple[pl.DataFrame, pl.DataFrame], data: st.DataObject) -> None:
    released, source = table
    _, _, stats = statistics(released, source)
    counts, overall = stats.sensitive["s"], stats.overall["s"]
    equal = EqualDistanceTCloseness(
        attribute="s", t=tie(data.draw, measures.emd_equal(counts, overall), high=1)
    )
    assert_agree(equal, released, source)
    tree = measures.value_tree(HIERARCHY, stats.values["s"])
    t = tie(data.draw, measures.emd_hierarchical(counts, overall, tree), high=1)
    assert_agree(
        HierarchicalDistanceTCloseness(attribute="s", t=t, hierarchy=HIERARCHY), released, source
    )
    # Ordered by the hierarchy's leaves (any values), or numerically (numbers only).
    order = measures.listed_order(stats.values["s"], HIERARCHY.leaves)
    t = tie(data.draw, measures.emd_ordered(counts, overall, order), high=1)
    listed = OrderedDistanceTCloseness(attribute="s", t=t, order=HIERARCHY.leaves)
    assert_agree(listed, released, source)
    assert_agree(OrderedDistanceTCloseness(attribute="s", t=t), released, source)


@settings(max_examples=100, deadline=None)
@given(table=tables(missing=False, suppressed=(("a", "3"), ("b", "10"))), data=st.data())
def test_numeric_ordered_t_closeness_agrees(
    table: tuple[pl.DataFrame, pl.DataFrame], data: st.DataObject
) -> None:
    released, source = table
    _, _, stats = statistics(released, source)
    order = measures.numeric_order(stats.values["s"])
    # The input holds "3" and "10": "10" ranks after "3" as a number, before it as text.
    values = stats.values["s"]
    assert order.tolist().index(values.index("10")) > order.tolist().index(values.index("3"))
    measured = measures.emd_ordered(stats.sensitive["s"], stats.overall["s"], order)
    model = OrderedDistanceTCloseness(attribute="s", t=tie(data.draw, measured, high=1))
    assert_agree(model, released, source)


@settings(max_examples=150, deadline=None)
@given(table=tables(), data=st.data())
def test_beta_likeness_and_delta_disclosure_agree(
    table: tuple[pl.DataFrame, pl.DataFrame], data: st.DataObject
) -> None:
    released, source = table
    _, _, stats = statistics(released, source)
    counts, overall = stats.sensitive["s"], stats.overall["s"]
    beta = tie(data.draw, measures.basic_beta(counts, overall))
    assert_agree(BasicBetaLikeness(attribute="s", beta=beta), released, source)
    beta = tie(data.draw, measures.enhanced_beta(counts, overall))
    assert_agree(EnhancedBetaLikeness(attribute="s", beta=beta), released, source)
    # A tie is impossible for delta (|ln r| of a rational r is irrational): decimals only.
    delta = data.draw(DECIMALS)
    assert_agree(DeltaDisclosurePrivacy(attribute="s", delta=delta), released, source)


@settings(max_examples=100, deadline=None)
@given(table=tables(), k=st.integers(1, 6))
def test_k_anonymity_agrees(table: tuple[pl.DataFrame, pl.DataFrame], k: int) -> None:
    released, _ = table
    sizes = np.array(class_sizes(released, ["q"]).to_list(), dtype=np.int64)
    expected = KAnonymity(k=k).satisfied_classes(ClassStatistics(sizes)).tolist()
    assert [k_anonymous(int(s), k) for s in sizes] == expected
