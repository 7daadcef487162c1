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

from kanonym.encode.encoding import EncodedTable
from kanonym.encode.frequency import FrequencySet
from kanonym.encode.grouping import Grouped

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


def sensitive_labels(values: Sequence[str | None]) -> tuple[tuple[str | None, ...], bool]:
    """The codes' values of a sensitive attribute (numeric or text order, missing last) and
    whether it is ``numeric`` (module docstring), from its distinct values.

    Example:
        >>> sensitive_labels(["10", None, "9"])
        (('9', '10', None), False)
    """
    present = [v for v in values if v is not None]
    numbers = {v: _number(v) for v in present}
    all_numbers = bool(present) and all(n is not None for n in numbers.values())
    if all_numbers:
        present.sort(key=lambda v: (numbers[v], v))
    else:
        present.sort()
    has_missing = any(v is None for v in values)
    numeric = all_numbers and not has_missing
    labels: tuple[str | None, ...] = (*present, None) if has_missing else tuple(present)
    return labels, numeric


def encode_sensitive(frame: pl.DataFrame, names: Sequence[str]) -> tuple[SensitiveAttribute, ...]:
    """Encode the sensitive columns ``names`` of ``frame`` (compared as strings)."""
    encoded = []
    for name in names:
        column = frame.get_column(name).cast(pl.String)
        labels, numeric = sensitive_labels(column.unique().to_list())
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


@dataclass(frozen=True, eq=False)
class GroupedSensitiveAttribute:
    """One sensitive column counted per frequency-set tuple, without its rows.

    What an engine that keeps the rows elsewhere gives the models: one
    ``GROUP BY`` over the quasi-identifiers and the sensitive column
    (:func:`encode_grouped_sensitive`). Same meaning as
    :class:`SensitiveAttribute`'s :meth:`~SensitiveAttribute.histograms` and
    :meth:`~SensitiveAttribute.overall`.

    Attributes:
        name: the column.
        labels: the value of each code, in order (as :func:`sensitive_labels`).
        numeric: as :class:`SensitiveAttribute`'s.
        tuple_histograms: ``(tuples, values)`` rows of each tuple holding each value.
    """

    name: str
    labels: tuple[str | None, ...]
    numeric: bool
    tuple_histograms: IntArray

    def histograms(self, frequency_set: FrequencySet) -> IntArray:
        """``(tuples, values)``: how many rows of each tuple hold each value."""
        if len(frequency_set.counts) != self.tuple_histograms.shape[0]:
            raise ValueError("the histograms were counted for another frequency set")
        return self.tuple_histograms

    def overall(self) -> IntArray:
        """Rows holding each value, over the whole table."""
        overall: IntArray = self.tuple_histograms.sum(axis=0)
        return overall


def encode_grouped_sensitive(
    grouped: Grouped, encoded: EncodedTable, names: Sequence[str]
) -> tuple[GroupedSensitiveAttribute, ...]:
    """Per sensitive column in ``names``, its histogram in every tuple of ``encoded``'s
    frequency set, from ``grouped``: the distinct (quasi-identifiers, sensitive columns)
    tuples of the raw table with their counts (one ``GROUP BY`` where the rows live).

    Raises:
        ValueError: a grouped tuple is not in the frequency set (``grouped`` was
            counted from another table).

    Example:
        >>> import polars as pl
        >>> from kanonym.encode import encode
        >>> from kanonym.hierarchy import Hierarchy
        >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*")))
        >>> enc = encode(pl.DataFrame({"zip": ["02138", "02139", "02138"]}), {"zip": h})
        >>> rows = pl.DataFrame({"zip": ["02138", "02138", "02139"], "d": ["flu", "hiv", "flu"]})
        >>> a = encode_grouped_sensitive(Grouped(rows, np.array([1, 1, 1])), enc, ["d"])[0]
        >>> a.labels, a.tuple_histograms.tolist()
        (('flu', 'hiv'), [[1, 1], [1, 0]])
    """
    names_qi = encoded.names
    tuples = encoded.frequency_set.codes
    keys = [f"kanonym_code_{j}" for j in range(len(names_qi))]
    index = pl.DataFrame(
        {
            **{key: tuples[:, j].astype(np.int64) for j, key in enumerate(keys)},
            "kanonym_tuple": np.arange(len(tuples), dtype=np.int64),
        }
    )
    frame = grouped.values.with_columns(pl.Series("kanonym_count", grouped.counts, pl.Int64))
    for j, (name, attribute) in enumerate(zip(names_qi, encoded.attributes, strict=True)):
        leaves = pl.DataFrame(
            {
                name: pl.Series(list(attribute.level_labels[0]), dtype=pl.String),
                keys[j]: np.arange(len(attribute.level_labels[0]), dtype=np.int64),
            }
        )
        frame = frame.with_columns(pl.col(name).cast(pl.String)).join(
            leaves, on=name, how="left", nulls_equal=True
        )
    frame = frame.join(index, on=keys, how="left", nulls_equal=True)
    if frame.get_column("kanonym_tuple").null_count():
        raise ValueError("a grouped tuple is not in the frequency set")
    rows = frame.get_column("kanonym_tuple").to_numpy()
    counts = frame.get_column("kanonym_count").to_numpy()
    attributes = []
    for name in names:
        column = frame.get_column(name).cast(pl.String)
        labels, numeric = sensitive_labels(column.unique().to_list())
        code_of = {label: code for code, label in enumerate(labels)}
        codes = column.replace_strict(code_of, return_dtype=pl.Int64).to_numpy()
        histograms = np.zeros((len(tuples), len(labels)), dtype=np.int64)
        np.add.at(histograms, (rows, codes), counts)
        attributes.append(GroupedSensitiveAttribute(name, labels, numeric, histograms))
    return tuple(attributes)
