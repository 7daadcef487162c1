"""The independent re-check, on seed 000's figures and on broken releases."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify import measure, verify_release


def sweeney_figure_2() -> pl.DataFrame:
    """Sweeney 2002, Figure 2: a table adhering to 2-anonymity on {Race, Birth, Gender, ZIP}."""
    rows = [
        ("Black", "1965", "m", "0214*", "short breath"),
        ("Black", "1965", "m", "0214*", "chest pain"),
        ("Black", "1965", "f", "0213*", "hypertension"),
        ("Black", "1965", "f", "0213*", "hypertension"),
        ("Black", "1964", "f", "0213*", "obesity"),
        ("Black", "1964", "f", "0213*", "chest pain"),
        ("White", "1964", "m", "0213*", "chest pain"),
        ("White", "1964", "m", "0213*", "obesity"),
        ("White", "1964", "m", "0213*", "short breath"),
        ("White", "1967", "m", "0213*", "chest pain"),
        ("White", "1967", "m", "0213*", "chest pain"),
    ]
    return pl.DataFrame(rows, schema=["Race", "Birth", "Gender", "ZIP", "Problem"], orient="row")


QI = ["Race", "Birth", "Gender", "ZIP"]


def test_figure_2_is_2_anonymous_and_not_3_anonymous() -> None:
    assert measure(sweeney_figure_2(), QI, 2).k_anonymous
    three = measure(sweeney_figure_2(), QI, 3)
    assert not three.k_anonymous
    assert three.smallest_class == 2
    assert three.rows_below_k == 8  # classes of 2, 2, 2 and 2 rows; 3 white 1964 males pass


def sweeney_figure_3() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Sweeney 2002, Figure 3: GT1 (race to Person) and GT2 (ZIP to 0213*/0214*).

    The paper prints GT2's ZIPs garbled as 02130/02140; they stand for 0213*/0214*.
    """
    zips = ["02138", "02139", "02141", "02142"]
    gt1 = pl.DataFrame({"Race": ["Person"] * 12, "ZIP": zips * 3})
    races = [r for r in ("Asian", "Black", "White") for _ in range(4)]
    gt2 = pl.DataFrame({"Race": races, "ZIP": ["0213*", "0213*", "0214*", "0214*"] * 3})
    return gt1, gt2


def test_figure_3_tables_are_2_anonymous() -> None:
    gt1, gt2 = sweeney_figure_3()
    assert measure(gt1, ["Race", "ZIP"], 2).k_anonymous
    assert measure(gt2, ["Race", "ZIP"], 2).k_anonymous
    assert not measure(gt1, ["Race", "ZIP"], 4).k_anonymous


def test_missing_values_group_together_and_apart_from_others() -> None:
    table = pl.DataFrame({"a": [None, None, "x"]}, schema={"a": pl.String})
    summary = measure(table, ["a"], 2)
    assert (summary.classes, summary.smallest_class, summary.rows_below_k) == (2, 1, 1)


def test_k_larger_than_the_table_is_not_k_anonymous() -> None:
    assert not measure(sweeney_figure_2(), QI, 12).k_anonymous


def _flat(values: list[str]) -> Hierarchy:
    """The released values as leaves, each generalized to '*'."""
    leaves = tuple(sorted(set(values)))
    return Hierarchy("flat", (leaves, ("*",) * len(leaves)))


def _verify(table: pl.DataFrame, **overrides) -> None:
    """Figure 2 as both the input and its release at level 0 (every row its own source)."""
    hierarchies = {q: _flat(table[q].to_list()) for q in QI}
    arguments = {
        "source": table,
        "source_rows": np.arange(table.height, dtype=np.int64),
        "columns": QI,
        "hierarchies": hierarchies,
        "levels": dict.fromkeys(QI, 0),
        "k": 2,
        "suppressed_rows": 0,
        "max_suppressed_rows": 0,
        "removed_columns": [],
    }
    arguments.update(overrides)
    verify_release(table, **arguments)


def test_verify_accepts_figure_2() -> None:
    _verify(sweeney_figure_2())


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"k": 3}, "not 3-anonymous"),
        ({"suppressed_rows": 2}, "suppresses 0 rows; the report counts 2"),
        ({"removed_columns": ["Problem"]}, "identifying"),
        ({"levels": {**dict.fromkeys(QI, 0), "ZIP": 1}}, r"'0214\*' where its input value"),
        ({"columns": [*QI, "Name"]}, "lacks"),
        ({"source_rows": np.arange(1, 12) % 11}, "row 5, column 'Race': 'Black' where"),
    ],
)
def test_verify_rejects_broken_releases(overrides, message) -> None:
    with pytest.raises(VerificationError, match=message):
        _verify(sweeney_figure_2(), **overrides)


def test_verify_rejects_more_suppression_than_the_limit() -> None:
    figure = sweeney_figure_2()
    released = figure.head(9)
    with pytest.raises(VerificationError, match="suppresses 2 rows; the limit is 1"):
        _verify(
            released,
            source=figure,
            source_rows=np.arange(9, dtype=np.int64),
            hierarchies={q: _flat(figure[q].to_list()) for q in QI},
            suppressed_rows=2,
            max_suppressed_rows=1,
        )
