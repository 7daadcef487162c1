"""SafePub's score functions: worked values, and their sensitivities as properties."""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.strategies import problems

from kanonym.encode import encode
from kanonym.errors import InputError
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice, Node
from kanonym.metrics import METRICS
from kanonym.models import KAnonymity
from kanonym.search.safepub_scores import (
    METRIC_SCORES,
    SCORES,
    ScoreTables,
    raw_score,
    score_node,
    sensitivity,
)

AGE = Hierarchy("age", (("30", "31", "40", "41"), ("3*", "3*", "4*", "4*"), ("*",) * 4))
SEX = Hierarchy("sex", (("F", "M"), ("*", "*")))


def _scores(
    table: pl.DataFrame, hs: dict[str, Hierarchy], k: int, node: Node, rows: int
) -> dict[str, Fraction]:
    """Every raw score of ``node`` for ``table`` (the sample) drawn from ``rows`` rows."""
    encoded = encode(table, hs)
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=table.height)
    tables = ScoreTables.of(encoded)
    view = evaluator.view(node)
    return {name: raw_score(name, tables, node, view, k=k, input_rows=rows) for name in SCORES}


def test_worked_example() -> None:
    # 5 sampled rows of 7; k = 2 at node (1, 0): classes 3*/F (2), 3*/M (1), 4*/F (2).
    sample = pl.DataFrame({"age": ["30", "31", "30", "40", "41"], "sex": ["F", "F", "M", "F", "F"]})
    raw = _scores(sample, {"age": AGE, "sex": SEX}, 2, (1, 0), 7)
    # Kept: 4 rows; suppressed: 1 sampled + 2 not drawn = 3 records.
    # Granularity: age shares 2/4 each, sex 1/2: (4 * 2/4 + 3) + (4 * 1/2 + 3) = 10, over d = 2.
    assert raw["granularity"] == Fraction(-10, 2)
    # Intensity: (4 * 1/2 + 3) + (4 * 0 + 3) = 8, over 2.
    assert raw["intensity"] == Fraction(-8, 2)
    # Discernibility: 2^2 + 2^2 + 7 * 3 = 29, over N = 7.
    assert raw["discernibility"] == Fraction(-29, 7)
    # Entropy: age values 3*, 4* (2 each): 8 + 7 * 3; sex F (4): 16 + 7 * 3; over N * d = 14.
    assert raw["entropy"] == Fraction(-(8 + 21 + 16 + 21), 14)
    # Group size: two kept classes, plus one for the suppressed records.
    assert raw["group-size"] == 3
    assert sensitivity("discernibility", 2) == 5
    assert score_node(
        "entropy",
        ScoreTables.of(encode(sample, {"age": AGE, "sex": SEX})),
        (1, 0),
        NodeEvaluator(
            encode(sample, {"age": AGE, "sex": SEX}), [KAnonymity(k=2)], max_suppressed_rows=5
        ).view((1, 0)),
        k=2,
        input_rows=7,
    ) == float(Fraction(-66, 14) / 5)


def test_root_values_count_as_suppressed_for_entropy() -> None:
    sample = pl.DataFrame({"age": ["30", "31", "40", "41"], "sex": ["F", "F", "F", "F"]})
    raw = _scores(sample, {"age": AGE, "sex": SEX}, 1, (2, 0), 4)
    # age at the root: every record adds N = 4; sex F: 4^2.
    assert raw["entropy"] == Fraction(-(16 + 16), 8)


def test_every_metric_maps_to_a_score() -> None:
    assert set(METRIC_SCORES.values()) <= set(SCORES)
    assert set(METRIC_SCORES) <= set(METRICS)


def test_refuses_an_evaluator_keeping_other_classes() -> None:
    sample = pl.DataFrame({"age": ["30", "31"], "sex": ["F", "F"]})
    encoded = encode(sample, {"age": AGE, "sex": SEX})
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=1)], max_suppressed_rows=2)
    with pytest.raises(InputError, match="`evaluator` must keep exactly") as error:
        raw_score(
            "granularity",
            ScoreTables.of(encoded),
            (0, 0),
            evaluator.view((0, 0)),
            k=2,
            input_rows=2,
        )
    assert "\n" not in str(error.value)


def test_refuses_an_unknown_score() -> None:
    with pytest.raises(InputError, match="`score` must be one of"):
        sensitivity("utility", 2)


@st.composite
def neighbours(
    draw: st.DrawFn,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Hierarchy], int, int, Node]:
    """A sample of a table, the sample of the table with one record more, the hierarchies,
    N (the table's rows), k and a node."""
    table, hs = draw(problems())
    drawn = draw(st.lists(st.booleans(), min_size=table.height, max_size=table.height))
    extra = {name: draw(st.sampled_from(h.leaves)) for name, h in hs.items()}
    extra_drawn = draw(st.booleans())
    k = draw(st.integers(1, 4))
    heights = tuple(h.height for h in hs.values())
    node = tuple(draw(st.integers(0, height)) for height in heights)
    sample = table.filter(pl.Series(drawn, dtype=pl.Boolean))
    bigger = (
        pl.concat([sample, pl.DataFrame([extra], schema=sample.schema)]) if extra_drawn else sample
    )
    return sample, bigger, hs, table.height, k, node


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(neighbours())
def test_one_record_changes_each_score_by_at_most_its_sensitivity(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[str, Hierarchy], int, int, Node],
) -> None:
    sample, bigger, hs, rows, k, node = case
    assume(sample.height > 0)
    before = _scores(sample, hs, k, node, rows)
    after = _scores(bigger, hs, k, node, rows + 1)
    for name in SCORES:
        change = abs(after[name] - before[name]) / sensitivity(name, k)
        assert change <= 1, (name, float(change))


def test_scores_need_no_lattice_beyond_the_hierarchies() -> None:
    # A bounded lattice's nodes score like any other: only levels are read.
    sample = pl.DataFrame({"age": ["30", "40"], "sex": ["F", "M"]})
    encoded = encode(sample, {"age": AGE, "sex": SEX})
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=1)], max_suppressed_rows=2)
    lattice = Lattice(encoded.heights, (1, 0))
    tables = ScoreTables.of(encoded)
    values = [
        score_node("intensity", tables, node, evaluator.view(node), k=1, input_rows=2)
        for node in (lattice.bottom, lattice.top)
    ]
    assert values[0] > values[1]
    # At the top each of the 2 rows costs 1 per attribute: -(2 + 2) / 2.
    assert values[1] == -2.0
