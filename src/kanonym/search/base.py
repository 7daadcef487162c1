"""The one interface every search algorithm implements, and the shared driver.

A search receives the lattice, a node evaluator (which knows the models, the
suppression limit and, for optimal searches, the utility metric) and a
:class:`SearchControl` (deadline, progress). It returns the nodes it proposes.
The driver checks that the models and metric meet the algorithm's assumptions,
ranks the solutions (by policy, or by score with ties to the smallest vector,
as :mod:`kanonym.metrics.ranking` compares scores), and counts the nodes checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from kanonym.errors import InputError, NoSolutionError, SearchTimeoutError
from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.metrics import UtilityMetric
from kanonym.metrics.ranking import ranked as ranked_by_score
from kanonym.metrics.ranking import score_tolerance
from kanonym.search.policies import rank

# Searches here keep one status byte and the levels of every node in memory;
# beyond this many nodes a full-lattice search is not the right tool.
MAX_LATTICE_SIZE = 5_000_000


STAGES = (
    "reading",
    "encoding",
    "searching",
    "measuring",
    "transforming",
    "verifying",
    "writing",
    "drawing report",
)
"""The stages of a release, in order, as :attr:`Progress.stage` names them."""

REPORT_INTERVAL = 0.2
"""Seconds between two progress reports of one search (:meth:`SearchControl.due`)."""


@dataclass(frozen=True)
class Progress:
    """A progress report: of a search, or of another stage of a release.

    A search reports the nodes it checked and the best score so far; the
    release pipeline reports each stage as it starts (and the HTML report each
    figure), so that one callback can show all the long work of a release.

    Attributes:
        checked: nodes whose classes were computed so far (0 outside a search).
        lattice_size: nodes of the lattice (or box) searched (0 outside a
            search). Not what a search will check: a pruning search decides
            most nodes without checking them.
        best_score: the best metric score found so far (None before any, or
            when the search ranks by a policy).
        stage: what is running, one of :data:`STAGES`.
        done: steps of the stage finished, out of ``total``.
        total: steps the stage takes, when known: the figures of the HTML
            report; for the exhaustive search (non-monotone models), the nodes
            it checked plus those left that the metric's bound does not rule
            out, a total that shrinks as the best score improves (``done``
            counts the nodes checked). None when not known, as for a pruning
            search, whose checks depend on what earlier checks decide: never
            the lattice's size, which such a search does not come near.
        unresolved: nodes a search has neither decided nor ruled out by their
            bound yet; for a pruning search it shrinks as checks tag whole up-
            and down-sets (None when not tracked).
        detail: a few words on the current step, e.g. the algorithm or the
            figure being drawn.
    """

    checked: int
    lattice_size: int
    best_score: float | None
    stage: str = "searching"
    done: int = 0
    total: int | None = None
    unresolved: int | None = None
    detail: str = ""

    @classmethod
    def of_stage(
        cls, stage: str, *, detail: str = "", done: int = 0, total: int | None = None
    ) -> Progress:
        """A report that ``stage`` is running (``done`` of ``total`` steps, if counted).

        Example:
            >>> Progress.of_stage("drawing report", detail="risk figure", done=2, total=8).done
            2
        """
        return cls(0, 0, None, stage=stage, done=done, total=total, detail=detail)


@dataclass
class SearchControl:
    """Deadline and progress reporting for one search.

    Progress goes to the callback at most once per ``interval`` seconds: a
    search asks :meth:`due` (one clock read) before gathering a report, so
    reporting costs nothing per node that a benchmark can see.

    Attributes:
        deadline: ``time.perf_counter()`` value after which a search stops and
            returns the best it has (``None``: no limit).
        on_progress: called now and then with a :class:`Progress`.
        timed_out: set by the search when it stopped at the deadline.
        interval: least seconds between two reports (the first is due at once).
    """

    deadline: float | None = None
    on_progress: Callable[[Progress], None] | None = None
    timed_out: bool = field(default=False)
    interval: float = REPORT_INTERVAL
    _next_report: float = field(default=0.0, init=False, repr=False)

    @classmethod
    def with_time_limit(
        cls, seconds: float | None, on_progress: Callable[[Progress], None] | None = None
    ) -> SearchControl:
        """A control whose deadline is ``seconds`` from now (or none)."""
        deadline = None if seconds is None else time.perf_counter() + seconds
        return cls(deadline=deadline, on_progress=on_progress)

    def expired(self) -> bool:
        """Whether the deadline has passed (and remember that it did)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def due(self) -> bool:
        """Whether a report would reach the callback now (there is one, and
        ``interval`` has passed since the last report)."""
        return self.on_progress is not None and time.perf_counter() >= self._next_report

    def report(
        self,
        checked: int,
        lattice_size: int,
        best_score: float | None,
        *,
        done: int = 0,
        total: int | None = None,
        unresolved: int | None = None,
    ) -> None:
        """Forward progress to the callback, if any and if :meth:`due`.

        ``done``, ``total`` and ``unresolved``: as in :class:`Progress`; a
        search that cannot know how many nodes it will check leaves ``total``
        None rather than give the lattice's size.
        """
        if self.on_progress is None or not self.due():
            return
        self._next_report = time.perf_counter() + self.interval
        self.on_progress(
            Progress(
                checked,
                lattice_size,
                best_score,
                done=done,
                total=total,
                unresolved=unresolved,
            )
        )


class SearchAlgorithm(Protocol):
    """A search over the generalization lattice."""

    @property
    def name(self) -> str:
        """The name used on the command line, e.g. ``"minimal"``."""
        ...

    @property
    def uses_metric(self) -> bool:
        """True for optimizing searches (ranked by a metric), False for policy-ranked ones."""
        ...

    @property
    def exact(self) -> bool:
        """True for searches that decide the lattice (their answer is proven);
        False for heuristics, which walk a few nodes and prove nothing."""
        ...

    @property
    def needs_monotone_models(self) -> bool:
        """Whether the search is only correct for models monotone under generalization."""
        ...

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """Satisfying nodes this algorithm proposes (any order)."""
        ...


@dataclass(frozen=True)
class SearchOutcome:
    """What a search found.

    Attributes:
        solutions: proposed nodes, best first.
        nodes_checked: distinct nodes whose classes were computed.
        algorithm: the algorithm's name.
        proven_optimal: False for heuristics and when a search stopped at its deadline.
    """

    solutions: tuple[NodeEvaluation, ...]
    nodes_checked: int
    algorithm: str
    proven_optimal: bool = True

    @property
    def best(self) -> NodeEvaluation:
        """The preferred solution."""
        return self.solutions[0]


def run_search(
    algorithm: SearchAlgorithm,
    evaluator: NodeEvaluator,
    *,
    policy: str | None = None,
    metric: UtilityMetric | None = None,
    control: SearchControl | None = None,
    lower: tuple[int, ...] = (),
    upper: tuple[int, ...] = (),
) -> SearchOutcome:
    """Run ``algorithm``; rank by ``policy`` (minimal, samarati) or ``metric`` (optimal).

    ``lower`` and ``upper`` bound each attribute's level (default: 0 and the
    hierarchy's height): the search sees only that box of the lattice.
    """
    control = control or SearchControl()
    if algorithm.uses_metric and metric is None:
        raise InputError(f"algorithm '{algorithm.name}' needs a utility metric")
    if not algorithm.uses_metric and policy is None:
        raise InputError(f"algorithm '{algorithm.name}' needs a preference policy")
    if algorithm.needs_monotone_models:
        _require_monotone(evaluator, algorithm.name)
    lattice = Lattice(upper or evaluator.encoded.heights, lower)
    # Exact searches keep per-node state for the whole lattice; heuristics do not.
    if algorithm.exact and lattice.size > MAX_LATTICE_SIZE:
        raise InputError(
            f"the generalization lattice has {lattice.size:,} nodes, more than the "
            f"{MAX_LATTICE_SIZE:,} a full search handles; use `algorithm='greedy'` or "
            "`algorithm='datafly'`, fewer quasi-identifiers or shorter hierarchies"
        )
    evaluator.use_metric(metric)
    found = algorithm.solutions(lattice, evaluator, control)
    if not found:
        if control.timed_out:
            raise SearchTimeoutError(
                "the time limit passed before any generalization satisfying the privacy models "
                "was found; give more `time_limit` or a heuristic such as `algorithm='greedy'`"
            )
        raise NoSolutionError(
            "no generalization satisfies the privacy models within the suppression limit"
        )
    if algorithm.uses_metric:
        assert metric is not None
        ranked = ranked_by_score(found, score_tolerance(metric))
    else:
        assert policy is not None
        ranked = rank(found, policy, lattice.heights)
    return SearchOutcome(
        solutions=tuple(ranked),
        nodes_checked=evaluator.checks,
        algorithm=algorithm.name,
        proven_optimal=algorithm.exact and not control.timed_out,
    )


def _require_monotone(evaluator: NodeEvaluator, algorithm: str) -> None:
    if evaluator.monotone():
        return
    broken = [m.name for m in evaluator.models if not evaluator.declared_monotone(m)]
    if broken:
        suppressing = evaluator.max_suppressed_rows > 0
        raise InputError(
            f"model(s) {', '.join(broken)} are not monotone under generalization "
            f"{'with' if suppressing else 'without'} suppression, which '{algorithm}' "
            "assumes; use `algorithm='optimal'` (exhaustive for such models)"
        )
    raise InputError(
        f"this evaluator's acceptance is not monotone under generalization, which "
        f"'{algorithm}' assumes; use `algorithm='optimal'`"
    )
