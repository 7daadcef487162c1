"""SafePub's data-dependent search: a private walk down the generalization lattice.

SafePub (Bild, Kuhn & Prasser 2018, "SafePub: A Truthful Data Anonymization
Algorithm With Strong Privacy Guarantees", PoPETs 2018(1), section 5) releases
a table (epsilon, delta)-differentially private by drawing a random sample,
generalizing it and suppressing every class of fewer than k records; when the
generalization is chosen by looking at the data, that choice must be private
too, and costs a search budget ``epsilon`` of its own. The search is a walk of
a fixed number of steps from the top of the lattice (every attribute at its
root):

1. the top is the first *pivot*; the *candidates* are empty;
2. each step adds the pivot's direct specializations (one attribute one level
   lower, within the lattice's lower bounds) that are not candidates yet,
   removes the pivot from the candidates, and draws the next pivot among the
   candidates with the exponential mechanism (McSherry & Talwar 2007,
   "Mechanism Design via Differential Privacy", FOCS): candidate g with
   probability proportional to ``exp(epsilon_step * score(g) / 2)``, the
   scores being SafePub's, of sensitivity 1 (:mod:`kanonym.search.safepub_scores`);
3. the result is one of the pivots.

Candidates accumulate: the walk may jump back to a specialization of an
earlier pivot, and an earlier pivot may come back as a candidate. It ends
after ``steps`` draws, or earlier when no candidate is left (the whole lattice
was visited) or the deadline passes.

How the result is chosen among the pivots, and how the budget is split:

* ``final="exponential"`` (kanonym's default): by the exponential mechanism
  too. Each step gets ``epsilon / (steps + 1)``; the final draw gets what the
  steps left (at least as much). By sequential composition the walk is
  ``epsilon``-differentially private: the draws' budgets add up to ``epsilon``.
* ``final="best"`` (ARX's ``DataDependentEDDPAlgorithm``, and SafePub's
  algorithm as ARX implements it): the pivot of the highest score, the first
  one on ties; each step gets ``epsilon / steps``. The steps' draws spend
  ``epsilon``; picking the best pivot by its score then reads the data once
  more without noise, which the exponential mechanism's guarantee does not
  cover. Offered to reproduce ARX, not as kanonym's choice.

Randomness: a NumPy ``Generator`` draws with
:func:`~kanonym.differential_privacy.exponential_mechanism` (one uniform per
draw). A :class:`~kanonym.differential_privacy.JavaRandom` draws as ARX does,
as far as it is documented (ARX reference notes, section 5.3):

* candidates are listed for each draw in the iteration order of ARX's
  ``java.util.HashMap<Long, Double>`` from node identifiers to scores
  (reproduced: buckets by the identifier's hash, resizes at 3/4 load and for a
  bin of 9 entries below 64 buckets; a bin that Java turns into a red-black
  tree, which changes its order, is not reproduced: the walk's record then says
  ``java_order_exact = False``);
* a node's identifier is its mixed-radix index (last attribute fastest, levels
  counted from the lower bound), as ARX's lattice library numbers nodes, and
  predecessors are listed attribute by attribute;
* each draw is :func:`~kanonym.differential_privacy.exponential_mechanism_arx`
  with the per-step budget ARX computes
  (:func:`~kanonym.differential_privacy.arx_epsilon_per_step`): one
  ``nextDouble()`` of a single ``JavaRandom`` per draw (pass
  ``JavaRandom(ARX_DETERMINISTIC_SEED)`` for ARX's deterministic mode);
* the scores are SafePub's as ARX computes them, exact rationals rounded once.

What of ARX's randomized test cases (TestAnonymizationDifferentialPrivacy,
data-dependent, adult, 10 and 100 steps, five score functions) is reproduced
(tests/search/test_safepub_arx.py): the score ARX reports at the
transformation ARX reports, in all ten cases, bit for bit (ARX's sample, k and
scores); and the whole walk of one case (discernibility, 10 steps), ending on
ARX's transformation with ARX's score. That walk's draws are nearly
deterministic (its scores differ a lot), so it confirms the candidates and
their order more than the draws' arithmetic. The nine other walks end on other
pivots: not reproduced. ARX's history has several exponential mechanisms (a
double-based one drawing one ``nextDouble()`` per draw, reproduced here; one
on ``BigDecimal``; one on ``BigFraction`` with rejection sampling over
``nextBytes``, tried and not matching either); which one, with which
per-step budget and candidate bookkeeping, produced the stored expectations is
not established.

Example (two attributes; a huge budget makes every draw the best candidate):
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.evaluation import NodeEvaluator
    >>> from kanonym.lattice import Lattice
    >>> from kanonym.models import KAnonymity
    >>> h = Hierarchy("x", (("a", "b", "c", "d"), ("ab", "ab", "cd", "cd"), ("*",) * 4))
    >>> g = Hierarchy("y", (("u", "v"), ("*", "*")))
    >>> table = pl.DataFrame({"x": list("aabbccdd") * 2, "y": list("uv") * 8})
    >>> enc = encode(table, {"x": h, "y": g})
    >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=16)
    >>> walk = safepub_search(ev, Lattice(enc.heights), k=2, steps=3, epsilon=1e9,
    ...                       score="group-size", random=np.random.default_rng(0))
    >>> walk.node, walk.score, [s.pivot for s in walk.steps]
    ((0, 0), 8.0, [(2, 0), (1, 0), (0, 0)])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from kanonym.differential_privacy import (
    JavaRandom,
    arx_epsilon_per_step,
    exponential_mechanism,
    exponential_mechanism_arx,
)
from kanonym.differential_privacy._checks import check_positive, check_whole
from kanonym.encode import EncodedTable, FrequencySet
from kanonym.errors import InputError, echo
from kanonym.lattice import Lattice, Node
from kanonym.metrics import ClassView
from kanonym.search.base import SearchControl
from kanonym.search.safepub_scores import (
    ScoreTables,
    check_score,
    score_node,
    sensitivity,
)

Final = Literal["exponential", "best"]
FINALS: tuple[Final, ...] = ("exponential", "best")


class SafePubEvaluator(Protocol):
    """What the walk needs of a node evaluator (:class:`~kanonym.evaluation.NodeEvaluator` has it).

    Its frequency set is the sample's; its models keep exactly the classes of
    at least k sample rows (SafePub's k-anonymity on the sample).
    """

    encoded: EncodedTable
    frequency_set: FrequencySet

    def view(self, node: Node) -> ClassView:
        """The classes of ``node`` (sample rows per class, and which are kept)."""
        ...


@dataclass(frozen=True)
class SafePubStep:
    """One draw of the walk.

    Attributes:
        pivot: the node drawn, the next pivot.
        score: its score (divided by the sensitivity).
        candidates: how many candidates it was drawn among.
        index: its position in the candidates as listed for the draw.
        epsilon: the budget of this draw.
    """

    pivot: Node
    score: float
    candidates: int
    index: int
    epsilon: float

    def describe(self) -> dict[str, object]:
        """The step as a report records it."""
        return {
            "pivot": list(self.pivot),
            "score": self.score,
            "candidates": self.candidates,
            "index": self.index,
            "epsilon": self.epsilon,
        }


@dataclass(frozen=True)
class SafePubWalk:
    """The outcome of :func:`safepub_search`: the node chosen and how.

    Attributes:
        node: the chosen transformation (one of the pivots).
        score: its score (divided by the sensitivity).
        score_name: the score function (:data:`~kanonym.search.safepub_scores.SCORES`).
        sensitivity: the score's sensitivity, by which its raw value was divided.
        top: the first pivot (the lattice's top) and ``top_score`` its score.
        steps: the draws, in order.
        final: how the result was chosen among the pivots (``"exponential"`` or ``"best"``).
        final_candidates: distinct pivots it was chosen among.
        final_index: the chosen pivot's position among them (first visits in order).
        final_epsilon: the budget of the final draw (0 for ``"best"``).
        epsilon: the search budget.
        steps_requested: the ``steps`` asked for.
        randomness: ``"numpy"`` or ``"java"`` (ARX's draws).
        nodes_scored: distinct nodes whose score was computed.
        java_order_exact: False when a Java hash bin would have become a tree,
            whose order is not reproduced (always True with NumPy).
        stopped: why the walk ended: ``"steps"``, ``"exhausted"`` (no
            candidate left) or ``"deadline"``.
        k: the class size kept; ``input_rows`` N and ``sample_rows`` |S|.
    """

    node: Node
    score: float
    score_name: str
    sensitivity: float
    top: Node
    top_score: float
    steps: tuple[SafePubStep, ...]
    final: Final
    final_candidates: int
    final_index: int
    final_epsilon: float
    epsilon: float
    steps_requested: int
    randomness: str
    nodes_scored: int
    java_order_exact: bool
    stopped: str
    k: int
    input_rows: int
    sample_rows: int

    @property
    def pivots(self) -> tuple[Node, ...]:
        """The pivots in order: the top, then each step's draw."""
        return (self.top, *(s.pivot for s in self.steps))

    @property
    def epsilon_spent(self) -> float:
        """The budgets of all draws, added: the walk's epsilon by sequential composition.

        Equal to :attr:`epsilon` (to rounding) unless the walk ended early;
        with ``final="best"`` the final choice is not counted (see the module).
        """
        return math.fsum([*(s.epsilon for s in self.steps), self.final_epsilon])

    def describe(self) -> dict[str, object]:
        """The walk as the JSON report records it."""
        return {
            "algorithm": "safepub",
            "transformation": list(self.node),
            "score_function": self.score_name,
            "score": self.score,
            "sensitivity": self.sensitivity,
            "epsilon": self.epsilon,
            "epsilon_spent": self.epsilon_spent,
            "steps_requested": self.steps_requested,
            "steps_taken": len(self.steps),
            "stopped": self.stopped,
            "final_choice": self.final,
            "final_candidates": self.final_candidates,
            "final_index": self.final_index,
            "final_epsilon": self.final_epsilon,
            "randomness": self.randomness,
            "java_order_exact": self.java_order_exact,
            "nodes_scored": self.nodes_scored,
            "k": self.k,
            "input_rows": self.input_rows,
            "sample_rows": self.sample_rows,
            "top": {"pivot": list(self.top), "score": self.top_score},
            "steps": [s.describe() for s in self.steps],
        }


class JavaHashOrder:
    """The iteration order of a ``java.util.HashMap`` keyed by ``long`` values.

    Java's ``HashMap`` (OpenJDK 8 and later) keeps ``2**c`` buckets (16 at the
    first insertion), puts a key in bucket ``spread(hash) & (buckets - 1)``
    with ``hash = (int)(v ^ (v >>> 32))`` and ``spread(h) = h ^ (h >>> 16)``,
    appends to the bucket's list, doubles the buckets when the size exceeds
    3/4 of them (a resize keeps each bucket's relative order) and also when a
    bucket reaches 9 entries while there are fewer than 64 buckets; iteration
    visits buckets in ascending order, each in list order. A bucket of 9
    entries among 64 or more buckets becomes a red-black tree, whose order is
    not reproduced: :attr:`exact` turns False.

    Example:
        >>> order = JavaHashOrder()
        >>> for key in (40, 3, 17, 19): order.add(key)
        >>> order.remove(3)
        >>> order.keys()
        [17, 19, 40]
    """

    def __init__(self) -> None:
        self._buckets: list[list[int]] = [[] for _ in range(16)]
        self._members: set[int] = set()
        self.exact = True

    @staticmethod
    def _spread(key: int) -> int:
        word = (key ^ (key >> 32)) & 0xFFFFFFFF
        return word ^ (word >> 16)

    def _bucket(self, key: int) -> list[int]:
        return self._buckets[self._spread(key) & (len(self._buckets) - 1)]

    def _resize(self) -> None:
        old = self._buckets
        self._buckets = [[] for _ in range(2 * len(old))]
        for bucket in old:
            for key in bucket:
                self._bucket(key).append(key)

    def __contains__(self, key: int) -> bool:
        return key in self._members

    def __len__(self) -> int:
        return len(self._members)

    def add(self, key: int) -> None:
        """Insert ``key`` (a ``put`` of a new key)."""
        if key in self._members:
            return
        bucket = self._bucket(key)
        bucket.append(key)
        self._members.add(key)
        if len(bucket) >= 9:
            if len(self._buckets) < 64:
                self._resize()
            else:
                self.exact = False
        if len(self._members) > 3 * len(self._buckets) // 4:
            self._resize()

    def remove(self, key: int) -> None:
        """Remove ``key`` if present."""
        if key in self._members:
            self._members.discard(key)
            self._bucket(key).remove(key)

    def keys(self) -> list[int]:
        """The keys in iteration order."""
        return [key for bucket in self._buckets for key in bucket]


@dataclass
class _Walker:
    """The state of one walk: scores computed so far and the randomness."""

    evaluator: SafePubEvaluator
    lattice: Lattice
    tables: ScoreTables
    score_name: str
    k: int
    input_rows: int
    random: np.random.Generator | JavaRandom
    scores: dict[Node, float] = field(default_factory=dict)

    def score(self, node: Node) -> float:
        value = self.scores.get(node)
        if value is None:
            value = score_node(
                self.score_name,
                self.tables,
                node,
                self.evaluator.view(node),
                k=self.k,
                input_rows=self.input_rows,
            )
            self.scores[node] = value
        return value

    def draw(self, scores: list[float], epsilon: float) -> int:
        if isinstance(self.random, JavaRandom):
            return exponential_mechanism_arx(scores, epsilon, self.random)
        return exponential_mechanism(scores, epsilon, 1.0, self.random)


def _check_random(random: object) -> np.random.Generator | JavaRandom:
    if not isinstance(random, np.random.Generator | JavaRandom):
        raise InputError(
            "`random` must be a numpy.random.Generator or a kanonym.differential_privacy."
            f"JavaRandom, got {type(random).__name__}"
        )
    return random


def _rows(evaluator: SafePubEvaluator, input_rows: int | None) -> tuple[int, int]:
    """The sample's rows and N, the input's (the population's when the evaluator has one)."""
    frequency_set = evaluator.frequency_set
    sample = int(frequency_set.counts.sum())
    if input_rows is None:
        population = frequency_set.population
        return sample, sample if population is None else int(population.sum())
    rows = check_whole(input_rows, "input_rows", 1)
    if rows < sample:
        raise InputError(
            f"`input_rows` = {rows} must be at least the sample's {sample} rows "
            "(the table the sample was drawn from)"
        )
    return sample, rows


def safepub_search(
    evaluator: SafePubEvaluator,
    lattice: Lattice,
    *,
    k: int,
    steps: int,
    epsilon: float,
    score: str,
    random: np.random.Generator | JavaRandom,
    input_rows: int | None = None,
    final: Final | None = None,
    control: SearchControl | None = None,
    on_step: Callable[[SafePubStep], None] | None = None,
) -> SafePubWalk:
    """SafePub's private search (see the module): the node to release, and the walk's record.

    Args:
        evaluator: evaluates nodes on the *sample's* frequency set; its models
            must keep exactly the classes of at least ``k`` sample rows
            (checked at every node scored).
        lattice: the nodes searched; the walk starts at its top and never
            goes below its lower bounds.
        k: SafePub's class size (from epsilon and delta of the release).
        steps: draws of the walk (ARX's step limit with EXPANSIONS semantics).
        epsilon: the search budget, spent in full (see ``final``).
        score: one of :data:`~kanonym.search.safepub_scores.SCORES`.
        random: a NumPy ``Generator`` (kanonym's draws) or a ``JavaRandom``
            (ARX's draws, candidates in Java's ``HashMap`` order).
        input_rows: N, rows of the table the sample was drawn from; by
            default the population's rows when the evaluator's frequency set
            has a population, else the sample's.
        final: ``"exponential"`` or ``"best"`` (see the module); by default
            ``"exponential"`` with NumPy and ``"best"`` (ARX's) with ``JavaRandom``.
        control: deadline and progress; past the deadline the walk ends (the
            budget of the steps not taken is not spent) and the result is
            chosen among the pivots so far.
        on_step: called after every draw with its record.

    Example:
        >>> import polars as pl
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.encode import encode
        >>> from kanonym.evaluation import NodeEvaluator
        >>> from kanonym.models import KAnonymity
        >>> h = Hierarchy("x", (("a", "b"), ("*", "*")))
        >>> enc = encode(pl.DataFrame({"x": ["a", "a", "b", "b"]}), {"x": h})
        >>> ev = NodeEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=4)
        >>> walk = safepub_search(ev, Lattice(enc.heights), k=2, steps=5, epsilon=1.0,
        ...                       score="granularity", random=np.random.default_rng(1))
        >>> walk.stopped, len(walk.steps), walk.epsilon_spent
        ('exhausted', 1, 1.0)
    """
    score_name = check_score(score)
    k = check_whole(k, "k", 1)
    requested = check_whole(steps, "steps", 0)
    budget = check_positive(epsilon, "epsilon")
    source = _check_random(random)
    java = isinstance(source, JavaRandom)
    if final is None:
        final = "best" if java else "exponential"
    if final not in FINALS:
        raise InputError(f"`final` must be 'exponential' or 'best', got {echo(final)}")
    if not isinstance(lattice, Lattice):
        raise InputError(f"`lattice` must be a kanonym Lattice, got {type(lattice).__name__}")
    if len(lattice.heights) != len(evaluator.encoded.attributes):
        raise InputError(
            f"`lattice` has {len(lattice.heights)} attributes, the evaluator's table "
            f"{len(evaluator.encoded.attributes)}"
        )
    sample, rows = _rows(evaluator, input_rows)

    if final == "exponential":
        per_step = budget / (requested + 1)
    elif java:
        per_step = arx_epsilon_per_step(budget, requested) if requested else 0.0
    else:
        per_step = budget / requested if requested else 0.0

    walker = _Walker(
        evaluator, lattice, ScoreTables.of(evaluator.encoded), score_name, k, rows, source
    )
    pivot = lattice.top
    top_score = walker.score(pivot)
    # Candidates as node identifiers; Java's order when drawing as ARX does.
    candidates: JavaHashOrder | dict[int, None] = JavaHashOrder() if java else {}
    if isinstance(candidates, JavaHashOrder):
        candidates.add(lattice.index(pivot))
    else:
        candidates[lattice.index(pivot)] = None
    taken: list[SafePubStep] = []
    stopped = "steps"
    for _ in range(requested):
        if control is not None and control.expired():
            stopped = "deadline"
            break
        for predecessor in lattice.predecessors(pivot):
            key = lattice.index(predecessor)
            if key in candidates:
                continue
            walker.score(predecessor)
            if isinstance(candidates, JavaHashOrder):
                candidates.add(key)
            else:
                candidates[key] = None
        if isinstance(candidates, JavaHashOrder):
            candidates.remove(lattice.index(pivot))
            listed = candidates.keys()
        else:
            candidates.pop(lattice.index(pivot), None)
            listed = list(candidates)
        if not listed:
            stopped = "exhausted"
            break
        nodes = [lattice.node(key) for key in listed]
        values = [walker.scores[node] for node in nodes]
        index = walker.draw(values, per_step)
        pivot = nodes[index]
        step = SafePubStep(pivot, values[index], len(nodes), index, per_step)
        taken.append(step)
        if on_step is not None:
            on_step(step)
        if control is not None:
            control.report(len(walker.scores), lattice.size, None)

    # The pivots in order of first visit: the final choice is among distinct nodes.
    visited = list(dict.fromkeys((lattice.top, *(s.pivot for s in taken))))
    visited_scores = [walker.scores[node] for node in visited]
    if final == "best":
        # ARX keeps the first pivot of the highest score (a strictly better one replaces it).
        chosen = int(np.argmax(visited_scores))
        final_epsilon = 0.0
    else:
        # The final draw gets what the steps left: at least its share.
        final_epsilon = budget - math.fsum(s.epsilon for s in taken)
        chosen = walker.draw(visited_scores, final_epsilon)
    return SafePubWalk(
        node=visited[chosen],
        score=visited_scores[chosen],
        score_name=score_name,
        sensitivity=float(sensitivity(score_name, k)),
        top=lattice.top,
        top_score=top_score,
        steps=tuple(taken),
        final=final,
        final_candidates=len(visited),
        final_index=chosen,
        final_epsilon=final_epsilon,
        epsilon=budget,
        steps_requested=requested,
        randomness="java" if java else "numpy",
        nodes_scored=len(walker.scores),
        java_order_exact=not isinstance(candidates, JavaHashOrder) or candidates.exact,
        stopped=stopped,
        k=k,
        input_rows=rows,
        sample_rows=sample,
    )
