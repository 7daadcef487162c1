"""Encoding of sensitive attributes: value codes and per-tuple histograms.

Models such as l-diversity and t-closeness judge a class by the distribution
of a sensitive attribute inside it. Each sensitive column is encoded once to
dense codes, and the frequency set gets, per sensitive attribute, a histogram
per distinct quasi-identifier tuple (ARX keeps the same per-class
distributions). Classes then add up their tuples' histograms.

Values are ordered numerically when every present value is a number (so
that the ordered distance of t-closeness follows the numbers), otherwise as
strings; the missing value is a value of its own, last. An attribute counts
as ``numeric`` only when it has no missing value, since a missing value has no
place on the number line.

Example:
    >>> import polars as pl
    >>> a = encode_sensitive(pl.DataFrame({"s": ["10", "9", "10", None]}), ["s"])[0]
    >>> a.labels, a.row_codes.tolist(), a.numeric
    (('9', '10', None), [1, 0, 1, 2], False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.encode.frequency import FrequencySet

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class SensitiveAttribute:
    """One sensitive column, encoded.

    Attributes:
        name: the column.
        labels: the value of each code, in order.
        row_codes: code of every row.
        numeric: whether every value (missing aside) is a number and none is
            missing, so that the values have a natural order and distance.
    """

    name: str
    labels: tuple[str | None, ...]
    row_codes: IntArray
    numeric: bool

    def histograms(self, frequency_set: FrequencySet) -> IntArray:
        """``(tuples, values)``: how many rows of each tuple hold each value."""
        n_tuples, n_values = len(frequency_set.counts), len(self.labels)
        flat = frequency_set.rows() * n_values + self.row_codes
        return np.bincount(flat, minlength=n_tuples * n_values).reshape(n_tuples, n_values)

    def overall(self) -> IntArray:
        """Rows holding each value, over the whole table."""
        return np.bincount(self.row_codes, minlength=len(self.labels))


def _number(value: str) -> Decimal | None:
    try:
        number = Decimal(value.strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def encode_sensitive(frame: pl.DataFrame, names: Sequence[str]) -> tuple[SensitiveAttribute, ...]:
    """Encode the sensitive columns ``names`` of ``frame`` (compared as strings)."""
    encoded = []
    for name in names:
        column = frame.get_column(name).cast(pl.String)
        values = column.unique().to_list()
        present = [v for v in values if v is not None]
        numbers = {v: _number(v) for v in present}
        all_numbers = bool(present) and all(n is not None for n in numbers.values())
        if all_numbers:
            present.sort(key=lambda v: (numbers[v], v))
        else:
            present.sort()
        numeric = all_numbers and None not in values
        labels: tuple[str | None, ...] = (*present, None) if None in values else tuple(present)
        code_of = {label: code for code, label in enumerate(labels)}
        row_codes = column.replace_strict(code_of, return_dtype=pl.Int64).to_numpy()
        encoded.append(
            SensitiveAttribute(
                name=name,
                labels=labels,
                row_codes=np.ascontiguousarray(row_codes, dtype=np.int64),
                numeric=numeric,
            )
        )
    return tuple(encoded)
