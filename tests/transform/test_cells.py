"""Writing cell suppression: the chosen cells show the root, nothing else changes."""

from __future__ import annotations

import numpy as np
import polars as pl

from kanonym.encode import encode
from kanonym.evaluation import CellSuppressionEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.models import KAnonymity
from kanonym.transform import blank_cells, blank_release


def test_blank_cells_writes_the_root_and_returns_the_shuffle() -> None:
    zip_h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"), ("*",) * 3))
    frame = pl.DataFrame({"name": ["a", "b", "c"], "zip": ["02138", "02139", "02141"]})
    blanked = np.array([[False], [False], [True]])
    released, rows = blank_cells(
        frame, encode(frame, {"zip": zip_h}), (1,), blanked=blanked, drop=["name"], seed=4
    )
    assert released.columns == ["zip"]
    expected = ["0213*", "0213*", "*"]
    assert released["zip"].to_list() == [expected[r] for r in rows.tolist()]
    assert sorted(rows.tolist()) == [0, 1, 2]


def test_blank_cells_keeps_other_columns_and_types() -> None:
    h = Hierarchy("x", (("a", "b"), ("*", "*")))
    frame = pl.DataFrame({"x": ["a", "b"], "n": [1, 2]})
    released, rows = blank_cells(
        frame, encode(frame, {"x": h}), (0,), blanked=np.array([[True], [False]]), drop=[], seed=0
    )
    assert released.schema["n"] == pl.Int64
    by_source = dict(zip(rows.tolist(), released.iter_rows(), strict=True))
    assert by_source == {0: ("*", 1), 1: ("b", 2)}


def test_blank_release_writes_exactly_the_evaluators_choice() -> None:
    zip_h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"), ("*",) * 3))
    frame = pl.DataFrame({"zip": ["02138", "02139", "02139", "02141", "02141", "02138"]})
    evaluator = CellSuppressionEvaluator(
        encode(frame, {"zip": zip_h}), [KAnonymity(k=2)], max_suppressed_rows=2
    )
    released, rows, cells = blank_release(frame, evaluator, (0,), drop=(), seed=1)
    assert cells is evaluator.accepted((0,))
    # 02139 and 02141 hold two rows each; the two 02138 rows too: nothing to blank.
    assert cells.suppression.total_cells == 0
    assert released["zip"].to_list() == [frame["zip"][r] for r in rows.tolist()]


def test_blank_release_blanks_the_rows_of_the_failing_classes() -> None:
    zip_h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"), ("*",) * 3))
    frame = pl.DataFrame({"zip": ["02138", "02139", "02139", "02141", "02141"]})
    evaluator = CellSuppressionEvaluator(
        encode(frame, {"zip": zip_h}), [KAnonymity(k=2)], max_suppressed_rows=3
    )
    released, rows, cells = blank_release(frame, evaluator, (0,), drop=(), seed=1)
    shown = dict(zip(rows.tolist(), released["zip"].to_list(), strict=True))
    # The lone 02138 cannot stand alone; it joins a group that shows the root.
    assert shown[0] == "*"
    assert sum(value == "*" for value in shown.values()) == cells.suppression.total_cells
    assert cells.suppression.rows == cells.suppression.total_cells
