"""The outcome of a local recoding: every row's partition and each partition's summary.

A partition is summarized per quasi-identifier by two integers whose meaning
depends on the axis (:mod:`kanonym.recoding.dimensions`): on a numeric axis,
the indices of its box's lower and upper edge in the axis's edge table
(:mod:`kanonym.recoding.edges`: edges come from the cuts and the attribute's
grid, never from a member's value alone), or ``-1 - r`` twice when every
member holds the value of rank r; on a categorical axis, the level and the
node of its values' lowest common ancestor. The release shows the summary's
label; partitions whose labels agree on every axis (relaxed partitions may
overlap) are one equivalence class of the release.

Example (ages 30..41, no interval grid: step 2, domain [30, 42); the cut
between 35 and 41 places its edge at 40, the roundest number of 37..40):
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.recoding import Mondrian
    >>> h = Hierarchy("age", (("30", "35", "41"), ("*",) * 3))
    >>> frame = pl.DataFrame({"age": ["30", "35", "41", "41"]})
    >>> p = Mondrian().partition(encode(frame, {"age": h}), [KAnonymity(k=2)])
    >>> p.labels(0), p.penalties().round(3).tolist(), p.classes().tolist()
    (['30-39', '41'], [[0.833], [0.0]], [0, 1])
    >>> p.row_partition().tolist(), p.piece_count.tolist()
    ([0, 0, 1, 1], [1, 1, 2])
    >>> p.summary.tolist(), p.axes[0].edge_values.tolist()
    ([[[0, 1]], [[-3, -3]]], [30.0, 40.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.encode import pack_codes
from kanonym.recoding.dimensions import Dimension

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False, kw_only=True)
class Partitioning:
    """Records grouped into partitions, each summarized per quasi-identifier.

    The partitioner reads *records*: the rows of a table, or the distinct
    tuples of a grouping with their row counts (an engine's ``GROUP BY``,
    :meth:`~kanonym.recoding.Mondrian.partition_grouped`). Records with equal
    codes (quasi-identifiers and the sensitive values the models read) form
    one *unit*; a unit's rows go to one partition, or, split by relaxed cuts,
    to several: its *pieces*, each some of its rows in one partition.

    Attributes:
        method: the algorithm's family, ``"mondrian"``.
        relaxed: whether partitions may overlap (relaxed partitioning).
        axes: the quasi-identifiers, in input order.
        sizes: rows per partition.
        summary: ``(partitions, axes, 2)``: per partition and axis, its
            box's edges or its single value (numeric; module docstring) or
            the LCA's level and node (categorical).
        record_unit: the unit of every record.
        piece_unit: the unit of every piece, pieces sorted by unit; a unit's
            pieces are in the order its rows take them.
        piece_count: rows per piece.
        piece_partition: the partition of every piece.
    """

    method: str
    relaxed: bool
    axes: tuple[Dimension, ...]
    sizes: IntArray
    summary: IntArray
    record_unit: IntArray
    piece_unit: IntArray
    piece_count: IntArray
    piece_partition: IntArray

    def __post_init__(self) -> None:
        partitions = len(self.sizes)
        if self.summary.shape != (partitions, len(self.axes), 2):
            raise ValueError(
                f"summary has shape {self.summary.shape}, expected ({partitions}, "
                f"{len(self.axes)}, 2)"
            )
        if int(self.sizes.sum()) != int(self.piece_count.sum()):
            raise ValueError("partition sizes do not add up to the rows")
        if np.any(np.diff(self.piece_unit) < 0):
            raise ValueError("pieces must be sorted by unit")

    def unit_pieces(self) -> IntArray:
        """Pieces per unit (more than one: the unit was split by relaxed cuts)."""
        units = int(self.record_unit.max(initial=-1)) + 1
        return np.bincount(self.piece_unit, minlength=units).astype(np.int64)

    def row_partition(self, order: IntArray | None = None) -> IntArray:
        """The partition of every record, when the records are rows (:meth:`Mondrian.partition`).

        The rows of a unit take its pieces in ``order`` (a permutation of the
        rows, consulted only among the rows of one unit; by default their own
        order): the first ``piece_count`` of them the unit's first piece, and
        so on. Rows of a unit are equal in everything the partitioning read,
        so any order gives a valid partitioning; the release chooses one that
        depends on no row order (:func:`kanonym.transform.recode`).
        """
        n_rows = len(self.record_unit)
        if int(self.piece_count.sum()) != n_rows:
            raise ValueError("the records are grouped tuples, not rows: no row has a partition")
        per_unit = self.unit_pieces()
        # A unit's first piece is all of it, unless relaxed cuts split it.
        partition: IntArray = self.piece_partition[np.cumsum(per_unit) - per_unit][self.record_unit]
        split = per_unit[self.record_unit] > 1
        if split.any():
            rows = np.arange(n_rows, dtype=np.int64) if order is None else order
            rows = rows[split[rows]]
            by_unit = rows[np.argsort(self.record_unit[rows], kind="stable")]
            pieces = per_unit[self.piece_unit] > 1
            piece_end = np.cumsum(self.piece_count[pieces])
            partition[by_unit] = self.piece_partition[pieces][
                np.searchsorted(piece_end, np.arange(len(by_unit)), side="right")
            ]
        return partition

    @property
    def variant(self) -> str:
        """``"relaxed"`` or ``"strict"``."""
        return "relaxed" if self.relaxed else "strict"

    def label_keys(self, axis: int) -> IntArray:
        """Per partition, an integer standing for its label on ``axis``."""
        return self.axes[axis].label_keys(self.summary[:, axis, 0], self.summary[:, axis, 1])

    def labels(self, axis: int) -> list[str | None]:
        """Per partition, its label on ``axis`` (a range or a hierarchy node)."""
        return self.axes[axis].labels(self.summary[:, axis, 0], self.summary[:, axis, 1])

    def penalties(self) -> FloatArray:
        """``(partitions, axes)``: the NCP of each printed summary (a box: its width
        over the grid's; a single value: 0; a node: its leaves, normalized)."""
        return np.column_stack(
            [
                axis.penalties(self.summary[:, a, 0], self.summary[:, a, 1])
                for a, axis in enumerate(self.axes)
            ]
        ).reshape(len(self.sizes), len(self.axes))

    def classes(self) -> IntArray:
        """The released class of every partition: partitions with equal labels share one."""
        keys, _ = pack_codes(
            [self.label_keys(a) for a in range(len(self.axes))],
            [axis.label_space for axis in self.axes],
        )
        _, inverse = np.unique(keys, return_inverse=True)
        return inverse.astype(np.int64).reshape(-1)

    def class_sizes(self) -> IntArray:
        """Rows per released class."""
        return np.bincount(self.classes(), weights=self.sizes).astype(np.int64)

    def describe(self) -> dict[str, object]:
        """The report's ``recoding`` object."""
        return {
            "method": self.method,
            "variant": self.variant,
            "partitions": len(self.sizes),
            "classes": len(self.class_sizes()),
            "attributes": {
                axis.name: "numeric" if axis.numeric else "categorical" for axis in self.axes
            },
        }
