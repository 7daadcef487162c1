"""The generalization lattice (Samarati 2001; Samarati & Sweeney 1998).

With quasi-identifiers A_1..A_m whose hierarchies have heights h_1..h_m, every
full-domain generalization is a *distance vector* ``[d_1, ..., d_m]`` with
``0 <= d_i <= h_i``: attribute A_i generalized d_i steps up its hierarchy.
Distance vectors ordered componentwise form a lattice whose bottom is the
original table and whose top suppresses every quasi-identifier to its root.
The *height* of a node is ``sum(d_i)``.

A lattice may be bounded below and above per attribute (``lower``, and
``heights`` as the upper bound), a box of distance vectors: a data holder may
require at least or at most so much generalization of an attribute.

Nodes are frozen tuples of levels. Each node also has an integer index in
mixed radix (the last attribute varies fastest), which orders nodes
lexicographically and lets whole-lattice questions be answered with NumPy.

Example:
    >>> lat = Lattice((1, 2))
    >>> lat.size, lat.index((1, 0)), lat.node(3), lat.successors((0, 1))
    (6, 3, (1, 0), [(1, 1), (0, 2)])
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

Node = tuple[int, ...]
T = TypeVar("T", bound=np.generic)
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Lattice:
    """The distance vectors between ``lower`` (default all 0) and ``heights`` (the top)."""

    heights: tuple[int, ...]
    lower: tuple[int, ...] = ()
    strides: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.lower:
            object.__setattr__(self, "lower", tuple(0 for _ in self.heights))
        if len(self.lower) != len(self.heights) or any(
            not 0 <= low <= high for low, high in zip(self.lower, self.heights, strict=True)
        ):
            raise ValueError(f"need 0 <= lower <= heights, got {self.lower} and {self.heights}")
        strides = []
        step = 1
        for span in reversed(self.spans):
            strides.append(step)
            step *= span
        object.__setattr__(self, "strides", tuple(reversed(strides)))

    @cached_property
    def spans(self) -> tuple[int, ...]:
        """Number of levels each attribute may take."""
        return tuple(h - low + 1 for low, h in zip(self.lower, self.heights, strict=True))

    @cached_property
    def size(self) -> int:
        """Number of nodes: the product of the spans."""
        return math.prod(self.spans)

    @property
    def bottom(self) -> Node:
        """The least generalized node (the original table when unbounded)."""
        return self.lower

    @property
    def top(self) -> Node:
        """Every attribute generalized to its root."""
        return self.heights

    @property
    def max_height(self) -> int:
        """Height of the top node."""
        return sum(self.heights)

    @property
    def min_height(self) -> int:
        """Height of the bottom node."""
        return sum(self.lower)

    def index(self, node: Node) -> int:
        """Mixed-radix index of ``node``."""
        return int(sum(map(operator.mul, node, self.strides))) - self._origin

    @cached_property
    def _origin(self) -> int:
        # Index arithmetic relative to the lower bound: sum(lower_i * stride_i).
        return int(sum(map(operator.mul, self.lower, self.strides)))

    def node(self, index: int) -> Node:
        """The node with mixed-radix ``index``."""
        levels = []
        for stride, low, span in zip(self.strides, self.lower, self.spans, strict=True):
            digit, index = divmod(index, stride)
            if digit >= span:
                raise IndexError("node index out of range")
            levels.append(low + digit)
        return tuple(levels)

    def successors(self, node: Node) -> list[Node]:
        """Direct generalizations: one attribute one level higher."""
        return [
            (*node[:d], node[d] + 1, *node[d + 1 :])
            for d in range(len(node))
            if node[d] < self.heights[d]
        ]

    def predecessors(self, node: Node) -> list[Node]:
        """Direct specializations: one attribute one level lower."""
        return [
            (*node[:d], node[d] - 1, *node[d + 1 :])
            for d in range(len(node))
            if node[d] > self.lower[d]
        ]

    @cached_property
    def levels(self) -> npt.NDArray[np.int16]:
        """``(size, m)`` array: row i holds the levels of the node with index i."""
        grids = np.indices(self.spans, dtype=np.int16)
        offsets = np.asarray(self.lower, dtype=np.int16)
        return grids.reshape(len(self.heights), -1).T + offsets

    def grid(self, values: np.ndarray[Any, np.dtype[T]]) -> np.ndarray[Any, np.dtype[T]]:
        """``values`` (one per node, by index) viewed as an array of shape :attr:`spans`."""
        return values.reshape(self.spans)

    @cached_property
    def arrays(self) -> tuple[IntArray, IntArray, IntArray]:
        """``lower``, :attr:`spans` and :attr:`strides` as int64 arrays, for kernels."""
        return (
            np.asarray(self.lower, dtype=np.int64),
            np.asarray(self.spans, dtype=np.int64),
            np.asarray(self.strides, dtype=np.int64),
        )

    def up_box(self, node: Node) -> tuple[int, IntArray]:
        """The up-set of ``node`` (it and its generalizations) as a box of the
        numbering: its first node index and its extent per attribute
        (:func:`kanonym.lattice.kernels.tag_box`)."""
        lower, spans, _ = self.arrays
        return self.index(node), spans - np.subtract(node, lower)

    def down_box(self, node: Node) -> tuple[int, IntArray]:
        """The down-set of ``node`` (it and its specializations) as a box, as :meth:`up_box`."""
        return 0, np.subtract(node, self.arrays[0]) + 1

    @cached_property
    def node_heights(self) -> npt.NDArray[np.int32]:
        """Height (sum of levels) of every node, by index."""
        return np.asarray(self.levels.sum(axis=1), dtype=np.int32)

    def nodes_at_height(self, height: int) -> list[Node]:
        """All nodes of the given height, in index (lexicographic) order."""
        indices = np.flatnonzero(self.node_heights == height)
        return [tuple(int(v) for v in self.levels[i]) for i in indices]
