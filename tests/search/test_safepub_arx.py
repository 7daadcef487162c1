"""ARX's data-dependent differential privacy cases on adult: what of them is reproduced.

``TestAnonymizationDifferentialPrivacy`` (ARX, public repository) runs SafePub's
search (``EDDifferentialPrivacy(2.0, 1e-5, null, true)``, search budget 1.0,
``EXPANSIONS`` step semantics, 10 or 100 steps, every column with a hierarchy a
quasi-identifier) and asserts the best pivot's score. kanonym reproduces:

* every score ARX reports, at the transformation ARX reports, bit for bit: ARX's
  sample (``java.util.Random(0xDEADBEEF)``, one ``nextDouble()`` per row), ARX's
  k (62) and SafePub's score functions as exact rationals;
* the whole walk of the discernibility case with 10 steps (ARX's draws:
  ``JavaRandom``, Java's ``HashMap`` order, the double-based exponential
  mechanism), which ends on ARX's transformation with ARX's score. Its draws
  are nearly deterministic (the candidates' scores differ a lot): it checks the
  candidates and their order more than the draws' arithmetic.

The nine other walks end elsewhere: not reproduced (see kanonym.search.safepub).
"""

from __future__ import annotations

import polars as pl
import pytest

from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.differential_privacy import (
    ARX_DETERMINISTIC_SEED,
    JavaRandom,
    bernoulli_sample_java,
    derive_parameters,
)
from kanonym.encode import encode
from kanonym.evaluation import NodeEvaluator
from kanonym.lattice import Lattice
from kanonym.models import KAnonymity
from kanonym.search.safepub import safepub_search
from kanonym.search.safepub_scores import ScoreTables, score_node

# ARX's metric, steps, expected score string, transformation (adult column order).
CASES = [
    ("granularity", 10, "-398.94499089253185", (0, 3, 0, 1, 3, 2, 2, 0, 1)),
    ("granularity", 100, "-355.0808606716044", (1, 3, 0, 1, 2, 1, 1, 1, 0)),
    ("intensity", 10, "-368.19307832422584", (1, 4, 0, 1, 3, 0, 1, 2, 0)),
    ("intensity", 100, "-361.40437158469945", (0, 4, 0, 1, 2, 2, 2, 1, 0)),
    ("entropy", 10, "-363.6885505914479", (0, 3, 1, 1, 3, 2, 1, 1, 1)),
    ("entropy", 100, "-334.58577647224644", (0, 3, 1, 1, 2, 1, 2, 1, 0)),
    ("group-size", 10, "48.0", (0, 4, 0, 1, 3, 2, 2, 0, 1)),
    ("group-size", 100, "83.0", (0, 2, 1, 2, 1, 2, 2, 1, 1)),
    ("discernibility", 10, "-183.7441467377909", (1, 4, 1, 1, 3, 2, 2, 0, 1)),
    ("discernibility", 100, "-185.1496336938025", (0, 1, 1, 1, 3, 2, 2, 2, 1)),
]


@pytest.fixture(scope="module")
def arx_sample() -> tuple[NodeEvaluator, int, int]:
    """ARX's sample of adult, its evaluator (k-anonymity on the sample), k and N."""
    adult = load_adult()
    parameters = derive_parameters(2.0, 1e-5, search_epsilon=1.0)
    drawn = bernoulli_sample_java(adult.height, parameters.beta, ARX_DETERMINISTIC_SEED)
    sample = adult.filter(pl.Series(drawn))
    encoded = encode(sample, adult_hierarchies())
    evaluator = NodeEvaluator(
        encoded, [KAnonymity(k=parameters.k)], max_suppressed_rows=sample.height
    )
    return evaluator, parameters.k, adult.height


def test_arx_k_of_the_search(arx_sample: tuple[NodeEvaluator, int, int]) -> None:
    _, k, rows = arx_sample
    assert (k, rows) == (62, 30_162)


@pytest.mark.parametrize(("score", "steps", "expected", "node"), CASES)
def test_score_of_arx_transformation(
    arx_sample: tuple[NodeEvaluator, int, int],
    score: str,
    steps: int,
    expected: str,
    node: tuple[int, ...],
) -> None:
    evaluator, k, rows = arx_sample
    tables = ScoreTables.of(evaluator.encoded)
    value = score_node(score, tables, node, evaluator.view(node), k=k, input_rows=rows)
    assert repr(value) == expected


def test_arx_discernibility_walk(arx_sample: tuple[NodeEvaluator, int, int]) -> None:
    evaluator, k, rows = arx_sample
    walk = safepub_search(
        evaluator,
        Lattice(evaluator.encoded.heights),
        k=k,
        steps=10,
        epsilon=1.0,
        score="discernibility",
        random=JavaRandom(ARX_DETERMINISTIC_SEED),
        input_rows=rows,
    )
    assert walk.final == "best"
    assert walk.java_order_exact
    assert walk.node == (1, 4, 1, 1, 3, 2, 2, 0, 1)
    assert repr(walk.score) == "-183.7441467377909"
