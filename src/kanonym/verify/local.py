"""Re-checking a local-recoding release against its input, row by row.

A local recoding (Mondrian) releases every row with its own class's labels,
so the check compares each released row with the input row it came from:
its numeric cells must be ranges holding the original number, inclusive
``lo-hi``, half-open ``[lo, hi)``, or a single number, its categorical cells
the original value or one of its ancestors in the column's hierarchy. The
labels are parsed here, from the text, with nothing taken from
:mod:`kanonym.recoding`. Then the released rows are grouped by their labels
and counted, as ``kanonym check`` would.

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> source = pl.DataFrame({"age": ["31", "38", "40"], "sex": ["F", "M", "F"]})
    >>> released = pl.DataFrame({"age": ["31-38", "31-38", "38-40"], "sex": ["*", "*", "*"]})
    >>> sex = Hierarchy("sex", (("F", "M"), ("*", "*")))
    >>> verify_local_recoding(released, source=source, origin=np.array([0, 2, 1]),
    ...                       columns=["age", "sex"], numeric={"age"},
    ...                       hierarchies={"sex": sex}, k=1, removed_columns=[])
    Traceback (most recent call last):
    ...
    kanonym.errors.VerificationError: release row 1, column 'age': '31-38' does not cover '40'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify.check import ClassSizeSummary, require_k_anonymous, require_removed


def _decimal(text: str) -> Decimal | None:
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def parse_range(label: str) -> tuple[Decimal, Decimal] | None:
    """The bounds of a numeric label ``lo-hi`` or ``v``; None if it is neither.

    A minus sign inside a number only starts it or follows its exponent, so
    at most one ``-`` separates two numbers.

    Example:
        >>> parse_range("-5--1"), parse_range("1e-3-2"), parse_range("7"), parse_range("x")
        ((Decimal('-5'), Decimal('-1')), (Decimal('0.001'), Decimal('2')), \
(Decimal('7'), Decimal('7')), None)
    """
    single = _decimal(label)
    if single is not None:
        return single, single
    for at, char in enumerate(label):
        if char == "-" and at:
            low, high = _decimal(label[:at]), _decimal(label[at + 1 :])
            if low is not None and high is not None and low <= high:
                return low, high
    return None


def parse_interval(label: str) -> tuple[Decimal, Decimal, bool] | None:
    """The bounds of a numeric label and whether the upper one is included; None if not one.

    ``lo-hi`` and ``v`` include both bounds (:func:`parse_range`); ``[lo, hi)``,
    with lo < hi, is half-open: it holds lo but not hi.

    Example:
        >>> parse_interval("[0.25, 1)"), parse_interval("30-39")
        ((Decimal('0.25'), Decimal('1'), False), (Decimal('30'), Decimal('39'), True))
        >>> parse_interval("[1, 1)") is None and parse_interval("[1,2)") is None
        True
    """
    if label.startswith("[") and label.endswith(")"):
        low_text, comma, high_text = label[1:-1].partition(", ")
        if not comma or " " in low_text or " " in high_text:
            return None
        low, high = _decimal(low_text), _decimal(high_text)
        if low is None or high is None or not low < high:
            return None
        return low, high, False
    closed = parse_range(label)
    return None if closed is None else (closed[0], closed[1], True)


def _covers_numbers(pairs: list[tuple[str | None, str | None]]) -> list[bool]:
    """For each (label, value), whether the label is a range holding the value's number."""
    # Each distinct label and value is parsed once, however many pairs hold it.
    bounds = {label: None if label is None else parse_interval(label) for label, _ in pairs}
    numbers = {value: None if value is None else _decimal(value) for _, value in pairs}
    covered = []
    for label, value in pairs:
        span, number = bounds[label], numbers[value]
        covered.append(
            span is not None
            and number is not None
            and span[0] <= number
            and (number <= span[1] if span[2] else number < span[1])
        )
    return covered


def uncovered(
    pairs: Sequence[tuple[str | None, str | None]], *, numeric: bool, hierarchy: Hierarchy | None
) -> list[tuple[str | None, str | None]]:
    """The (label, value) pairs whose label does not cover the value, sorted as text.

    A numeric column's label must be a range holding the value's number
    (:func:`parse_interval`); any other column's the value itself or one of its
    ancestors in ``hierarchy`` (its path up the hierarchy's levels).

    Example:
        >>> uncovered([("30-39", "34"), ("30-39", "41"), ("[0, 5)", "5")], numeric=True,
        ...           hierarchy=None)
        [('30-39', '41'), ('[0, 5)', '5')]
    """
    if numeric:
        covered = _covers_numbers(list(pairs))
    else:
        if hierarchy is None:
            raise ValueError("a categorical column is checked against its hierarchy")
        # A leaf's path up the hierarchy: the values it may be released as.
        ancestors = {path[0]: set(path) for path in zip(*hierarchy.levels, strict=True)}
        covered = [label in ancestors.get(value, ()) for label, value in pairs]
    wrong = [pair for pair, ok in zip(pairs, covered, strict=True) if not ok]
    return sorted(wrong, key=lambda pair: (str(pair[0]), str(pair[1])))


def verify_local_recoding(
    released: pl.DataFrame,
    *,
    source: pl.DataFrame,
    origin: npt.NDArray[np.int64],
    columns: Sequence[str],
    numeric: Collection[str],
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    removed_columns: Collection[str],
) -> ClassSizeSummary:
    """Raise VerificationError unless ``released`` is a faithful k-anonymous recoding of ``source``.

    ``columns`` names the quasi-identifier columns and ``origin[i]`` is the
    input row that released row i comes from. Checks:
    no removed column is present and every other input column is; every
    input row is released exactly once (local recoding suppresses nothing);
    the columns that are not quasi-identifiers hold the input's values; every
    numeric quasi-identifier cell is a range holding the input's number
    (:func:`parse_interval`) and
    every other one the input's value or an ancestor of it in
    ``hierarchies``; grouped by the quasi-identifiers, every class holds at
    least k rows.
    """
    require_removed(released, removed_columns)
    expected = [c for c in source.columns if c not in removed_columns]
    if released.columns != expected:
        raise VerificationError(f"release has columns {released.columns}, expected {expected}")
    n = source.height
    if (
        released.height != n
        or len(origin) != n
        or not np.array_equal(np.bincount(origin, minlength=n), np.ones(n, dtype=np.int64))
    ):
        raise VerificationError(
            f"release does not hold every one of the {n} input rows exactly once"
        )
    originals = source[origin]
    others = [c for c in expected if c not in columns]
    if not released.select(others).equals(originals.select(others)):
        raise VerificationError("release changed a column that is not a quasi-identifier")
    for column in columns:
        pairs = pl.DataFrame(
            {
                "label": released.get_column(column).cast(pl.String),
                "value": originals.get_column(column).cast(pl.String),
            }
        )
        wrong = uncovered(
            pairs.unique().rows(), numeric=column in numeric, hierarchy=hierarchies.get(column)
        )
        if wrong:
            label, value = wrong[0]
            row = int(
                pairs.with_row_index("row").filter(
                    pl.col("label").eq_missing(label) & pl.col("value").eq_missing(value)
                )["row"][0]
            )
            raise VerificationError(
                f"release row {row}, column '{column}': {label!r} does not cover {value!r}"
            )
    return require_k_anonymous(released, columns, k)
