"""Issue 15, point 5: the full-domain re-check ties every released row to its input row.

Faults are injected into the transform's last step (the row shuffle, which every
full-domain and cell-suppressed release goes through) after the release was built
correctly. Each fault keeps the release k-anonymous and within the suppression
limit, so that grouping the released table alone cannot see it: a row moved
between two large classes, an untouched cell altered, one record of a k-row class
replaced by a copy of another (k rows, k-1 people), one row too many removed.
Each must raise VerificationError with nothing written.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from tests import oracle
from tests.meaningful import assume_meaningful
from tests.strategies import problems

import kanonym
from kanonym.config import AnonymizationConfig, ReleaseJob, SuppressionLimit
from kanonym.encode import encode
from kanonym.errors import VerificationError
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.models import KAnonymity
from kanonym.release.pipeline import run_job
from kanonym.transform import cells as cells_module
from kanonym.transform import generalize
from kanonym.verify import measure, verify_release, verify_rows

# The module, not the function of the same name that ``kanonym.transform`` exports.
generalize_module = importlib.import_module("kanonym.transform.generalize")
IntArray = npt.NDArray[np.int64]
Shuffle = Callable[[pl.DataFrame, int], tuple[pl.DataFrame, IntArray]]
# A fault: (released table, source row of each released row, quasi-identifiers, k) -> both again.
Fault = Callable[[pl.DataFrame, IntArray, list[str], int], tuple[pl.DataFrame, IntArray]]

K = 3
QI = ["race", "zip"]
RACE = Hierarchy("race", (("asian", "black", "white"), ("person",) * 3))
ZIP = Hierarchy(
    "zip",
    (
        ("02138", "02139", "02141", "02142"),
        ("0213*", "0213*", "0214*", "0214*"),
        ("*",) * 4,
    ),
)
# At race=0, zip=1 (pinned below): (asian, 0213*) 3 rows, (black, 0213*) 4,
# (black, 0214*) 3, (white, 0214*) 5, and one (white, 0213*) row that tuple
# suppression removes and cell suppression blanks (with the asian rows' race).
ROWS = [
    ("asian", "02138"),
    ("asian", "02139"),
    ("asian", "02138"),
    ("black", "02138"),
    ("black", "02139"),
    ("black", "02139"),
    ("black", "02138"),
    ("black", "02141"),
    ("black", "02142"),
    ("black", "02141"),
    ("white", "02141"),
    ("white", "02142"),
    ("white", "02141"),
    ("white", "02142"),
    ("white", "02141"),
    ("white", "02139"),
]


def _job(folder: Path, technique: str | None = None) -> ReleaseJob:
    """The 16-row table as a CSV with a name (removed) and a visit count (released unchanged)."""
    folder.mkdir(exist_ok=True)
    source = folder / "patients.csv"
    pl.DataFrame(
        {
            "name": [f"Person {i}" for i in range(len(ROWS))],
            "race": [race for race, _ in ROWS],
            "zip": [zip_code for _, zip_code in ROWS],
            "visits": [str(10 + i) for i in range(len(ROWS))],
        }
    ).write_csv(source)
    cells = technique is not None
    config = AnonymizationConfig(
        quasi_identifiers={"race": RACE, "zip": ZIP},
        k=K,
        identifying=("name",),
        insensitive=("visits",),
        # Cell suppression blanks at most every row; tuple suppression removes one.
        suppression=SuppressionLimit(rows=len(ROWS) if cells else 2),
        min_levels={"zip": 1},
        max_levels={"race": 0, "zip": 1},
        technique=technique,
        seed=5,
    )
    return ReleaseJob(input=source, output=folder / "out.csv", config=config)


def _inject(
    monkeypatch: pytest.MonkeyPatch, module: object, fault: Fault, faults: list[str]
) -> None:
    """Replace ``module.shuffled`` by the real shuffle followed by ``fault``.

    The fault must leave the release k-anonymous: it is one the old re-check,
    grouping the released table alone, let through.
    """
    real: Shuffle = generalize_module.shuffled

    def shuffled(released: pl.DataFrame, seed: int) -> tuple[pl.DataFrame, IntArray]:
        table, order = real(released, seed)
        table, order = fault(table, order, QI, K)
        assert measure(table, QI, K).k_anonymous
        faults.append(fault.__name__)
        return table, order

    monkeypatch.setattr(module, "shuffled", shuffled)


def _classes(table: pl.DataFrame, qi: list[str]) -> dict[tuple[object, ...], list[int]]:
    """Released rows per class, in row order."""
    rows: dict[tuple[object, ...], list[int]] = {}
    for row, key in enumerate(table.select(qi).rows()):
        rows.setdefault(key, []).append(row)
    return rows


def _row(table: pl.DataFrame, at: int) -> pl.DataFrame:
    return table.slice(at, 1)


def _with_row(table: pl.DataFrame, at: int, row: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([table.slice(0, at), row, table.slice(at + 1)])


def move_between_classes(
    table: pl.DataFrame, order: IntArray, qi: list[str], k: int
) -> tuple[pl.DataFrame, IntArray]:
    """(a) Two rows of two classes of at least k rows swap their quasi-identifiers."""
    large = [rows for rows in _classes(table, qi).values() if len(rows) >= k]
    i, j = large[0][0], large[1][0]
    first, second = _row(table, i).select(qi), _row(table, j).select(qi)
    table = _with_row(table, i, _row(table, i).with_columns(second))
    return _with_row(table, j, _row(table, j).with_columns(first)), order


def alter_untouched_cell(
    table: pl.DataFrame, order: IntArray, qi: list[str], k: int
) -> tuple[pl.DataFrame, IntArray]:
    """(b) One cell of the column released unchanged gets another value."""
    return _with_row(table, 0, _row(table, 0).with_columns(pl.lit("999").alias("visits"))), order


def copy_within_k_class(
    table: pl.DataFrame, order: IntArray, qi: list[str], k: int
) -> tuple[pl.DataFrame, IntArray]:
    """(c) In a class of exactly k rows, one record is replaced by a copy of another."""
    rows = next(rows for rows in _classes(table, qi).values() if len(rows) == k)
    return _with_row(table, rows[0], _row(table, rows[1])), order


def copy_within_k_class_and_its_source(
    table: pl.DataFrame, order: IntArray, qi: list[str], k: int
) -> tuple[pl.DataFrame, IntArray]:
    """(c) as above, the copied row's source index copied too (consistent, but twice one row)."""
    rows = next(rows for rows in _classes(table, qi).values() if len(rows) == k)
    order = order.copy()
    order[rows[0]] = order[rows[1]]
    return _with_row(table, rows[0], _row(table, rows[1])), order


def drop_one_row(
    table: pl.DataFrame, order: IntArray, qi: list[str], k: int
) -> tuple[pl.DataFrame, IntArray]:
    """One row of a class larger than k is removed, within the suppression limit."""
    row = next(rows for rows in _classes(table, qi).values() if len(rows) > k)[0]
    return pl.concat([table.slice(0, row), table.slice(row + 1)]), order


def drop_one_row_and_its_source(
    table: pl.DataFrame, order: IntArray, qi: list[str], k: int
) -> tuple[pl.DataFrame, IntArray]:
    """As above, its source index removed too: the rows left are faithful, one too few."""
    row = next(rows for rows in _classes(table, qi).values() if len(rows) > k)[0]
    return pl.concat([table.slice(0, row), table.slice(row + 1)]), np.delete(order, row)


def _refused(job: ReleaseJob) -> None:
    with pytest.raises(VerificationError):
        run_job(job)
    assert not job.output.exists()
    assert list(job.output.parent.iterdir()) == [job.input]


def test_the_unfaulted_release_passes(tmp_path: Path) -> None:
    job = _job(tmp_path)
    result = run_job(job)
    assert result.transformation == {"race": 0, "zip": 1}
    assert result.suppressed_rows == 1
    assert job.output.exists()


@pytest.mark.parametrize(
    "fault",
    [
        move_between_classes,
        alter_untouched_cell,
        copy_within_k_class,
        copy_within_k_class_and_its_source,
        drop_one_row,
        drop_one_row_and_its_source,
    ],
)
def test_issue15_p5_a_faulty_full_domain_release_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: Fault
) -> None:
    faults: list[str] = []
    _inject(monkeypatch, generalize_module, fault, faults)
    _refused(_job(tmp_path))
    assert faults == [fault.__name__]


@pytest.mark.parametrize("fault", [alter_untouched_cell, copy_within_k_class])
def test_issue15_p5_a_faulty_cell_suppressed_release_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: Fault
) -> None:
    faults: list[str] = []
    _inject(monkeypatch, cells_module, fault, faults)
    _refused(_job(tmp_path, technique="AG_CS"))
    assert faults == [fault.__name__]


@pytest.mark.parametrize("fault", [move_between_classes, copy_within_k_class_and_its_source])
def test_other_faulty_cell_suppressed_releases_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: Fault
) -> None:
    # Caught before point 5 too: each quasi-identifier was compared with its row's
    # label, and the source rows had to be a permutation.
    faults: list[str] = []
    _inject(monkeypatch, cells_module, fault, faults)
    _refused(_job(tmp_path, technique="AG_CS"))
    assert faults == [fault.__name__]


@settings(max_examples=60, deadline=None)
@given(problem=problems(), data=st.data())
def test_issue15_p5_every_unfaulted_generalization_passes_the_row_check(problem, data) -> None:
    """Any node, any k, any seed: the transform's release passes ``verify_release``."""
    table, hs = problem
    n = table.height
    table = table.with_columns(
        pl.Series("id", range(n)),
        pl.Series(
            "note",
            data.draw(st.lists(st.none() | st.text(max_size=3), min_size=n, max_size=n)),
            dtype=pl.String,
        ),
    )
    node = tuple(data.draw(st.integers(0, h.height)) for h in hs.values())
    k = data.draw(st.integers(1, 4))
    encoded = encode(table, hs)
    evaluator = NodeEvaluator(encoded, [KAnonymity(k=k)], max_suppressed_rows=n)
    classes = evaluator.classes(node)
    keep = classes.satisfied[classes.tuple_class][evaluator.frequency_set.rows()]
    released, rows = generalize(
        table, encoded, node, keep=keep, drop=["id"], seed=data.draw(st.integers(0, 2**32))
    )
    levels = dict(zip(hs, node, strict=True))
    summary = verify_release(
        released,
        source=table,
        source_rows=rows,
        columns=list(hs),
        hierarchies=hs,
        levels=levels,
        k=k,
        suppressed_rows=evaluator.evaluate(node).suppressed_rows,
        max_suppressed_rows=n,
        removed_columns=["id"],
    )
    assert summary.rows == n - evaluator.evaluate(node).suppressed_rows


@settings(max_examples=40, deadline=None)
@given(problem=problems(), data=st.data())
def test_every_unfaulted_release_is_written(problem, data) -> None:
    """Random tables, k, limits and techniques: anonymize never refuses its own release."""
    table, hs = problem
    n = table.height
    table = table.with_columns(pl.Series("visits", [str(i % 3) for i in range(n)]))
    technique = data.draw(st.sampled_from(["AG_TS", "AG_CS", "_CS", "_TS"]))
    k = data.draw(st.integers(1, 4))
    limit = data.draw(st.integers(0, n))
    try:
        result = kanonym.anonymize(
            table,
            quasi_identifiers=hs,
            k=k,
            insensitive=["visits"],
            max_suppressed_rows=limit or None,
            technique=technique,
            seed=data.draw(st.integers(0, 2**32)),
        )
    except (kanonym.InputError, kanonym.NoSolutionError) as error:
        if k > n:
            assert "larger than" in str(error)
            event("refused: k above the rows")
            return
        # Refused only when brute force finds no node of the technique's lattice either.
        assert isinstance(error, kanonym.NoSolutionError), str(error)
        found = oracle.satisfying_nodes(
            table,
            hs,
            k,
            limit,
            suppression=oracle.technique_suppression(technique),
            levels=oracle.technique_levels(technique, hs),
        )
        if found and technique == "_CS":
            # The cell heuristic can miss a conversion (strict xfail in
            # tests/release/test_techniques_properties.py).
            assume_meaningful(False, "the cell heuristic missed a conversion")
        assert not found, f"refused, yet {found} satisfy"
        event("refused: no node satisfies (brute force)")
        return
    assert result.table.height == n - result.suppressed_rows


def _generalized(table: pl.DataFrame, hs: dict[str, Hierarchy], node: tuple[int, ...]):
    encoded = encode(table, hs)
    keep = np.ones(table.height, dtype=np.bool_)
    return generalize(table, encoded, node, keep=keep, drop=[], seed=3)


def test_issue15_p5_an_ancestor_passes_only_without_levels() -> None:
    """Without levels (the ledger keeping what an earlier release published), any
    ancestor of the input value is accepted; with levels, only the level's label."""
    table = pl.DataFrame({"zip": ["02138", "02141", "02139"], "n": ["1", "2", "3"]})
    released, rows = _generalized(table, {"zip": ZIP}, (1,))
    coarser = released.with_columns(
        pl.when(pl.col("n") == "1").then(pl.lit("*")).otherwise(pl.col("zip")).alias("zip")
    )
    common = {"source": table, "source_rows": rows, "columns": ["zip"]}
    verify_rows(coarser, hierarchies={"zip": ZIP}, removed_columns=[], **common)
    with pytest.raises(VerificationError, match=r"'\*' where .* '0213\*'"):
        verify_rows(
            coarser, hierarchies={"zip": ZIP}, levels={"zip": 1}, removed_columns=[], **common
        )
    finer = released.with_columns(
        pl.when(pl.col("n") == "2").then(pl.lit("02142")).otherwise(pl.col("zip")).alias("zip")
    )
    with pytest.raises(VerificationError, match="'02142' is not '02141' or an ancestor"):
        verify_rows(finer, hierarchies={"zip": ZIP}, removed_columns=[], **common)


def test_issue15_p5_missing_values_are_equal_and_typed_columns_compare_as_text() -> None:
    table = pl.DataFrame(
        {"zip": ["02138", None, "02139"], "n": [1.5, None, float("nan")], "s": ["a", None, "c"]}
    )
    h = Hierarchy("zip", (("02138", "02139", None), ("0213*", "0213*", "?"), ("*",) * 3))
    released, rows = _generalized(table, {"zip": h}, (1,))
    verify_rows(
        released, source=table, source_rows=rows, columns=["zip"],
        hierarchies={"zip": h}, levels={"zip": 1}, removed_columns=[],
    )  # fmt: skip
    shown_null = released.with_columns(pl.lit(None, pl.String).alias("s"))
    with pytest.raises(VerificationError, match="column 's'"):
        verify_rows(
            shown_null, source=table, source_rows=rows, columns=["zip"],
            hierarchies={"zip": h}, levels={"zip": 1}, removed_columns=[],
        )  # fmt: skip


@pytest.mark.parametrize(
    ("source_rows", "message"),
    [
        ([0, 1], "2 source rows for 3 released rows"),
        ([0, 1, 1], "input row 1 is released twice"),
        ([0, 1, 3], "not an input row"),
        ([0, 1, -1], "not an input row"),
    ],
)
def test_issue15_p5_source_rows_must_be_a_one_to_one_matching(
    source_rows: list[int], message: str
) -> None:
    table = pl.DataFrame({"zip": ["02138", "02141", "02139"]})
    with pytest.raises(VerificationError, match=message):
        verify_rows(
            table, source=table, source_rows=np.array(source_rows, dtype=np.int64),
            columns=["zip"], hierarchies={"zip": ZIP}, removed_columns=[],
        )  # fmt: skip


def test_issue15_p5_suppressed_rows_must_be_those_the_report_counts() -> None:
    table = pl.DataFrame({"zip": ["02138", "02139", "02141"]})
    released, rows = _generalized(table, {"zip": ZIP}, (2,))
    with pytest.raises(VerificationError, match="suppresses 0 rows; the report counts 1"):
        verify_release(
            released, source=table, source_rows=rows, columns=["zip"],
            hierarchies={"zip": ZIP}, levels={"zip": 2}, k=1, suppressed_rows=1,
            max_suppressed_rows=3, removed_columns=[],
        )  # fmt: skip


def test_the_counting_fault_helpers_keep_the_release_k_anonymous() -> None:
    # The faults above are invisible to grouping: sizes of classes are those of the release.
    table = pl.DataFrame(
        {"race": ["a"] * 3 + ["b"] * 4, "zip": ["z"] * 7, "visits": list("1234567")}
    )
    order = np.arange(7, dtype=np.int64)
    for fault in (move_between_classes, alter_untouched_cell, copy_within_k_class):
        faulted, _ = fault(table, order, QI, K)
        assert Counter(faulted.select(QI).rows()) == Counter(table.select(QI).rows())


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        (pl.Series("n", [0.0, 1.0]), pl.Series("n", [-0.0, 1.0]), "row 0, column 'n' differs"),
        (pl.Series("n", [b"\xff", b"a"]), pl.Series("n", [b"\xfe", b"a"]), "row 0, column 'n'"),
        (pl.Series("n", [[1], [2]]), pl.Series("n", [[1], [3]]), "row 1, column 'n' differs"),
        (pl.Series("n", [1, 2]), pl.Series("n", ["1", "2"]), "'n' is String; the input's is Int64"),
    ],
)
def test_unchanged_columns_keep_their_bytes_and_type(
    before: pl.Series, after: pl.Series, message: str
) -> None:
    source = pl.DataFrame({"zip": ["02138", "02141"], "n": before})
    released = pl.DataFrame({"zip": ["0213*", "0214*"], "n": after})
    arguments = {
        "source": source, "source_rows": np.array([0, 1], dtype=np.int64),
        "columns": ["zip"], "hierarchies": {"zip": ZIP}, "levels": {"zip": 1},
        "removed_columns": [],
    }  # fmt: skip
    verify_rows(released.with_columns(before), **arguments)
    with pytest.raises(VerificationError, match=message):
        verify_rows(released, **arguments)
