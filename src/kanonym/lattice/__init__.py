"""The generalization lattice of distance vectors and inference over it."""

from kanonym.lattice.lattice import Lattice, Node
from kanonym.lattice.status import NodeStatus

__all__ = ["Lattice", "Node", "NodeStatus"]
