"""Issue 15, point 1: the re-check reads Mondrian's half-open ranges ``[lo, hi)``.

Columns that are not all integers are released as half-open boxes whose
upper edge is no member's value; the independent re-check must accept a
range that holds the number and refuse one whose open end is the number.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import polars as pl
import pytest

from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify import verify_local_recoding

SOURCE = pl.DataFrame({"bmi": ["18.5", "22.25", "25", "31.7"], "sex": ["F", "M", "F", "M"]})
SEX = Hierarchy("sex", (("F", "M"), ("*", "*")))


def _verify(labels: list[str]) -> None:
    verify_local_recoding(
        pl.DataFrame({"bmi": labels, "sex": ["*"] * 4}),
        source=SOURCE,
        origin=np.arange(4),
        columns=["bmi", "sex"],
        numeric={"bmi"},
        hierarchies={"sex": SEX},
        k=2,
        removed_columns=[],
    )


@pytest.mark.parametrize(
    "wrong",
    [
        # 25 is the open end of the first range: not in it.
        ["[15, 25)", "[15, 25)", "[15, 25)", "[25, 35)"],
        ["[15, 22.25)", "[15, 22.25)", "[22.25, 35)", "[22.25, 35)"],
        # Not ranges: reversed, empty, without the space the release writes.
        ["[22.5, 15)", "[22.5, 15)", "[22.5, 35)", "[22.5, 35)"],
        ["[15,22.5)", "[15,22.5)", "[22.5, 35)", "[22.5, 35)"],
    ],
)
def test_issue15_p1_recheck_reads_half_open_ranges(wrong: list[str]) -> None:
    _verify(["[15, 22.5)", "[15, 22.5)", "[22.5, 35)", "[22.5, 35)"])
    with pytest.raises(VerificationError, match="does not cover"):
        _verify(wrong)


def test_issue15_p1_parse_interval_tells_closed_from_half_open() -> None:
    from kanonym.verify.local import parse_interval

    assert parse_interval("[-0.5, 1E+3)") == (Decimal("-0.5"), Decimal("1000"), False)
    assert parse_interval("-5--1") == (Decimal(-5), Decimal(-1), True)
    assert parse_interval("2.5") == (Decimal("2.5"), Decimal("2.5"), True)
    assert parse_interval("[1, 1)") is None and parse_interval("[x, 2)") is None
