"""ARX's unit tests of (epsilon, delta)-differential privacy with a fixed scheme, reproduced.

``TestAnonymizationDifferentialPrivacy`` (ARX, public repository), its
data-independent cases on adult and fars: every column with a hierarchy is a
quasi-identifier, ``EDDifferentialPrivacy(epsilon, delta,
DataGeneralizationScheme.create(DEGREE), true)`` (deterministic: the sample is
drawn with ``java.util.Random(0xDEADBEEF)``), and ARX's ``Loss`` metric is the
score compared. ARX's suppression limit has no effect there (with
differential privacy every drawn row may be suppressed), so it is not given.

Two fars cases ask for delta = 1e-5 of a table of 100,937 rows: delta >= 1/n,
which ARX accepts and kanonym refuses (such a delta allows publishing a record
in the clear). Their scores are reproduced with kanonym's pieces instead:
ARX's sample (:func:`kanonym.differential_privacy.bernoulli_sample_java`),
ARX's k (:func:`kanonym.differential_privacy.derive_parameters`) as plain
k-anonymity, the scheme's levels and every drawn row suppressible.

:func:`arx_loss` computes ARX's ``Loss`` from the
release (the released classes, the suppressed rows and the hierarchies), as
ARX defines it: per quasi-identifier, the released rows weighted by the share
of the hierarchy's leaves under their value plus the suppressed rows,
normalized between T/leaves and T (T the sample's size), floored to 1e-10,
and the geometric mean of one plus each. Equal scores need the same sample
(ARX's draw), the same k (ARX's derivation), the same levels (ARX's rounding
of the scheme) and the same suppression.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.datasets import adult_hierarchies, load_adult
from kanonym.differential_privacy import (
    ARX_DETERMINISTIC_SEED,
    bernoulli_sample_java,
    derive_parameters,
)
from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy, load_arx
from kanonym.io import read_table

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
FARS = SHARED_DATA / "fars"
LN2, LN3 = math.log(2), math.log(3)  # Apache's Log().value, i.e. Math.log

# dataset, epsilon, delta, degree, ARX's score, ARX's levels (column order), k. The k is
# kanonym's derivation (ARX's interval arithmetic); for fars (ln 2, 1e-6) and (ln 3, 1e-5) a
# plain double computation gives 67 and 63 instead (a colleague's reference port): ARX's test
# asserts the score only, which both reproduce (no class of those samples is sized in between).
CASES = [
    ("adult", 2.0, 1e-5, "low-medium", 0.6820705793543056, [0, 2, 0, 1, 1, 1, 1, 1, 0], 114),
    ("adult", 1.5, 1e-6, "high", 0.8112222411559193, [1, 3, 1, 2, 2, 2, 2, 2, 1], 100),
    ("adult", LN2, 1e-7, "low-medium", 0.7437618217405468, [0, 2, 0, 1, 1, 1, 1, 1, 0], 81),
    ("adult", LN3, 1e-8, "medium", 0.6092780386290699, [1, 2, 1, 1, 2, 1, 1, 1, 1], 109),
    ("adult", 2.0, 1e-5, "medium-high", 0.5968589299712612, [1, 2, 1, 1, 2, 1, 1, 1, 1], 114),
    ("adult", 1.5, 1e-6, "low-medium", 0.6856395441402736, [0, 2, 0, 1, 1, 1, 1, 1, 0], 100),
    ("fars", 2.0, 1e-5, "low-medium", 0.5814200080206713, [2, 1, 1, 1, 0, 1, 1, 1], 114),
    ("fars", LN2, 1e-6, "high", 0.6800577425519756, [4, 2, 2, 2, 1, 2, 2, 2], 68),
    ("fars", 1.0, 1e-7, "low-medium", 0.5864014933190864, [2, 1, 1, 1, 0, 1, 1, 1], 92),
    ("fars", 1.5, 1e-8, "medium", 0.43090885593016726, [3, 1, 2, 2, 1, 1, 2, 1], 137),
    ("fars", LN3, 1e-5, "high", 0.6796862034370221, [4, 2, 2, 2, 1, 2, 2, 2], 66),
    ("fars", 1.0, 1e-6, "medium-high", 0.40463191801066123, [3, 1, 2, 2, 1, 1, 2, 1], 75),
    # ARX's case 18: 321 rows drawn, every one suppressed (ARX's "Loss" of nothing released).
    ("adult", 0.01, 1e-9, "low-medium", 0.9999999999999989, [0, 2, 0, 1, 1, 1, 1, 1, 0], 96),
]


# Per quasi-identifier, the rows of its hierarchy as ARX reads them: ARX's shares count
# rows, and fars's iage.csv holds the row of 99 twice (kanonym reads it once).
Rows = dict[str, list[list[str]]]


def _adult() -> tuple[pl.DataFrame, dict[str, Hierarchy], Rows]:
    hierarchies = adult_hierarchies()
    rows = {n: [list(r) for r in zip(*h.levels, strict=True)] for n, h in hierarchies.items()}
    return load_adult(), hierarchies, rows


def _fars() -> tuple[pl.DataFrame, dict[str, Hierarchy], Rows]:
    if not FARS.is_dir():
        pytest.skip(f"fars is not bundled; {FARS} is absent")
    frame = read_table(FARS / "fars.csv").frame
    files = {c: FARS / "hierarchies" / f"{c}.csv" for c in frame.columns}
    rows = {c: [line.split(";") for line in f.read_text().splitlines()] for c, f in files.items()}
    return frame, {c: load_arx(f) for c, f in files.items()}, rows


def arx_loss(result: kanonym.Result, sample_rows: int, hierarchy_rows: Rows) -> float:
    """ARX's ``Loss`` score of a release drawn from ``sample_rows`` rows (see the module)."""
    names = list(result.hierarchies)
    classes = result.table.group_by(names).len()
    suppressed = sample_rows - result.table.height
    values = []
    for name in names:
        level = result.transformation[name]
        leaves = len(hierarchy_rows[name])
        under = Counter(row[level] for row in hierarchy_rows[name])
        weighted = [
            rows * (under[value] / leaves)
            for value, rows in zip(classes[name].to_list(), classes["len"].to_list(), strict=True)
        ]
        least = sample_rows / leaves
        loss = (math.fsum(weighted) + suppressed - least) / (sample_rows - least)
        values.append(math.floor(max(loss, 0.0) * 1e10) / 1e10)
    score = 1.0
    for value in values:  # ARX multiplies the roots in column order
        score *= math.pow(value + 1.0, 1.0 / len(values))
    return score - 1.0


@pytest.mark.parametrize(
    ("dataset", "epsilon", "delta", "degree", "score", "levels", "k"),
    CASES,
    ids=[f"{c[0]}-{c[1]:.3g}-{c[2]:g}-{c[3]}" for c in CASES],
)
def test_arx_data_independent_case(dataset, epsilon, delta, degree, score, levels, k) -> None:
    table, hierarchies, rows = _adult() if dataset == "adult" else _fars()
    if delta * table.height >= 1:
        _refused_then_by_pieces(
            table, hierarchies, rows, (epsilon, delta, degree), score, levels, k
        )
        return
    model = kanonym.DifferentialPrivacy(epsilon, delta, generalization=degree, randomness="arx")
    result = kanonym.anonymize(
        table, quasi_identifiers=hierarchies, k=1, models=[model], seed=1, metric="arx-loss"
    )
    (reported,) = [m for m in result.report()["models"] if m["model"] == "differential-privacy"]
    sample = reported["sample"]
    assert isinstance(sample, dict)
    assert reported["k"] == k
    assert sample["generator"] == "java.util.Random"
    assert sample["seed"] == -559038737  # Java's int 0xDEADBEEF
    assert list(result.transformation.values()) == levels
    assert result.input_rows == table.height
    assert result.table.height + result.suppressed_rows == sample["rows_drawn"]
    assert arx_loss(result, sample["rows_drawn"], rows) == pytest.approx(score, rel=1e-9)
    if dataset == "adult":
        # kanonym's own arx-loss metric agrees; on fars it reads iage.csv's repeated row of
        # 99 once, where ARX counts both rows (0.58645 for ARX's 0.58640 in one case).
        assert result.metrics["arx-loss"] == pytest.approx(score, rel=1e-9)


def _refused_then_by_pieces(
    table: pl.DataFrame,
    hierarchies: dict[str, Hierarchy],
    rows: Rows,
    privacy: tuple[float, float, str],
    score: float,
    levels: list[int],
    k: int,
) -> None:
    epsilon, delta, degree = privacy
    model = kanonym.DifferentialPrivacy(epsilon, delta, generalization=degree, randomness="arx")
    with pytest.raises(
        InputError, match=r"^differential-privacy: delta = 1e-05 must be below 1/n"
    ) as refused:
        kanonym.anonymize(table, quasi_identifiers=hierarchies, k=1, models=[model], seed=1)
    assert "\n" not in str(refused.value)
    parameters = derive_parameters(epsilon, delta)
    assert parameters.k == k
    drawn = bernoulli_sample_java(table.height, parameters.beta, ARX_DETERMINISTIC_SEED)
    heights = [h.height for h in hierarchies.values()]
    node = dict(zip(hierarchies, model.levels(heights), strict=True))
    result = kanonym.anonymize(
        table.filter(pl.Series(drawn)),
        quasi_identifiers=hierarchies,
        k=k,
        max_suppression=1.0,
        min_levels=node,
        max_levels=node,
        seed=1,
    )
    assert list(result.transformation.values()) == levels
    assert arx_loss(result, int(drawn.sum()), rows) == pytest.approx(score, rel=1e-9)
