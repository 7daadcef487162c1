"""What is known about each node, with inference by monotonicity.

When a privacy model is monotone under generalization (with the given
suppression limit), a node that satisfies it implies that all of its
generalizations do, and a node that fails implies that all of its
specializations fail (Samarati 2001, property 2; Bayardo & Agrawal 2005;
Kohlmayer et al. 2012, "Flash: efficient, stable and optimal k-anonymity").
:class:`NodeStatus` records checked outcomes and tags every node they imply,
so a search checks each node at most once and infers the rest.

Example:
    >>> from kanonym.lattice import Lattice
    >>> status = NodeStatus(Lattice((1, 1)))
    >>> status.mark_satisfied((0, 1))
    >>> [status.get(n) for n in [(0, 0), (0, 1), (1, 0), (1, 1)]]
    [0, 1, 0, 1]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kanonym.lattice.kernels import UNKNOWN as UNKNOWN
from kanonym.lattice.kernels import tag_box
from kanonym.lattice.lattice import Lattice, Node

SATISFIED = 1
FAILED = 2


class NodeStatus:
    """Per-node status: UNKNOWN, SATISFIED or FAILED, indexed like the lattice."""

    def __init__(self, lattice: Lattice) -> None:
        self.lattice = lattice
        self.values: npt.NDArray[np.int8] = np.zeros(lattice.size, dtype=np.int8)

    def get(self, node: Node) -> int:
        """Status of ``node``."""
        return int(self.values[self.lattice.index(node)])

    def mark_satisfied(self, node: Node) -> None:
        """``node`` satisfies the model: so does every generalization of it."""
        start, extents = self.lattice.up_box(node)
        tag_box(self.values, start, extents, self.lattice.arrays[2], SATISFIED)

    def mark_failed(self, node: Node) -> None:
        """``node`` fails the model: so does every specialization of it."""
        start, extents = self.lattice.down_box(node)
        tag_box(self.values, start, extents, self.lattice.arrays[2], FAILED)

    def unknown_count(self) -> int:
        """How many nodes are still undecided."""
        return int(np.count_nonzero(self.values == UNKNOWN))

    def minimal_satisfied(self) -> list[Node]:
        """Satisfying nodes none of whose direct specializations satisfies.

        Under monotonicity these are exactly the minimal elements of the
        satisfying set. Every node must be decided first.
        """
        if self.unknown_count():
            raise RuntimeError("minimal_satisfied needs every node decided")
        satisfied = self.values == SATISFIED
        minimal = satisfied.copy()
        levels = self.lattice.levels
        for d, stride in enumerate(self.lattice.strides):
            has_predecessor = levels[:, d] > self.lattice.lower[d]
            predecessor_satisfied = np.zeros_like(satisfied)
            predecessor_satisfied[has_predecessor] = satisfied[
                np.flatnonzero(has_predecessor) - stride
            ]
            minimal &= ~predecessor_satisfied
        return [tuple(int(v) for v in levels[i]) for i in np.flatnonzero(minimal)]
