"""``apply`` of a cell-suppressed report runs cell suppression again at the recorded levels."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.errors import StaleTransformationError
from kanonym.hierarchy import Hierarchy
from kanonym.release import apply_transformation

ZIP = Hierarchy(
    "zip",
    (("94138", "94139", "94141", "94142"), ("9413*", "9413*", "9414*", "9414*"), ("*",) * 4),
)


def _table(zips: list[str], races: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"race": races, "zip": zips})


FIT = _table(
    ["94142", "94141", "94139", "94139", "94139", "94138", "94139", "94139", "94141"],
    ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
)


@pytest.fixture
def specs(tmp_path: Path) -> dict[str, str]:
    """Hierarchy specs a report can name again: a builder and a file."""
    (tmp_path / "zip.csv").write_text(ZIP.to_arx_csv())
    return {"race": "suppress", "zip": str(tmp_path / "zip.csv")}


@pytest.fixture
def report(specs) -> dict[str, object]:
    fitted = kanonym.anonymize(
        FIT,
        quasi_identifiers=specs,
        k=2,
        technique="AG_CS",
        max_suppressed_rows=4,
        min_levels={"zip": 1},
        max_levels={"zip": 1, "race": 0},
        seed=1,
    )
    return fitted.report()


def test_the_recorded_levels_with_cells_chosen_on_the_batch(report) -> None:
    batch = _table(
        ["94138", "94138", "94142", "94141", "94139", "94139"],
        ["black", "white", "asian", "asian", "asian", "white"],
    )
    result = apply_transformation(batch, report, seed=2)
    assert result.transformation == {"race": 0, "zip": 1}
    applied = result.report()
    assert applied["technique"] == "AG_CS" and applied["applied_from"] == "<Mapping>"
    assert result.table.height == 6 and result.suppressed_rows == 0
    assert kanonym.check(result.table, ["race", "zip"], k=2).k_anonymous
    # (white, 9413*) and (asian, 9414*) pass; the lone black and asian 9413* rows
    # lose their race.
    assert applied["suppressed_cells"]["rows"] == 2
    assert applied["suppressed_cells"]["by_attribute"] == {"race": 2, "zip": 0}
    assert sorted(result.table.rows()) == [
        ("*", "9413*"),
        ("*", "9413*"),
        ("asian", "9414*"),
        ("asian", "9414*"),
        ("white", "9413*"),
        ("white", "9413*"),
    ]


def test_a_batch_that_needs_more_touched_rows_is_stale(report) -> None:
    batch = _table(
        ["94138", "94139", "94141", "94142", "94138"], ["asian", "asian", "black", "white", "black"]
    )
    with pytest.raises(StaleTransformationError, match="blanking cells cannot protect them"):
        apply_transformation(batch, {**report, "suppression_limit": {"fraction": None, "rows": 2}})


def test_reports_without_a_technique_are_tuple_suppression(report) -> None:
    old = {key: value for key, value in report.items() if key != "technique"}
    old["suppression_limit"] = {"fraction": None, "rows": 4}
    result = apply_transformation(FIT, old, seed=1)
    assert result.report()["technique"] == "AG_TS"
    assert result.table.height == 9 - result.suppressed_rows
    assert result.report()["suppressed_cells"]["total"] == 0


def test_attribute_suppression_applies_as_recorded(specs) -> None:
    fitted = kanonym.anonymize(FIT, quasi_identifiers=specs, k=2, technique="_AS")
    assert fitted.transformation == {"race": 0, "zip": 2}
    batch = _table(["94138", "94139", "94141", "94142"], ["asian", "asian", "black", "black"])
    result = apply_transformation(batch, fitted.report(), seed=1)
    assert sorted(result.table.rows()) == [("asian", "*")] * 2 + [("black", "*")] * 2
