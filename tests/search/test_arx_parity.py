"""Parity with ARX 3.9.2's globally optimal k-anonymity (Flash) on adult and fars.

Expected values: the table of ``/work/shared/anchors/arx.md`` ("ARX 3.9.2 on this
project's machines: optimal k-anonymity anchors"), copied below unchanged.
Every attribute with a hierarchy is a quasi-identifier, in column order (adult:
9, fars: 8); ``suppression`` is a fraction of rows, at most floor(fraction * n)
rows suppressed; ``dm-star`` is ARX's monotonic DM* (sum of squared sizes of all
classes, suppressed rows counted in theirs) and ``entropy`` ARX's non-uniform
entropy. ``suppressed`` and ``classes`` are ARX's suppressed rows and the
classes left in the release.

Optimal nodes can tie on score, and then ARX's levels are one valid answer
among several. Whether each optimum is unique was decided once, when this
table was written, by brute force over the whole lattice (all 12,960 adult and
20,736 fars nodes, both metrics, all eight (k, suppression) pairs), twice: with
kanonym's ``NodeEvaluator`` and metrics, and with a separate numpy
implementation of the definitions above that shares no code with kanonym. Both
agree with each other and with ARX on every case: all 32 optima are unique
(the closest runner-up is 0.067 % above the optimum: fars, dm-star, k=5, 4 %),
so ``tied`` is empty everywhere. A tied case would list every optimal node in
``tied`` and be checked against that list instead of ARX's levels.

The search-only tests use the lower-level API (encoding done once per
dataset); two adult cases also go through :func:`kanonym.anonymize`. Adult
ships with kanonym; fars is read from ``../shared/data/fars`` and its cases are
skipped when that folder is absent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.config import SuppressionLimit
from kanonym.datasets import ADULT_COLUMNS, adult_hierarchies, load_adult
from kanonym.encode import EncodedTable, FrequencySet, encode
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy, load_arx
from kanonym.io import read_table
from kanonym.metrics import MetricContext, make_metric
from kanonym.models import KAnonymity
from kanonym.search import ALGORITHMS, run_search

# tests/search/this_file.py -> parents[3] is the folder holding the repository.
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
FARS = SHARED_DATA / "fars"
FARS_COLUMNS = (
    "iage",
    "irace",
    "ideathmon",
    "ideathday",
    "isex",
    "ihispanic",
    "istatenum",
    "iinjury",
)
ROWS = {"adult": 30_162, "fars": 100_937}
LATTICE_SIZE = {"adult": 12_960, "fars": 20_736}

Levels = tuple[int, ...]
# k, suppression, levels, score, suppressed, classes, tied optima
_Row = tuple[int, float, Levels, float, int, int, tuple[Levels, ...]]
UNIQUE: tuple[Levels, ...] = ()


@dataclass(frozen=True)
class ArxCase:
    """One row of ARX's table, plus what the brute force found about ties.

    ``tied`` lists every optimal node when several share the optimal score, and
    is empty (``UNIQUE``) when ARX's optimum is the only one.
    """

    dataset: str
    metric: str
    k: int
    suppression: float
    levels: Levels
    score: float
    suppressed: int
    classes: int
    tied: tuple[Levels, ...]

    @property
    def unique(self) -> bool:
        return not self.tied

    @property
    def id(self) -> str:
        return f"{self.dataset}-{self.metric}-k{self.k}-sup{self.suppression:g}"


# fmt: off
# arx.md, "ARX 3.9.2 on this project's machines", in its row order. Per dataset and metric:
# k, suppression, optimal levels, score, suppressed, classes; then the tied optimal nodes
# found by the brute force (UNIQUE: ARX's optimum is the only node with the optimal score).
_ARX_TABLE: dict[tuple[str, str], tuple[_Row, ...]] = {
    ("adult", "entropy"): (
        (2, 0.0, (1, 1, 1, 1, 3, 2, 2, 1, 1), 379417.3460570988, 0, 90, UNIQUE),
        (5, 0.0, (1, 2, 1, 1, 3, 2, 2, 1, 1), 407289.5388925293, 0, 48, UNIQUE),
        (10, 0.0, (1, 1, 1, 1, 3, 2, 2, 2, 1), 427068.6405775489, 0, 30, UNIQUE),
        (100, 0.0, (0, 4, 1, 1, 3, 2, 2, 1, 1), 453196.8932458743, 0, 12, UNIQUE),
        (2, 0.04, (0, 0, 1, 2, 2, 2, 2, 0, 0), 200830.9864766802, 1187, 2854, UNIQUE),
        (5, 0.04, (1, 0, 1, 1, 3, 2, 2, 0, 1), 255559.85455731067, 906, 1046, UNIQUE),
        (10, 0.04, (0, 0, 1, 1, 3, 2, 2, 1, 1), 282939.0335460752, 940, 506, UNIQUE),
        (100, 0.04, (1, 1, 1, 1, 3, 2, 2, 1, 1), 379417.3460570988, 866, 57, UNIQUE),
    ),
    ("adult", "dm-star"): (
        (2, 0.0, (1, 1, 1, 1, 3, 2, 2, 1, 1), 19399310.0, 0, 90, UNIQUE),
        (5, 0.0, (1, 1, 1, 2, 3, 2, 2, 1, 1), 33627534.0, 0, 45, UNIQUE),
        (10, 0.0, (1, 1, 1, 1, 3, 2, 2, 2, 1), 55170356.0, 0, 30, UNIQUE),
        (100, 0.0, (0, 4, 1, 1, 3, 2, 2, 1, 1), 102352340.0, 0, 12, UNIQUE),
        (2, 0.04, (1, 0, 1, 1, 1, 2, 2, 0, 1), 649706.0, 1199, 2913, UNIQUE),
        (5, 0.04, (1, 0, 1, 1, 3, 2, 2, 0, 1), 1415782.0, 906, 1046, UNIQUE),
        (10, 0.04, (1, 0, 1, 2, 3, 2, 2, 0, 1), 2300532.0, 1043, 546, UNIQUE),
        (100, 0.04, (1, 1, 1, 1, 3, 2, 2, 1, 1), 19399310.0, 866, 57, UNIQUE),
    ),
    ("fars", "entropy"): (
        (2, 0.0, (5, 2, 0, 0, 1, 2, 3, 0), 1550194.8953632899, 0, 385, UNIQUE),
        (5, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 1684832.739722754, 0, 120, UNIQUE),
        (10, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 1684832.739722754, 0, 120, UNIQUE),
        (100, 0.0, (5, 2, 3, 3, 1, 2, 0, 2), 1828114.5308318876, 0, 51, UNIQUE),
        (2, 0.04, (1, 0, 1, 3, 1, 0, 0, 0), 751504.7301175465, 4037, 8191, UNIQUE),
        (5, 0.04, (5, 0, 1, 2, 0, 0, 0, 0), 971513.2980919094, 3842, 1871, UNIQUE),
        (10, 0.04, (4, 0, 2, 3, 1, 0, 0, 0), 1097245.110636153, 3908, 996, UNIQUE),
        (100, 0.04, (5, 2, 0, 1, 1, 2, 1, 0), 1468439.141237766, 4004, 263, UNIQUE),
    ),
    ("fars", "dm-star"): (
        (2, 0.0, (3, 2, 3, 3, 1, 2, 0, 2), 117308023.0, 0, 255, UNIQUE),
        (5, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 142377891.0, 0, 120, UNIQUE),
        (10, 0.0, (1, 2, 3, 3, 1, 2, 1, 2), 142377891.0, 0, 120, UNIQUE),
        (100, 0.0, (5, 2, 3, 3, 1, 2, 0, 2), 436925397.0, 0, 51, UNIQUE),
        (2, 0.04, (0, 2, 3, 2, 1, 2, 0, 1), 2093997.0, 3480, 11587, UNIQUE),
        (5, 0.04, (0, 2, 2, 2, 1, 2, 1, 0), 4469271.0, 2291, 3843, UNIQUE),
        (10, 0.04, (0, 2, 3, 2, 1, 2, 1, 1), 8045237.0, 2270, 1937, UNIQUE),
        (100, 0.04, (0, 2, 3, 3, 1, 2, 2, 2), 56052481.0, 1748, 254, UNIQUE),
    ),
}
# fmt: on
ARX_CASES: tuple[ArxCase, ...] = tuple(
    ArxCase(dataset, metric, *row) for (dataset, metric), rows in _ARX_TABLE.items() for row in rows
)

_NEEDS_FARS = [
    pytest.mark.shared,
    pytest.mark.skipif(not FARS.is_dir(), reason=f"fars is not bundled; {FARS} is absent"),
]


def _param(case: ArxCase) -> object:
    marks = _NEEDS_FARS if case.dataset == "fars" else []
    return pytest.param(case, id=case.id, marks=marks)


def _case(dataset: str, metric: str, k: int, suppression: float) -> ArxCase:
    return next(
        c
        for c in ARX_CASES
        if (c.dataset, c.metric, c.k, c.suppression) == (dataset, metric, k, suppression)
    )


def _dataset(name: str) -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    if name == "adult":
        return load_adult(), adult_hierarchies()
    frame = read_table(FARS / "fars.csv").frame
    hierarchies = {c: load_arx(FARS / "hierarchies" / f"{c}.csv") for c in frame.columns}
    return frame, hierarchies


@functools.cache
def _prepared(name: str) -> tuple[EncodedTable, FrequencySet]:
    """Encode a dataset once for all its cases (encoding is not what is compared)."""
    frame, hierarchies = _dataset(name)
    columns = ADULT_COLUMNS if name == "adult" else FARS_COLUMNS
    assert tuple(frame.columns) == columns
    assert tuple(hierarchies) == columns
    encoded = encode(frame, hierarchies)
    return encoded, encoded.frequency_set


def test_the_table_is_consistent() -> None:
    """32 distinct cases, each with levels for every quasi-identifier."""
    assert len(ARX_CASES) == 32
    assert len({c.id for c in ARX_CASES}) == 32
    for case in ARX_CASES:
        assert len(case.levels) == len(ADULT_COLUMNS if case.dataset == "adult" else FARS_COLUMNS)
        # A tied case lists ARX's node among its optima, and more than one.
        assert case.unique or (case.levels in case.tied and len(case.tied) > 1), case.id
        assert case.suppressed <= SuppressionLimit(fraction=case.suppression).max_rows(
            ROWS[case.dataset]
        )


@pytest.mark.parametrize("case", [_param(c) for c in ARX_CASES])
def test_optimal_search_matches_arx(case: ArxCase) -> None:
    encoded, frequency_set = _prepared(case.dataset)
    assert encoded.n_rows == ROWS[case.dataset]
    max_rows = SuppressionLimit(fraction=case.suppression).max_rows(encoded.n_rows)
    evaluator = NodeEvaluator(
        encoded,
        [KAnonymity(k=case.k)],
        max_suppressed_rows=max_rows,
        frequency_set=frequency_set,
    )
    metric = make_metric(
        case.metric,
        MetricContext(encoded=encoded, frequency_set=evaluator.frequency_set, k=case.k),
    )

    outcome = run_search(ALGORITHMS["optimal"], evaluator, metric=metric)

    best = outcome.best
    assert best.satisfied
    assert best.suppressed_rows <= max_rows
    assert best.score == pytest.approx(case.score, rel=1e-9)
    if case.unique:
        assert tuple(best.node) == case.levels
        assert best.suppressed_rows == case.suppressed
        assert best.released_classes == case.classes
    else:
        assert tuple(best.node) in case.tied
    assert 0 < outcome.nodes_checked <= LATTICE_SIZE[case.dataset]


@pytest.mark.parametrize(
    "case",
    [_param(_case("adult", "dm-star", 5, 0.04)), _param(_case("adult", "entropy", 2, 0.0))],
)
def test_anonymize_matches_arx(case: ArxCase) -> None:
    result = kanonym.anonymize(
        load_adult(),
        quasi_identifiers=adult_hierarchies(),
        k=case.k,
        max_suppression=case.suppression,
        algorithm="optimal",
        metric=case.metric,
        seed=0,
    )

    assert case.unique
    assert result.metrics[case.metric] == pytest.approx(case.score, rel=1e-9)
    assert list(result.transformation.items()) == list(zip(ADULT_COLUMNS, case.levels, strict=True))
    report = result.report()
    assert report["metric"] == case.metric
    assert report["algorithm"] == "optimal"
    assert report["suppressed_rows"] == case.suppressed
    assert report["released_rows"] == ROWS["adult"] - case.suppressed
    assert result.table.height == ROWS["adult"] - case.suppressed
    assert result.metrics["equivalence_classes"] == case.classes
    timings = report["timings"]
    assert isinstance(timings, dict)
    assert set(timings) >= {"read", "encode", "search", "transform", "verify"}
