"""The independent check of local-recoding releases rejects every kind of bad release."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import polars as pl
import pytest

from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify import verify_local_recoding
from kanonym.verify.local import parse_range

SEX = Hierarchy("sex", (("F", "M", None), ("*", "*", "*")))
SOURCE = pl.DataFrame(
    {
        "name": ["a", "b", "c", "d"],
        "age": ["31", "38", "40", "-2"],
        "sex": ["F", "M", None, None],
        "note": ["x", "y", "z", "w"],
    }
)
# Released rows come from input rows 2, 0, 3, 1.
ORIGIN = np.array([2, 0, 3, 1])
GOOD = pl.DataFrame(
    {
        "age": ["31-40", "31-40", "-2-38", "-2-38"],
        "sex": ["*", "*", "*", "*"],
        "note": ["z", "x", "w", "y"],
    }
)


def _verify(released: pl.DataFrame, origin=ORIGIN, k: int = 2) -> None:
    verify_local_recoding(
        released,
        source=SOURCE,
        origin=origin,
        columns=["age", "sex"],
        numeric={"age"},
        hierarchies={"sex": SEX},
        k=k,
        removed_columns=["name"],
    )


def test_a_faithful_release_passes() -> None:
    _verify(GOOD)
    # The missing value may stand for itself.
    _verify(GOOD.with_columns(pl.Series("sex", ["*", "*", None, "*"])), k=1)


@pytest.mark.parametrize(
    ("released", "origin", "message"),
    [
        (
            GOOD.with_columns(pl.Series("age", ["31-39"] * 2 + ["-2-38"] * 2)),
            ORIGIN,
            "'31-39' does not cover '40'",
        ),
        (
            GOOD.with_columns(pl.Series("age", ["31-40", "31-40", "x", "x"])),
            ORIGIN,
            "'x' does not cover '-2'",
        ),
        (
            GOOD.with_columns(pl.Series("sex", ["F", "F", "*", "*"])),
            ORIGIN,
            "'F' does not cover None",
        ),
        (
            GOOD.with_columns(pl.Series("sex", ["*", "M", "*", "M"])),
            ORIGIN,
            "'M' does not cover 'F'",
        ),
        (
            GOOD.with_columns(pl.Series("note", ["z", "x", "w", "?"])),
            ORIGIN,
            "not a quasi-identifier",
        ),
        (GOOD, np.array([2, 0, 3, 3]), "exactly once"),
        (GOOD.head(3), ORIGIN[:3], "exactly once"),
        (GOOD.with_columns(pl.Series("name", ["a"] * 4)), ORIGIN, "identifying column"),
        (GOOD.drop("note"), ORIGIN, "expected ['age', 'sex', 'note']"),
    ],
)
def test_bad_releases_are_refused(released: pl.DataFrame, origin, message: str) -> None:
    with pytest.raises(VerificationError) as caught:
        _verify(released, origin)
    assert message in str(caught.value)


def test_a_release_below_k_is_refused() -> None:
    released = GOOD.with_columns(pl.Series("age", ["31-40", "31-40", "-2", "38"]))
    with pytest.raises(VerificationError, match="not 2-anonymous: 2 rows"):
        _verify(released)


def test_parse_range_reads_signed_and_exponent_numbers() -> None:
    assert parse_range("-5--1") == (Decimal(-5), Decimal(-1))
    assert parse_range("1e-3-2e-3") == (Decimal("0.001"), Decimal("0.002"))
    assert parse_range("2.5") == (Decimal("2.5"), Decimal("2.5"))
    assert parse_range("9-3") is None and parse_range("a-b") is None and parse_range("") is None
