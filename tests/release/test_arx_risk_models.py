"""ARX's unit tests of its risk-based privacy models, reproduced (issue 13).

``TestAnonymizationRiskBased`` (ARX, public repository, 2018 version): adult,
all nine attributes quasi-identifiers with ARX's hierarchies (no sensitive
attribute), suppression limit 4 %, k not asked. ARX's
``createPrecomputedEntropyMetric(0.1d)`` is the non-monotonic entropy
(``non-monotonic-entropy``) and ``createPrecomputedLossMetric(0.1d)`` its Loss
with gs-factor 0.5 and the geometric mean (``arx-loss``). Population uniqueness
uses ARX's population of the USA (317,238,626) and its deterministic solver with
15 iterations a try. Each case: the model, ARX's metric, ARX's score and its
optimal transformation (levels in column order).
"""

from __future__ import annotations

import polars as pl
import pytest

import kanonym
from kanonym.datasets import ADULT_COLUMNS, adult_hierarchies, adult_hierarchy_path, load_adult
from kanonym.models import PrivacyModel

USA = 317_238_626


def _population(estimator: str) -> PrivacyModel:
    return kanonym.PopulationUniqueness(threshold=1e-4, estimator=estimator, population_size=USA)


RISK_BASED = [
    (
        kanonym.AverageReidentificationRisk(average_risk=0.01),
        "non-monotonic-entropy",
        314637.8461904862,
        [1, 0, 1, 1, 3, 2, 2, 1, 1],
    ),
    (
        kanonym.SampleUniqueness(threshold=0.01),
        "arx-loss",
        0.1606952725863784,
        [0, 3, 0, 0, 1, 1, 1, 1, 0],
    ),
    (
        _population("dankar"),
        "non-monotonic-entropy",
        144298.1603344462,
        [0, 0, 1, 1, 1, 2, 1, 0, 0],
    ),
    (_population("zayatz"), "arx-loss", 0.16078200456326086, [0, 3, 0, 0, 1, 1, 1, 1, 0]),
    (
        _population("pitman"),
        "non-monotonic-entropy",
        144298.1603344462,
        [0, 0, 1, 1, 1, 2, 1, 0, 0],
    ),
    (_population("snb"), "arx-loss", 0.17599055898432758, [0, 3, 0, 0, 2, 1, 1, 1, 0]),
]


@pytest.fixture(scope="module")
def adult() -> tuple[pl.DataFrame, dict[str, kanonym.Hierarchy]]:
    return load_adult(), adult_hierarchies()


@pytest.mark.parametrize(
    ("model", "metric", "score", "levels"),
    RISK_BASED,
    ids=["average-risk", "sample-uniqueness", "dankar", "zayatz", "pitman", "snb"],
)
def test_arx_risk_based(adult, model, metric, score, levels) -> None:
    table, hierarchies = adult
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=1,
        models=[model],
        metric=metric,
        max_suppression=0.04,
        seed=1,
    )
    assert list(result.transformation.values()) == levels
    assert result.metrics[metric] == pytest.approx(score, rel=1e-9)
    # The release reached the threshold, as the report states it.
    (described,) = [m for m in result.report()["models"] if m["model"] == model.name]
    reached = described["reached"]
    assert isinstance(reached, float)
    if isinstance(model, kanonym.PopulationUniqueness):
        assert 0 <= reached <= 1e-4
    else:
        assert reached <= 0.01
    assert result.table.height == table.height - result.suppressed_rows
    assert result.suppressed_rows <= 0.04 * table.height


def test_sample_uniqueness_release_counted_apart(adult) -> None:
    """The released classes, regrouped with Polars: at most 1 % of the rows are uniques."""
    table, hierarchies = adult
    result = kanonym.anonymize(
        table,
        quasi_identifiers=hierarchies,
        k=1,
        models=[kanonym.SampleUniqueness(threshold=0.01)],
        metric="arx-loss",
        max_suppression=0.04,
        seed=1,
    )
    sizes = result.table.group_by(list(hierarchies)).len()["len"]
    assert (sizes == 1).sum() / result.table.height <= 0.01
    (described,) = [m for m in result.report()["models"] if m["model"] == "sample-uniqueness"]
    assert described["reached"] == (sizes == 1).sum() / result.table.height


@pytest.mark.parametrize("engine", ["duckdb", "streaming"])
def test_engines_that_keep_the_rows_elsewhere_agree(adult, tmp_path, engine) -> None:
    """The same node and suppressed rows, and the re-check passes where the rows live."""
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    table, hierarchies = adult
    path = tmp_path / "adult.csv"
    table.head(3000).write_csv(path)
    models = [
        kanonym.SampleUniqueness(threshold=0.01),
        kanonym.PopulationUniqueness(threshold=0.01, estimator="zayatz", sampling_fraction=0.01),
    ]
    options = {
        "quasi_identifiers": hierarchies,
        "k": 1,
        "models": models,
        "metric": "arx-loss",
        "max_suppression": 0.04,
        "seed": 1,
    }
    expected = kanonym.anonymize(table.head(3000), **options)
    with kanonym.anonymize(str(path), engine=engine, **options) as result:
        assert result.transformation == expected.transformation
        assert result.suppressed_rows == expected.suppressed_rows
        assert result.report()["models"] == expected.report()["models"]


def test_apply_releases_the_same_rows_with_the_same_tie_breaks(adult, tmp_path) -> None:
    """``kanonym apply`` re-enforces the threshold with the recorded metric's order, so the
    same table gives the same release."""
    table, _ = adult
    sample = table.head(3000)
    # Files, not objects: a report records where its hierarchies come from.
    hierarchies = {c: str(adult_hierarchy_path(c)) for c in ADULT_COLUMNS}
    result = kanonym.anonymize(
        sample,
        quasi_identifiers=hierarchies,
        k=1,
        models=[kanonym.SampleUniqueness(threshold=0.01)],
        metric="arx-loss",
        max_suppression=0.04,
        seed=1,
    )
    again = kanonym.apply_transformation(sample, result.report(), seed=1)
    assert again.suppressed_rows == result.suppressed_rows
    columns = list(hierarchies)
    assert again.table.sort(columns).equals(result.table.sort(columns))
