"""Apply a full-domain generalization with tuple suppression to a table.

Given a node (one level per quasi-identifier), every quasi-identifier value is
replaced by its generalization at that level, rows of classes that fail the
models are removed (minimal required suppression, Samarati & Sweeney 1998),
identifying columns are dropped, and the remaining rows are put in random
order: Sweeney 2002 (section 4.1) shows that releases keeping the row order
of the source can be matched row by row (the unsorted matching attack).
Everything is vectorized: label arrays are gathered by code, never looped over.

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*")))
    >>> frame = pl.DataFrame({"name": ["a", "b"], "zip": ["02138", "02139"]})
    >>> enc = encode(frame, {"zip": h})
    >>> out, rows = generalize(frame, enc, (1,), keep=np.array([False, True]), drop=["name"],
    ...                        seed=1)
    >>> out["zip"].to_list(), rows.tolist()
    (['0213*'], [1])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.encode import EncodedTable
from kanonym.lattice import Node


def generalized_column(encoded: EncodedTable, attribute: int, level: int) -> pl.Series:
    """Every input row's value of quasi-identifier number ``attribute`` at ``level`` of
    its hierarchy, as strings (needs the frequency set's row index)."""
    a = encoded.attributes[attribute]
    labels = pl.Series(a.name, a.level_labels[level], dtype=pl.String)
    # Each tuple's label code, then each row's: one gather per row.
    tuple_codes = a.level_maps[level][encoded.frequency_set.codes[:, attribute]]
    return labels.gather(tuple_codes[encoded.frequency_set.rows()])


def shuffled(released: pl.DataFrame, seed: int) -> tuple[pl.DataFrame, npt.NDArray[np.int64]]:
    """``released`` in random order (unsorted matching, Sweeney 2002 section 4.1), and the
    row of ``released`` each row of the result comes from."""
    order = np.random.default_rng(seed).permutation(released.height).astype(np.int64)
    return released[order], order


def generalize(
    frame: pl.DataFrame,
    encoded: EncodedTable,
    node: Node,
    *,
    keep: npt.NDArray[np.bool_],
    drop: Sequence[str],
    seed: int,
) -> tuple[pl.DataFrame, npt.NDArray[np.int64]]:
    """The released table: generalized, suppressed, identifiers dropped, shuffled; and, for
    each released row, the input row it comes from.

    Quasi-identifier columns become strings (labels of the hierarchy level);
    all other columns keep their values and types.
    """
    replacements = [
        generalized_column(encoded, attribute, level) for attribute, level in enumerate(node)
    ]
    released = frame.with_columns(replacements).drop(list(drop)).filter(pl.Series(keep))
    table, order = shuffled(released, seed)
    # The shuffle numbers the kept rows; the input numbers all of them.
    return table, np.flatnonzero(keep).astype(np.int64)[order]
