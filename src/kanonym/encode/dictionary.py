"""Dictionary coding of columns: each column's distinct values, and every row's index into them.

The step of encoding that reads every row. Each column is cast to a Polars
Enum of its distinct values (all columns in one query, so in parallel), whose
physical codes are the positions of the values in that list; the missing
value, which an Enum cannot hold, takes the position after the last (values
come in no particular order). The
codes come out as one column-major ``uint32`` matrix, which the frequency
set's compiled kernel reads directly (:meth:`kanonym.encode.FrequencySet.from_lookups`).

Example:
    >>> import polars as pl
    >>> d = dictionary_codes(pl.DataFrame({"zip": ["02139", None, "02139", "02141"]}), ["zip"])
    >>> [d.values[0][code] for code in d.codes[:, 0]]
    ['02139', None, '02139', '02141']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

Codes32 = npt.NDArray[np.uint32]


@dataclass(frozen=True, eq=False)
class DictionaryCodes:
    """Several columns, dictionary-coded.

    Attributes:
        columns: the columns' names.
        values: per column, its distinct values as strings (``None`` for the
            missing value, last when present).
        codes: ``(rows, columns)``, column-major: ``codes[i, j]`` is the
            position of row i's value in ``values[j]``.
    """

    columns: tuple[str, ...]
    values: tuple[tuple[str | None, ...], ...]
    codes: Codes32


def distinct_strings(frame: pl.DataFrame, columns: Sequence[str]) -> dict[str, list[str | None]]:
    """The distinct values of each of ``columns`` as strings (in no particular order), all
    columns in one parallel query."""
    names = list(dict.fromkeys(columns))
    if not names:
        return {}
    found = frame.select(pl.col(c).cast(pl.String).unique().implode() for c in names).row(0)
    return dict(zip(names, map(list, found), strict=True))


def dictionary_codes(
    frame: pl.DataFrame,
    columns: Sequence[str],
    known: Mapping[str, Sequence[str | None]] | None = None,
) -> DictionaryCodes:
    """The :class:`DictionaryCodes` of ``columns`` (values compared as strings).

    ``known`` holds each column's distinct values when the caller already has
    them (as strings, in any order); otherwise they are found first, in one
    query.
    """
    names = tuple(columns)
    text = [pl.col(name).cast(pl.String) for name in names]
    if known is None or any(name not in known for name in names):
        known = distinct_strings(frame, names)
    named = [[v for v in known[name] if v is not None] for name in names]
    values = tuple(
        (*n, None) if len(n) < len(known[name]) else tuple(n)
        for name, n in zip(names, named, strict=True)
    )
    if not names:
        return DictionaryCodes(names, values, np.zeros((frame.height, 0), dtype=np.uint32))
    codes = frame.select(
        c.cast(pl.Enum(n)).to_physical().cast(pl.UInt32).fill_null(len(n))
        for c, n in zip(text, named, strict=True)
    ).to_numpy(order="fortran")
    return DictionaryCodes(names, values, codes)
