"""Applying cell suppression: write the chosen cells as the hierarchy's root.

Which cells are blanked is decided when the node is judged
(:mod:`kanonym.evaluation.cell_choice`, kept by
:class:`kanonym.evaluation.CellSuppressionEvaluator`); this module only writes
that decision into the released table (Samarati's AG_CS and _CS, Ciriani et
al. 2007: a blanked cell shows the root of its attribute's hierarchy, ``*``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.encode import EncodedTable
from kanonym.evaluation import CellSuppressionEvaluator, NodeCells
from kanonym.evaluation.cell_choice import group_rows
from kanonym.lattice import Node
from kanonym.transform.generalize import generalized_column, shuffled

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def blank_cells(
    frame: pl.DataFrame,
    encoded: EncodedTable,
    node: Sequence[int],
    *,
    blanked: BoolArray,
    drop: Sequence[str],
    seed: int,
) -> tuple[pl.DataFrame, IntArray]:
    """The released table: generalized to ``node``, ``blanked`` cells set to the root, shuffled.

    ``blanked`` is ``(rows, attributes)``. No row is removed. Returns the table
    and, for each released row, the input row it comes from (the shuffle, so
    that verification can compare every cell with its source).

    Example:
        >>> import numpy as np, polars as pl
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.encode import encode
        >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*"), ("*", "*")))
        >>> frame = pl.DataFrame({"zip": ["02138", "02139"]})
        >>> out, rows = blank_cells(frame, encode(frame, {"zip": h}), (1,),
        ...                         blanked=np.array([[True], [False]]), drop=[], seed=0)
        >>> sorted(out["zip"].to_list()), sorted(rows.tolist())
        (['*', '0213*'], [0, 1])
    """
    columns = []
    for a, (attribute, level) in enumerate(zip(encoded.attributes, node, strict=True)):
        values = generalized_column(encoded, a, level)
        if blanked[:, a].any():
            root = attribute.hierarchy.levels[-1][0]
            values = pl.select(
                pl.when(pl.Series(blanked[:, a])).then(pl.lit(root, pl.String)).otherwise(values)
            ).to_series()
        columns.append(values.alias(attribute.name))
    return shuffled(frame.with_columns(columns).drop(list(drop)), seed)


def blank_release(
    frame: pl.DataFrame,
    evaluator: CellSuppressionEvaluator,
    node: Node,
    *,
    drop: Sequence[str],
    seed: int,
) -> tuple[pl.DataFrame, IntArray, NodeCells]:
    """The release at ``node`` with its blanked cells, the input row of each released
    row, and the cells as the search chose them."""
    cells = evaluator.accepted(node)
    # Each frequency-set tuple's class, found by its codes at the node (the
    # conversion's classes may be numbered in another order than a new grouping).
    encoded, fs = evaluator.encoded, evaluator.frequency_set
    tuple_codes = np.column_stack(
        [
            attribute.level_maps[level][fs.codes[:, a]]
            for a, (attribute, level) in enumerate(zip(encoded.attributes, node, strict=True))
        ]
    )
    class_codes = cells.codes
    joint, n_keys = group_rows(np.vstack([class_codes, tuple_codes]))
    class_of_key = np.full(n_keys, -1, dtype=np.int64)
    class_of_key[joint[: len(class_codes)]] = np.arange(len(class_codes), dtype=np.int64)
    row_class = class_of_key[joint[len(class_codes) :]][fs.row_tuple]
    if (row_class < 0).any():
        raise ValueError(f"a row has no class of node {node} in the conversion")
    blanked = cells.suppression.mask[row_class] & (
        class_codes[row_class] != evaluator.star(node)[None, :]
    )
    released, rows = blank_cells(frame, encoded, node, blanked=blanked, drop=drop, seed=seed)
    return released, rows, cells
