"""The generalization lattice (Samarati 2001; Samarati & Sweeney 1998).

With quasi-identifiers A_1..A_m whose hierarchies have heights h_1..h_m, every
full-domain generalization is a *distance vector* ``[d_1, ..., d_m]`` with
``0 <= d_i <= h_i``: attribute A_i generalized d_i steps up its hierarchy.
Distance vectors ordered componentwise form a lattice whose bottom is the
original table and whose top suppresses every quasi-identifier to its root.
The *height* of a node is ``sum(d_i)``.

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
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

Node = tuple[int, ...]


@dataclass(frozen=True)
class Lattice:
    """The lattice of distance vectors below ``heights`` (the top node)."""

    heights: tuple[int, ...]
    strides: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if any(h < 0 for h in self.heights):
            raise ValueError(f"lattice heights must be >= 0, got {self.heights}")
        strides = []
        step = 1
        for h in reversed(self.heights):
            strides.append(step)
            step *= h + 1
        object.__setattr__(self, "strides", tuple(reversed(strides)))

    @property
    def size(self) -> int:
        """Number of nodes: the product of (height + 1) over attributes."""
        return math.prod(h + 1 for h in self.heights)

    @property
    def bottom(self) -> Node:
        """The original table: every attribute at level 0."""
        return tuple(0 for _ in self.heights)

    @property
    def top(self) -> Node:
        """Every attribute generalized to its root."""
        return self.heights

    @property
    def max_height(self) -> int:
        """Height of the top node."""
        return sum(self.heights)

    def index(self, node: Node) -> int:
        """Mixed-radix index of ``node``."""
        return sum(level * stride for level, stride in zip(node, self.strides, strict=True))

    def node(self, index: int) -> Node:
        """The node with mixed-radix ``index``."""
        levels = []
        for stride, h in zip(self.strides, self.heights, strict=True):
            level, index = divmod(index, stride)
            if level > h:
                raise IndexError("node index out of range")
            levels.append(level)
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
        return [(*node[:d], node[d] - 1, *node[d + 1 :]) for d in range(len(node)) if node[d] > 0]

    @cached_property
    def levels(self) -> npt.NDArray[np.int16]:
        """``(size, m)`` array: row i holds the levels of the node with index i."""
        grids = np.indices(tuple(h + 1 for h in self.heights), dtype=np.int16)
        return grids.reshape(len(self.heights), -1).T.copy()

    @cached_property
    def level_columns(self) -> tuple[npt.NDArray[np.int16], ...]:
        """The columns of :attr:`levels`, each contiguous, for fast comparisons."""
        return tuple(np.ascontiguousarray(self.levels[:, d]) for d in range(len(self.heights)))

    @cached_property
    def node_heights(self) -> npt.NDArray[np.int32]:
        """Height (sum of levels) of every node, by index."""
        return np.asarray(self.levels.sum(axis=1), dtype=np.int32)

    def nodes_at_height(self, height: int) -> list[Node]:
        """All nodes of the given height, in index (lexicographic) order."""
        indices = np.flatnonzero(self.node_heights == height)
        return [tuple(int(v) for v in self.levels[i]) for i in indices]
