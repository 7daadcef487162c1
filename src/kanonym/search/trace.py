"""What a lattice search did, kept for reports: the nodes checked and their outcomes.

A search decides most of the lattice without checking it: by monotonicity
(Samarati 2001, property 2; Kohlmayer et al. 2012, "Flash") or by metric bounds
(El Emam et al. 2009, OLA). A report shows which nodes were checked and, on a
lattice small enough to draw, the whole picture: every node's outcome, the
*minimal* satisfying nodes (satisfying, with no satisfying node strictly below:
Samarati 2001's k-minimal generalizations when k-anonymity is the only model),
the optimum and the node released. Completing that picture may take checks the
search did not need; :meth:`SearchTrace.explore` makes them only when asked,
and only on lattices of at most :data:`MAX_DRAWN_NODES` nodes, and says how many
it made.

Example (Samarati's race/ZIP table as Sweeney 2002 shows it, k=2, one row may go):
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation import NodeEvaluator
    >>> from kanonym.search import MinimalSearch, run_search
    >>> race = Hierarchy("race", (("asian", "black", "white"), ("person",) * 3))
    >>> zips = Hierarchy("zip", (("94138", "94139", "94141", "94142"),
    ...                          ("9413*", "9413*", "9414*", "9414*"), ("941**",) * 4))
    >>> table = pl.DataFrame({"race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
    ...     "zip": ["94142", "94141", "94139", "94139", "94139", "94138", "94139", "94139",
    ...             "94141"]})
    >>> evaluator = NodeEvaluator(encode(table, {"race": race, "zip": zips}), [KAnonymity(k=2)],
    ...                           max_suppressed_rows=1)
    >>> outcome = run_search(MinimalSearch(), evaluator, policy="min-absolute-distance")
    >>> trace = SearchTrace.record(Lattice((1, 2)), evaluator, outcome,
    ...                            policy="min-absolute-distance")
    >>> explored = trace.explore()
    >>> [explored.lattice.node(int(i)) for i in explored.minimal.nonzero()[0]]
    [(0, 2), (1, 1)]
    >>> explored.optimum, explored.chosen
    ((0, 2), (0, 2))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, Node
from kanonym.metrics.ranking import SCORE_TOLERANCE, best_of, score_tolerance
from kanonym.search.base import SearchOutcome
from kanonym.search.policies import rank

MAX_DRAWN_NODES = 3_000
"""Largest lattice whose every node a report draws (and, if need be, checks)."""

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False, kw_only=True)
class HeightSummary:
    """Nodes of one lattice height: how many there are, were checked and satisfied.

    Attributes:
        height: the sum of the levels.
        nodes: nodes of that height in the lattice (box).
        checked: of them, nodes the search checked.
        satisfied: of the checked ones, those satisfying the models within the limit.
        solutions: of them, nodes the search proposed (the released one included).
    """

    height: int
    nodes: int
    checked: int
    satisfied: int
    solutions: int

    def __post_init__(self) -> None:
        if not 0 <= self.solutions <= self.satisfied <= self.checked <= self.nodes:
            raise ValueError("need 0 <= solutions <= satisfied <= checked <= nodes")


@dataclass(frozen=True, eq=False, kw_only=True)
class ExploredLattice:
    """Every node of a small lattice decided, arrays indexed like the lattice.

    Attributes:
        lattice: the box of the lattice the search ran on.
        checked: whether the search itself checked the node.
        satisfied: whether the node satisfies the models within the suppression limit.
        minimal: satisfying nodes with no satisfying node strictly below them.
        optimum: the best satisfying node over the whole lattice: the lowest
            metric score (ties to the smallest vector) for a metric-ranked
            search, the policy's first among the minimal nodes otherwise.
        chosen: the node that was released.
        extra_checks: nodes checked for the report only, after the search.
    """

    lattice: Lattice
    checked: BoolArray
    satisfied: BoolArray
    minimal: BoolArray
    optimum: Node
    chosen: Node
    extra_checks: int

    def __post_init__(self) -> None:
        for name in ("checked", "satisfied", "minimal"):
            if getattr(self, name).shape != (self.lattice.size,):
                raise ValueError(f"{name} needs one entry per lattice node")
        if np.any(self.minimal & ~self.satisfied):
            raise ValueError("a minimal node must satisfy the models")
        for what, node in (("optimum", self.optimum), ("chosen", self.chosen)):
            if not self.satisfied[self.lattice.index(node)]:
                raise ValueError(f"the {what} {node} must satisfy the models")


@dataclass(frozen=True, eq=False, kw_only=True)
class SearchTrace:
    """The nodes a full-domain search checked, with their outcomes, and its solutions.

    Attributes:
        lattice: the box of the lattice the search ran on.
        names: the quasi-identifiers, in lattice order.
        checked: ``(c, m)`` levels of the nodes the search checked, in order checked.
        satisfied: per checked node, whether it satisfied the models within the limit.
        solutions: the nodes the search proposed, best first; the first was released.
        policy: the preference policy of a policy-ranked search, else None.
        evaluator: the search's evaluator, kept only for lattices of at most
            :data:`MAX_DRAWN_NODES` nodes, to decide the unchecked ones on demand.
        scores: per checked node, the metric's score (NaN without a metric), for
            the report's tooltips; None when not recorded.
    """

    lattice: Lattice
    names: tuple[str, ...]
    checked: npt.NDArray[np.int16]
    satisfied: BoolArray
    solutions: tuple[Node, ...]
    policy: str | None
    evaluator: NodeEvaluator | None
    scores: npt.NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        m = len(self.lattice.heights)
        if len(self.names) != m or self.checked.ndim != 2 or self.checked.shape[1] != m:
            raise ValueError("names and checked nodes need one entry per quasi-identifier")
        if self.satisfied.shape != (len(self.checked),):
            raise ValueError("satisfied needs one entry per checked node")
        if self.scores is not None and self.scores.shape != (len(self.checked),):
            raise ValueError("scores needs one entry per checked node")
        if not self.solutions:
            raise ValueError("a search trace needs the released node")
        if self.evaluator is not None and self.lattice.size > MAX_DRAWN_NODES:
            raise ValueError(f"the evaluator is kept only for lattices of <= {MAX_DRAWN_NODES}")

    @classmethod
    def record(
        cls,
        lattice: Lattice,
        evaluator: NodeEvaluator,
        outcome: SearchOutcome,
        *,
        policy: str | None,
    ) -> SearchTrace:
        """The trace of a finished search on ``lattice`` with ``evaluator``."""
        return cls.deferred(lattice, evaluator, outcome, policy=policy)()

    @classmethod
    def deferred(
        cls,
        lattice: Lattice,
        evaluator: NodeEvaluator,
        outcome: SearchOutcome,
        *,
        policy: str | None,
    ) -> Callable[[], SearchTrace]:
        """What :meth:`record` needs, kept now; the trace is built only when called.

        Only the HTML report draws the lattice, so a release builds its trace
        when the report asks for it; keeping the list of evaluations costs one
        reference per checked node. The evaluator itself is kept only for
        lattices small enough to draw node by node (:data:`MAX_DRAWN_NODES`).
        """
        evaluations = evaluator.evaluated()
        names = evaluator.encoded.names
        solutions = tuple(e.node for e in outcome.solutions)
        kept = evaluator if lattice.size <= MAX_DRAWN_NODES else None

        def build() -> SearchTrace:
            m = len(lattice.heights)
            checked = np.array([e.node for e in evaluations], dtype=np.int16).reshape(-1, m)
            return cls(
                lattice=lattice,
                names=names,
                checked=checked,
                satisfied=np.array([e.satisfied for e in evaluations], dtype=np.bool_),
                solutions=solutions,
                policy=policy,
                evaluator=kept,
                scores=np.array(
                    [np.nan if e.score is None else e.score for e in evaluations],
                    dtype=np.float64,
                ),
            )

        return build

    @property
    def chosen(self) -> Node:
        """The node that was released."""
        return self.solutions[0]

    def per_height(self) -> list[HeightSummary]:
        """Nodes, checked nodes and satisfying checked nodes per lattice height.

        Nodes per height are the coefficients of the product of the polynomials
        x^low + ... + x^high of the attributes, so no node is enumerated.
        """
        counts = [1]
        for low, high in zip(self.lattice.lower, self.lattice.heights, strict=True):
            # Python integers: a lattice too large to search may still be summarized.
            widened = [0] * (len(counts) + high - low)
            for offset, count in enumerate(counts):
                for step in range(high - low + 1):
                    widened[offset + step] += count
            counts = widened
        base = self.lattice.min_height
        heights = self.checked.sum(axis=1, dtype=np.int64) - base
        size = len(counts)
        checked = np.bincount(heights, minlength=size)
        satisfied = np.bincount(heights[self.satisfied], minlength=size)
        solutions = np.bincount(
            np.array([sum(node) - base for node in self.solutions], dtype=np.int64),
            minlength=size,
        )
        return [
            HeightSummary(
                height=base + h,
                nodes=counts[h],
                checked=int(checked[h]),
                satisfied=int(satisfied[h]),
                solutions=int(solutions[h]),
            )
            for h in range(size)
        ]

    def explore(self) -> ExploredLattice | None:
        """Decide every node of a lattice of at most :data:`MAX_DRAWN_NODES` nodes.

        Nodes the search did not check are checked now by the search's own
        evaluator (same models, limit and metric); the result counts them as
        ``extra_checks``. Returns None for larger lattices.
        """
        evaluator = self.evaluator
        if evaluator is None:
            return None
        lattice = self.lattice
        strides = np.asarray(lattice.strides, dtype=np.int64)
        lower = np.asarray(lattice.lower, dtype=np.int64)
        checked = np.zeros(lattice.size, dtype=np.bool_)
        checked[(self.checked.astype(np.int64) - lower) @ strides] = True
        evaluations = [evaluator.evaluate(lattice.node(i)) for i in range(lattice.size)]
        satisfied = np.array([e.satisfied for e in evaluations], dtype=np.bool_)
        minimal = _minimal(lattice, satisfied)
        return ExploredLattice(
            lattice=lattice,
            checked=checked,
            satisfied=satisfied,
            minimal=minimal,
            optimum=self._optimum(evaluations, minimal),
            chosen=self.chosen,
            extra_checks=int(lattice.size - np.count_nonzero(checked)),
        )

    def _optimum(self, evaluations: list[NodeEvaluation], minimal: BoolArray) -> Node:
        if self.policy is not None:
            candidates = [evaluations[int(i)] for i in np.flatnonzero(minimal)]
            return rank(candidates, self.policy, self.lattice.heights)[0].node
        scored = [e for e in evaluations if e.satisfied and e.score is not None]
        metric = None if self.evaluator is None else self.evaluator.metric
        # The searches' own rule: lowest score, ties to the smallest vector.
        best = best_of(scored, SCORE_TOLERANCE if metric is None else score_tolerance(metric))
        if best is None:
            raise ValueError("no satisfying node to call optimal")
        return best.node


def _minimal(lattice: Lattice, satisfied: BoolArray) -> BoolArray:
    """Satisfying nodes with no satisfying node strictly below, by index.

    "Some satisfying node at or below" is a running OR along every axis of the
    lattice grid; a node has one strictly below exactly when a direct
    specialization has one at or below.
    """
    at_or_below = lattice.grid(satisfied.copy())
    for axis in range(at_or_below.ndim):
        at_or_below = np.logical_or.accumulate(at_or_below, axis=axis)
    strictly_below = np.zeros_like(at_or_below)
    for axis in range(at_or_below.ndim):
        shifted = np.zeros_like(at_or_below)
        target = [slice(None)] * at_or_below.ndim
        source = [slice(None)] * at_or_below.ndim
        target[axis] = slice(1, None)
        source[axis] = slice(None, -1)
        shifted[tuple(target)] = at_or_below[tuple(source)]
        strictly_below |= shifted
    return np.asarray((lattice.grid(satisfied) & ~strictly_below).reshape(-1))
