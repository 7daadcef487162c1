"""Apply a local recoding: every row's quasi-identifiers become its partition's labels.

Each quasi-identifier cell is replaced by the summary of the row's partition
(:mod:`kanonym.recoding`): a numeric range (the partition's box: ``lo-hi`` for
integers, ``[lo, hi)`` otherwise; the value itself when every member holds it)
or the label of a hierarchy node. Nothing is suppressed, identifying
columns are dropped and the rows are put in random order, as in full-domain
releases (Sweeney 2002, section 4.1: the unsorted matching attack). Labels are
built once per distinct summary and gathered by row, never looped over rows.

A relaxed cut may split a unit (rows equal in every code the partitioning
read) between partitions. Which of its rows go where is then decided by the
rows' released values, not by their position: the unit's rows are ranked by
the columns the release keeps, in input order, compared as text byte by byte
with the missing value first, and take the unit's pieces in that order
(:meth:`kanonym.recoding.Partitioning.row_partition`). Every engine ranks them
so (:class:`kanonym.engine.TupleRecoding`), which gives one released multiset
for one input, however its rows are ordered or stored.

Example:
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.recoding import Mondrian
    >>> frame = pl.DataFrame({"name": ["a", "b", "c", "d"], "age": ["31", "34", "52", "58"]})
    >>> h = Hierarchy("age", (("31", "34", "52", "58"), ("*",) * 4))
    >>> p = Mondrian().partition(encode(frame, {"age": h}), [KAnonymity(k=2)])
    >>> released, origin = recode(frame, p, drop=["name"], seed=1)
    >>> sorted(released["age"].to_list()), sorted(origin.tolist())
    (['30-49', '30-49', '50-59', '50-59'], [0, 1, 2, 3])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.recoding import Partitioning
from kanonym.transform.generalize import shuffled


def recode(
    frame: pl.DataFrame, partitioning: Partitioning, *, drop: Sequence[str], seed: int
) -> tuple[pl.DataFrame, npt.NDArray[np.int64]]:
    """The released table and, for each released row, the input row it comes from.

    Quasi-identifier columns become strings; all other columns keep their
    values and types.
    """
    row_partition = partitioning.row_partition(piece_order(frame, partitioning, drop=drop))
    replacements = []
    for a, axis in enumerate(partitioning.axes):
        distinct, inverse = np.unique(partitioning.label_keys(a), return_inverse=True)
        labels = pl.Series(axis.name, [axis.label(int(key)) for key in distinct], dtype=pl.String)
        replacements.append(labels.gather(inverse.reshape(-1)[row_partition]))
    return shuffled(frame.with_columns(replacements).drop(list(drop)), seed)


def piece_order(
    frame: pl.DataFrame, partitioning: Partitioning, *, drop: Sequence[str]
) -> npt.NDArray[np.int64]:
    """The rows in the order they take their unit's pieces: the rows of each split unit
    ranked by their values (module docstring); other units' rows have one piece.

    Example:
        >>> import polars as pl
        >>> from kanonym.encode import encode
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.models import KAnonymity
        >>> from kanonym.recoding import Mondrian
        >>> frame = pl.DataFrame({"x": ["1", "2", "2", "3"], "note": ["b", "z", "a", "c"]})
        >>> h = Hierarchy("x", (("1", "2", "3"), ("*",) * 3))
        >>> p = Mondrian(relaxed=True).partition(encode(frame, {"x": h}), [KAnonymity(k=2)])
        >>> # The 2s split: the one noted "a" goes left with the 1, the one noted "z" right.
        >>> p.row_partition(piece_order(frame, p, drop=[])).tolist()
        [0, 1, 0, 1]
    """
    split = (partitioning.unit_pieces() > 1)[partitioning.record_unit]
    if not split.any():
        return np.arange(frame.height, dtype=np.int64)
    rows = np.flatnonzero(split)
    # A unit's rows hold one value of each categorical quasi-identifier: only the other
    # columns can rank them (leaving out columns equal within a unit changes no ranking).
    equal = {axis.name for axis in partitioning.axes if not axis.numeric}
    kept = [c for c in frame.columns if c not in drop and c not in equal]
    ranked = pl.DataFrame(
        [
            pl.Series("_kanonym_unit", partitioning.record_unit[rows]),
            pl.Series("_kanonym_row", rows),
            *(frame.get_column(c).cast(pl.String).gather(rows) for c in kept),
        ]
    ).sort(["_kanonym_unit", *kept], nulls_last=False)
    ordered = ranked.get_column("_kanonym_row").to_numpy().astype(np.int64)
    return np.concatenate([np.flatnonzero(~split), ordered])
