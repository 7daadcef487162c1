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
    """Rows grouped into partitions, each summarized per quasi-identifier.

    Attributes:
        method: the algorithm's family, ``"mondrian"``.
        relaxed: whether partitions may overlap (relaxed partitioning).
        axes: the quasi-identifiers, in input order.
        row_partition: the partition of every input row.
        sizes: rows per partition.
        summary: ``(partitions, axes, 2)``: per partition and axis, its
            box's edges or its single value (numeric; module docstring) or
            the LCA's level and node (categorical).
    """

    method: str
    relaxed: bool
    axes: tuple[Dimension, ...]
    row_partition: IntArray
    sizes: IntArray
    summary: IntArray

    def __post_init__(self) -> None:
        partitions = len(self.sizes)
        if self.summary.shape != (partitions, len(self.axes), 2):
            raise ValueError(
                f"summary has shape {self.summary.shape}, expected ({partitions}, "
                f"{len(self.axes)}, 2)"
            )
        if int(self.sizes.sum()) != len(self.row_partition):
            raise ValueError("partition sizes do not add up to the rows")

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
