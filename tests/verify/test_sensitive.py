"""Measures of sensitive attributes on hand-made tables, worked out by hand."""

from __future__ import annotations

import math

import polars as pl
import pytest

from kanonym.verify import classes as classes_module
from kanonym.verify import measure_sensitive, measure_table
from kanonym.verify import sensitive as sensitive_module

QI = ["Race", "DOB", "Sex", "ZIP"]


def seed_003_table() -> pl.DataFrame:
    """Seed 003 (Samarati, "Attribute disclosure"): a 2-anonymous table under the AG_ model.

    Classes: asian 64 F (hypertension, obesity, chest pain), asian 63 M (obesity
    twice), black 64 F (Carol's: short breath twice), white 64 F (Hellen's: chest
    pain, short breath).
    """
    rows = [
        ("asian", "64", "F", "941**", "hypertension"),
        ("asian", "64", "F", "941**", "obesity"),
        ("asian", "64", "F", "941**", "chest pain"),
        ("asian", "63", "M", "941**", "obesity"),
        ("asian", "63", "M", "941**", "obesity"),
        ("black", "64", "F", "941**", "short breath"),
        ("black", "64", "F", "941**", "short breath"),
        ("white", "64", "F", "941**", "chest pain"),
        ("white", "64", "F", "941**", "short breath"),
    ]
    return pl.DataFrame(rows, schema=[*QI, "Disease"], orient="row")


def test_seed_003_homogeneity_attack_shows_as_distinct_l_of_1() -> None:
    table = seed_003_table()
    assert measure_table(table, QI, 2).k_anonymous
    assert measure_sensitive(table, QI, "Disease").l_distinct == 1
    carol = table.filter((pl.col("Race") == "black") & (pl.col("Sex") == "F"))
    assert carol["Disease"].unique().to_list() == ["short breath"]
    # Tuple suppression would remove the two homogeneous classes; the rest is
    # distinct 2-diverse.
    kept = table.filter(~pl.col("Race").is_in(["black"]) & (pl.col("DOB") != "63"))
    assert measure_sensitive(kept, QI, "Disease").l_distinct == 2


def test_seed_003_background_knowledge_example_is_distinct_2_diverse() -> None:
    hellen = seed_003_table().filter((pl.col("Race") == "white") & (pl.col("Sex") == "F"))
    summary = measure_sensitive(hellen, QI, "Disease")
    assert summary.l_distinct == 2  # chest pain or short breath: 2-diverse all the same
    assert summary.l_entropy == pytest.approx(2.0)


def test_seed_003_every_measure() -> None:
    s = measure_sensitive(seed_003_table(), QI, "Disease")
    # P: hypertension 1/9, obesity 3/9, chest pain 2/9, short breath 3/9.
    assert s.l_distinct == 1
    assert s.l_entropy == 1.0  # two classes of one value: entropy 0
    assert s.recursive_c_l == (0.0, 1)  # l = 1 always holds, for every c > 0
    assert s.alpha_k == (1.0, 2)
    # Equal distance: asian 64 F ½(2/9 + 0 + 1/9 + 3/9) = 1/3; asian 63 M and black
    # 64 F ½(12/9) = 2/3; white 64 F ½(1/9 + 3/9 + 2.5/9 + 1.5/9) = 4/9.
    assert s.t_equal == pytest.approx(2 / 3)
    assert s.t_ordered is None
    assert s.reasons["t_ordered"] == "'Disease' is not ordered: value 'chest pain' is not a number"
    # Gains: hypertension (1/3 - 1/9) / (1/9) = 2 in asian 64 F; obesity and short
    # breath (1 - 1/3) / (1/3) = 2 in the homogeneous classes.
    assert s.beta_basic == pytest.approx(2.0)
    # Obesity's gain 2 in asian 63 M exceeds its cap -ln(1/3) = 1.099.
    assert s.beta_enhanced is None
    assert s.reasons["beta_enhanced"].startswith(
        "no beta satisfies enhanced beta-likeness: value 'obesity' has share 1 in a class of "
        "2 rows against 0.3333 in the table, a relative gain of 2 above its cap -ln p = 1.099"
    )
    # |ln(q/p)|: ln 3 for hypertension in asian 64 F and for both homogeneous classes.
    assert s.delta_disclosure == pytest.approx(math.log(3))


def test_a_table_of_one_class_matches_its_own_distribution() -> None:
    table = pl.DataFrame({"zip": ["1"] * 4, "salary": ["30", "40", "40", "50"]})
    s = measure_sensitive(table, ["zip"], "salary")
    assert (s.t_equal, s.t_ordered, s.beta_basic, s.beta_enhanced, s.delta_disclosure) == (
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    )
    assert s.l_distinct == 3
    assert s.l_entropy == pytest.approx(math.exp(1.5 * math.log(2)))  # H = ln 2^1.5
    # r = (2, 1, 1), l = 3: c = 2 / 1.
    assert s.recursive_c_l == (2.0, 3)
    assert s.alpha_k == (0.5, 4)


def test_ordered_distance_on_numbers_in_numeric_order() -> None:
    # P uniform over 9, 10, 11; class {9, 11} is 1/6 away, class {10} 1/3.
    table = pl.DataFrame({"zip": ["a", "a", "b"], "score": ["9", "11", "10"]})
    s = measure_sensitive(table, ["zip"], "score")
    assert s.t_ordered == pytest.approx(1 / 3)
    assert s.t_equal == pytest.approx(2 / 3)  # {10}: ½(1/3 + 2/3 + 1/3)


def test_numeric_column_types_are_measured_like_their_text() -> None:
    text = pl.DataFrame({"zip": ["a", "a", "b"], "score": ["9", "11", "10"]})
    numbers = text.with_columns(pl.col("score").cast(pl.Int64))
    assert measure_sensitive(numbers, ["zip"], "score") == measure_sensitive(text, ["zip"], "score")


def test_missing_values_are_values_but_have_no_order() -> None:
    table = pl.DataFrame({"zip": ["a", "a", None, None], "score": ["1", None, "1", None]})
    s = measure_sensitive(table, ["zip"], "score")
    assert s.l_distinct == 2
    assert s.t_equal == 0.0
    assert s.t_ordered is None
    assert "missing value" in s.reasons["t_ordered"]


def test_an_empty_table_has_no_measures() -> None:
    table = pl.DataFrame({"zip": [], "score": []}, schema={"zip": pl.String, "score": pl.String})
    s = measure_sensitive(table, ["zip"], "score")
    assert s.as_dict()["l_distinct"] is None
    assert s.as_dict()["l_distinct_reason"] == "the table has no rows"
    assert all(s.reasons[key] == "the table has no rows" for key in sensitive_module.KEYS)


def test_as_dict_has_the_reason_right_after_a_null() -> None:
    s = measure_sensitive(seed_003_table(), QI, "Disease")
    keys = list(s.as_dict())
    assert keys == [
        "l_distinct",
        "l_entropy",
        "recursive_c_l",
        "alpha_k",
        "t_equal",
        "t_ordered",
        "t_ordered_reason",
        "beta_basic",
        "beta_enhanced",
        "beta_enhanced_reason",
        "delta_disclosure",
    ]
    assert s.as_dict()["recursive_c_l"] == [0.0, 1]


def test_batching_the_classes_gives_the_same_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    table = pl.DataFrame(
        {
            "zip": [str(i % 7) for i in range(60)],
            "score": [str((i * 37) % 11) for i in range(60)],
        }
    )
    whole = measure_sensitive(table, ["zip"], "score").as_dict()
    monkeypatch.setattr(classes_module, "_CLASSES_PER_BATCH", 1)  # one class at a time
    assert measure_sensitive(table, ["zip"], "score").as_dict() == whole
