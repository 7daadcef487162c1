"""SafePub's private walk: bounds, step count, its two limits in epsilon, and its accounting."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.strategies import problems

from kanonym.differential_privacy import ARX_DETERMINISTIC_SEED, JavaRandom
from kanonym.encode import encode, encode_with_population, group_frame
from kanonym.errors import InputError
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice, Node
from kanonym.models import KAnonymity
from kanonym.search.safepub import JavaHashOrder, SafePubWalk, safepub_search
from kanonym.search.safepub_scores import SCORES, ScoreTables, score_node

AGE = Hierarchy(
    "age",
    (
        ("30", "31", "32", "40", "41", "42"),
        ("3*", "3*", "3*", "4*", "4*", "4*"),
        ("*",) * 6,
    ),
)
SEX = Hierarchy("sex", (("F", "M"), ("*", "*")))
ZIP = Hierarchy("zip", (("0213", "0214", "0215"), ("021*",) * 3, ("*",) * 3))
HIERARCHIES = {"age": AGE, "sex": SEX, "zip": ZIP}


def _table(rows: int = 60) -> pl.DataFrame:
    rng = np.random.default_rng(5)
    return pl.DataFrame(
        {
            name: rng.choice([str(v) for v in h.leaves], size=rows).tolist()
            for name, h in HIERARCHIES.items()
        }
    )


def _evaluator(table: pl.DataFrame, hs: dict[str, Hierarchy], k: int) -> NodeEvaluator:
    encoded = encode(table, hs)
    return NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=table.height)


def _frontiers(walk: SafePubWalk, lattice: Lattice) -> list[set[Node]]:
    """The candidates of every draw, rebuilt from the pivots (SafePub's rule)."""
    candidates = {lattice.top}
    frontiers = []
    pivot = lattice.top
    for step in walk.steps:
        candidates |= set(lattice.predecessors(pivot))
        candidates.discard(pivot)
        frontiers.append(set(candidates))
        pivot = step.pivot
    return frontiers


@st.composite
def walks(draw: st.DrawFn) -> tuple[pl.DataFrame, dict[str, Hierarchy], Lattice, int, int, str]:
    table, hs = draw(problems())
    heights = tuple(h.height for h in hs.values())
    lower = tuple(draw(st.integers(0, height)) for height in heights)
    k = draw(st.integers(1, 3))
    steps = draw(st.integers(0, 12))
    return table, hs, Lattice(heights, lower), k, steps, draw(st.sampled_from(SCORES))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(walks(), st.integers(0, 2**32 - 1), st.booleans())
def test_walk_stays_in_bounds_and_takes_its_steps(
    case: tuple[pl.DataFrame, dict[str, Hierarchy], Lattice, int, int, str], seed: int, java: bool
) -> None:
    table, hs, lattice, k, steps, score = case
    random = JavaRandom(seed) if java else np.random.default_rng(seed)
    walk = safepub_search(
        _evaluator(table, hs, k),
        lattice,
        k=k,
        steps=steps,
        epsilon=1.0,
        score=score,
        random=random,
    )
    for node in walk.pivots:
        assert all(
            lo <= v <= hi for lo, v, hi in zip(lattice.lower, node, lattice.heights, strict=True)
        )
    assert walk.top == lattice.top
    assert walk.node in walk.pivots
    frontiers = _frontiers(walk, lattice)
    for step, frontier in zip(walk.steps, frontiers, strict=True):
        assert step.pivot in frontier
        assert step.candidates == len(frontier)
    if walk.stopped == "exhausted":
        # No candidate left: every node of the box was a pivot.
        assert len(walk.steps) < steps
        assert len(set(walk.pivots)) == lattice.size
    else:
        assert walk.stopped == "steps"
        assert len(walk.steps) == steps


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(walks(), st.integers(0, 2**32 - 1))
def test_huge_epsilon_follows_the_best_candidate(
    case: tuple[pl.DataFrame, dict[str, Hierarchy], Lattice, int, int, str], seed: int
) -> None:
    table, hs, lattice, k, steps, score = case
    evaluator = _evaluator(table, hs, k)
    walk = safepub_search(
        evaluator,
        lattice,
        k=k,
        steps=steps,
        epsilon=1e12,
        score=score,
        random=np.random.default_rng(seed),
    )
    tables = ScoreTables.of(evaluator.encoded)

    def value(node: Node) -> float:
        return score_node(score, tables, node, evaluator.view(node), k=k, input_rows=table.height)

    for step, frontier in zip(walk.steps, _frontiers(walk, lattice), strict=True):
        assert step.score == value(step.pivot) == max(value(node) for node in frontier)
    assert walk.score == max(value(node) for node in walk.pivots)


def test_tiny_epsilon_draws_uniformly() -> None:
    # The top of a 3-attribute lattice has 3 predecessors: each first draw ~ 1/3,
    # and the final choice between the top and that pivot ~ 1/2. Fixed seeds: deterministic.
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    evaluator = _evaluator(table, HIERARCHIES, 2)
    runs = 900
    first: Counter[Node] = Counter()
    final_is_top = 0
    for seed in range(runs):
        walk = safepub_search(
            evaluator,
            lattice,
            k=2,
            steps=1,
            epsilon=1e-9,
            score="discernibility",
            random=np.random.default_rng(seed),
        )
        first[walk.steps[0].pivot] += 1
        final_is_top += walk.node == lattice.top
    assert set(first) == set(lattice.predecessors(lattice.top))
    # Binomial standard deviations: 14.1 for 1/3 of 900, 15 for 1/2; 5 of them allowed.
    assert all(abs(count - runs / 3) <= 71 for count in first.values()), first
    assert abs(final_is_top - runs / 2) <= 75, final_is_top


def test_draws_follow_the_exponential_mechanism() -> None:
    # Epsilon 2 over one step and the final draw: 1 per draw, weights exp(score / 2).
    # The top's predecessors score 2, 2 and 1 (group size): the last is drawn with
    # probability e^0.5 / (e^0.5 + 2 e^1), about 0.233 (uniform would be 1/3).
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    evaluator = _evaluator(table, HIERARCHIES, 2)
    tables = ScoreTables.of(evaluator.encoded)
    values = {
        p: score_node("group-size", tables, p, evaluator.view(p), k=2, input_rows=table.height)
        for p in lattice.predecessors(lattice.top)
    }
    assert sorted(values.values()) == [1.0, 2.0, 2.0]
    worst = min(values, key=values.__getitem__)
    runs = 600
    hits = sum(
        safepub_search(
            evaluator,
            lattice,
            k=2,
            steps=1,
            epsilon=2.0,
            score="group-size",
            random=np.random.default_rng(seed),
        )
        .steps[0]
        .pivot
        == worst
        for seed in range(runs)
    )
    probability = math.exp(0.5) / (math.exp(0.5) + 2 * math.exp(1.0))
    # Five binomial standard deviations (10.4).
    assert abs(hits - runs * probability) <= 52, hits


@pytest.mark.parametrize("steps", [0, 1, 3, 10, 17])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 0.7])
def test_the_walk_spends_its_budget(steps: int, epsilon: float) -> None:
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    evaluator = _evaluator(table, HIERARCHIES, 2)
    walk = safepub_search(
        evaluator,
        lattice,
        k=2,
        steps=steps,
        epsilon=epsilon,
        score="granularity",
        random=np.random.default_rng(3),
    )
    assert walk.stopped == "steps"
    assert math.isclose(walk.epsilon_spent, epsilon, rel_tol=1e-12)
    assert all(s.epsilon == epsilon / (steps + 1) for s in walk.steps)
    assert walk.final_epsilon >= epsilon / (steps + 1) * (1 - 1e-12)
    arx = safepub_search(
        evaluator,
        lattice,
        k=2,
        steps=steps,
        epsilon=epsilon,
        score="granularity",
        random=JavaRandom(ARX_DETERMINISTIC_SEED),
    )
    assert arx.final == "best"
    assert arx.final_epsilon == 0.0
    # ARX rounds each step's share down: never more than the budget.
    assert arx.epsilon_spent <= epsilon
    if steps:
        assert math.isclose(arx.epsilon_spent, epsilon, rel_tol=1e-12)


def test_an_exhausted_walk_gives_the_rest_to_the_final_draw() -> None:
    h = Hierarchy("x", (("a", "b"), ("*", "*")))
    table = pl.DataFrame({"x": ["a", "a", "b", "b"]})
    evaluator = _evaluator(table, {"x": h}, 2)
    walk = safepub_search(
        evaluator,
        Lattice((1,)),
        k=2,
        steps=5,
        epsilon=0.6,
        score="entropy",
        random=np.random.default_rng(0),
    )
    assert walk.stopped == "exhausted"
    assert len(walk.steps) == 1
    assert math.isclose(walk.epsilon_spent, 0.6, rel_tol=1e-12)
    assert math.isclose(walk.final_epsilon, 0.5, rel_tol=1e-12)


def test_java_draws_are_reproducible_and_ordered_as_java() -> None:
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    evaluator = _evaluator(table, HIERARCHIES, 2)
    runs = [
        safepub_search(
            evaluator,
            lattice,
            k=2,
            steps=20,
            epsilon=1.0,
            score="intensity",
            random=JavaRandom(ARX_DETERMINISTIC_SEED),
        )
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert runs[0].randomness == "java"
    assert runs[0].java_order_exact
    # The best pivot, the first of the highest score.
    scores = [runs[0].top_score, *(s.score for s in runs[0].steps)]
    assert runs[0].score == max(scores)
    assert runs[0].node == runs[0].pivots[scores.index(max(scores))]


def test_population_evaluator_gives_the_input_rows() -> None:
    table = _table(80)
    sample = table.head(50)
    population, _ = group_frame(table, list(HIERARCHIES))
    encoded = encode_with_population(encode(sample, HIERARCHIES), population, HIERARCHIES)
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=3)], max_suppressed_rows=50)
    walk = safepub_search(
        evaluator,
        Lattice(encoded.heights),
        k=3,
        steps=4,
        epsilon=1.0,
        score="discernibility",
        random=np.random.default_rng(1),
    )
    assert (walk.input_rows, walk.sample_rows) == (80, 50)
    plain = safepub_search(
        _evaluator(sample, HIERARCHIES, 3),
        Lattice(encoded.heights),
        k=3,
        steps=4,
        epsilon=1.0,
        score="discernibility",
        random=np.random.default_rng(1),
        input_rows=80,
    )
    # The same classes of the sample, hence the same walk.
    assert plain.pivots == walk.pivots
    assert plain.score == walk.score


def test_the_record_describes_the_walk() -> None:
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    walk = safepub_search(
        _evaluator(table, HIERARCHIES, 2),
        lattice,
        k=2,
        steps=3,
        epsilon=1.0,
        score="group-size",
        random=np.random.default_rng(2),
    )
    record = walk.describe()
    assert record["transformation"] == list(walk.node)
    assert record["steps_taken"] == 3
    assert len(record["steps"]) == 3  # type: ignore[arg-type]
    assert record["epsilon_spent"] == walk.epsilon_spent


def test_java_hash_order() -> None:
    order = JavaHashOrder()
    for key in (16, 0, 32, 48, *range(1, 10)):
        order.add(key)
    # 13 keys exceed 3/4 of 16 buckets: 32 buckets, bucket 0 split into 0 and 16.
    assert order.keys() == [0, 32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 48]
    crowded = JavaHashOrder()
    for key in range(0, 144, 16):
        crowded.add(key)
    # A ninth key in one bucket of 16 doubles the buckets instead of making a tree.
    assert crowded.keys() == [0, 32, 64, 96, 128, 16, 48, 80, 112]
    assert crowded.exact
    big = JavaHashOrder()
    for key in range(0, 64 * 9 * 2, 128):
        big.add(key)
    assert big.exact
    for key in range(2**20, 2**20 + 64 * 64, 64):
        big.add(key)
    big.add(2**40)
    assert 2**40 in big and len(big) == len(big.keys())


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"score": "utility"}, "`score` must be one of"),
        ({"steps": -1}, "`steps` must be a whole number >= 0"),
        ({"epsilon": 0.0}, "`epsilon` must be > 0"),
        ({"epsilon": math.inf}, "`epsilon` must be a finite number"),
        ({"k": 0}, "`k` must be a whole number >= 1"),
        ({"random": 7}, "`random` must be a numpy.random.Generator"),
        ({"final": "worst"}, "`final` must be 'exponential' or 'best'"),
        ({"input_rows": 10}, "`input_rows` = 10 must be at least the sample's 60 rows"),
        ({"k": 61}, "`evaluator` must keep exactly the classes of at least `k`"),
    ],
)
def test_bad_input_is_one_line(arguments: dict[str, object], message: str) -> None:
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    call: dict[str, object] = {
        "k": 2,
        "steps": 2,
        "epsilon": 1.0,
        "score": "granularity",
        "random": np.random.default_rng(0),
    } | arguments
    with pytest.raises(InputError, match=message) as error:
        safepub_search(_evaluator(table, HIERARCHIES, 2), lattice, **call)  # type: ignore[arg-type]
    assert "\n" not in str(error.value)


def test_refuses_a_lattice_of_other_attributes() -> None:
    table = _table()
    with pytest.raises(InputError, match="`lattice` has 2 attributes"):
        safepub_search(
            _evaluator(table, HIERARCHIES, 2),
            Lattice((1, 1)),
            k=2,
            steps=1,
            epsilon=1.0,
            score="granularity",
            random=np.random.default_rng(0),
        )


def test_walk_with_no_steps_releases_the_top() -> None:
    table = _table()
    lattice = Lattice(encode(table, HIERARCHIES).heights)
    walk = safepub_search(
        _evaluator(table, HIERARCHIES, 2),
        lattice,
        k=2,
        steps=0,
        epsilon=1.0,
        score="entropy",
        random=np.random.default_rng(0),
    )
    assert walk.node == lattice.top and walk.steps == ()
    assert walk.final_epsilon == 1.0
