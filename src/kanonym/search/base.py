"""The one interface every search algorithm implements, and the shared driver.

A search receives the lattice and a node evaluator (which knows the models and
the suppression limit) and returns the nodes it proposes as solutions. The
driver checks that the models meet the algorithm's assumptions, ranks the
solutions by the preference policy, and counts the nodes checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kanonym.errors import InputError
from kanonym.lattice import Lattice
from kanonym.search.evaluation import NodeEvaluation, NodeEvaluator
from kanonym.search.policies import rank

# Searches here keep one status byte and the levels of every node in memory;
# beyond this many nodes a full-lattice search is not the right tool.
MAX_LATTICE_SIZE = 5_000_000


class SearchAlgorithm(Protocol):
    """A search over the generalization lattice."""

    @property
    def name(self) -> str:
        """The name used on the command line, e.g. ``"minimal"``."""
        ...

    def solutions(self, lattice: Lattice, evaluator: NodeEvaluator) -> list[NodeEvaluation]:
        """Satisfying nodes this algorithm proposes (any order)."""
        ...


@dataclass(frozen=True)
class SearchOutcome:
    """What a search found.

    Attributes:
        solutions: proposed nodes, best first by the preference policy.
        nodes_checked: distinct nodes whose classes were computed.
        algorithm: the algorithm's name.
    """

    solutions: tuple[NodeEvaluation, ...]
    nodes_checked: int
    algorithm: str

    @property
    def best(self) -> NodeEvaluation:
        """The preferred solution."""
        return self.solutions[0]


def run_search(
    algorithm: SearchAlgorithm, evaluator: NodeEvaluator, *, policy: str
) -> SearchOutcome:
    """Run ``algorithm`` and rank its solutions by ``policy``."""
    _require_monotone(evaluator)
    lattice = Lattice(evaluator.encoded.heights)
    if lattice.size > MAX_LATTICE_SIZE:
        raise InputError(
            f"the generalization lattice has {lattice.size:,} nodes, more than the "
            f"{MAX_LATTICE_SIZE:,} a full search handles; use fewer quasi-identifiers "
            "or shorter hierarchies"
        )
    found = algorithm.solutions(lattice, evaluator)
    if not found:
        raise InputError(
            "no generalization satisfies the privacy models within the suppression limit"
        )
    return SearchOutcome(
        solutions=tuple(rank(found, policy, lattice.heights)),
        nodes_checked=evaluator.checks,
        algorithm=algorithm.name,
    )


def _require_monotone(evaluator: NodeEvaluator) -> None:
    suppressing = evaluator.max_suppressed_rows > 0
    broken: Sequence[str] = [
        m.name
        for m in evaluator.models
        if not (m.monotone_with_suppression if suppressing else m.monotone_without_suppression)
    ]
    if broken:
        raise InputError(
            f"model(s) {', '.join(broken)} are not monotone under generalization "
            f"{'with' if suppressing else 'without'} suppression, which this search assumes"
        )
