"""The independent re-check of cell-suppressed releases catches every kind of fault."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify import verify_cells

ZIP = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"), ("*",) * 3))
SEX = Hierarchy("sex", (("F", "M", None), ("*", "*", "*")))
SOURCE = pl.DataFrame(
    {
        "name": ["a", "b", "c", "d"],
        "zip": ["02138", "02139", "02141", "02141"],
        "sex": ["F", "F", "M", None],
    }
)


def _check(released: pl.DataFrame, rows=(0, 1, 2, 3), k: int = 2, max_rows: int = 2, **kw):
    return verify_cells(
        released,
        source=SOURCE,
        source_rows=np.asarray(rows, dtype=np.int64),
        columns=["zip", "sex"],
        hierarchies={"zip": ZIP, "sex": SEX},
        levels=kw.pop("levels", {"zip": 1, "sex": 0}),
        k=k,
        max_rows=max_rows,
        removed_columns=kw.pop("removed", ["name"]),
    )


GOOD = pl.DataFrame({"zip": ["0213*", "0213*", "0214*", "0214*"], "sex": ["F", "F", "*", "*"]})


def test_a_valid_release_passes_with_its_counts() -> None:
    counts = _check(GOOD)
    assert counts.by_attribute == {"zip": 0, "sex": 2} and counts.rows == 2 and counts.total == 2


def test_rows_are_compared_with_their_source_rows() -> None:
    shuffled = GOOD[[2, 0, 3, 1]]
    assert _check(shuffled, rows=(2, 0, 3, 1)).total == 2
    with pytest.raises(VerificationError, match=r"'zip' holds '0214\*' where its row's value"):
        _check(shuffled, rows=(0, 1, 2, 3))


def test_a_value_neither_generalized_nor_the_root_fails() -> None:
    bad = GOOD.with_columns(pl.Series("zip", ["0213*", "02139", "0214*", "0214*"]))
    with pytest.raises(VerificationError, match="'zip' holds '02139'"):
        _check(bad)


def test_a_missing_value_is_a_value_of_its_own() -> None:
    released = GOOD.with_columns(pl.Series("sex", ["F", "F", "M", None]))
    with pytest.raises(VerificationError, match="not 2-anonymous"):
        _check(released, max_rows=0)
    counts = _check(GOOD.with_columns(pl.Series("sex", ["F", "F", "*", "*"])))
    assert counts.by_attribute["sex"] == 2


def test_too_many_touched_rows_fail() -> None:
    with pytest.raises(VerificationError, match="blanks cells in 2 rows; the limit is 1"):
        _check(GOOD, max_rows=1)


def test_not_k_anonymous_fails() -> None:
    with pytest.raises(VerificationError, match="not 3-anonymous"):
        _check(GOOD, k=3)


def test_a_removed_row_fails() -> None:
    with pytest.raises(VerificationError, match="releases every input row once"):
        _check(GOOD.head(3), rows=(0, 1, 2))
    with pytest.raises(VerificationError, match="releases every input row once"):
        _check(GOOD, rows=(0, 1, 2, 2))


def test_an_identifying_column_fails() -> None:
    with pytest.raises(VerificationError, match="identifying column"):
        _check(GOOD.with_columns(name=pl.lit("x")))


def test_a_generalized_root_is_not_counted_as_blanked() -> None:
    released = pl.DataFrame({"zip": ["*"] * 4, "sex": ["F", "F", "*", "*"]})
    counts = _check(released, levels={"zip": 2, "sex": 0})
    assert counts.by_attribute == {"zip": 0, "sex": 2}
