"""Apply a local recoding: every row's quasi-identifiers become its partition's labels.

Each quasi-identifier cell is replaced by the summary of the row's partition
(:mod:`kanonym.recoding`): a numeric range (the partition's box: ``lo-hi`` for
integers, ``[lo, hi)`` otherwise; the value itself when every member holds it)
or the label of a hierarchy node. Nothing is suppressed, identifying
columns are dropped and the rows are put in random order, as in full-domain
releases (Sweeney 2002, section 4.1: the unsorted matching attack). Labels are
built once per distinct summary and gathered by row, never looped over rows.

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
    replacements = []
    for a, axis in enumerate(partitioning.axes):
        distinct, inverse = np.unique(partitioning.label_keys(a), return_inverse=True)
        labels = pl.Series(axis.name, [axis.label(int(key)) for key in distinct], dtype=pl.String)
        replacements.append(labels.gather(inverse.reshape(-1)[partitioning.row_partition]))
    return shuffled(frame.with_columns(replacements).drop(list(drop)), seed)
