"""``kanonym check --sensitive`` and ``kanonym.check(..., sensitive=...)``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.cli import main
from kanonym.errors import InputError
from kanonym.verify import CheckSummary, ClassSizeSummary

SEED_003_CSV = """Race,DOB,Sex,ZIP,Disease,Age
asian,64,F,941**,hypertension,61
asian,64,F,941**,obesity,60
asian,64,F,941**,chest pain,60
asian,63,M,941**,obesity,61
asian,63,M,941**,obesity,61
black,64,F,941**,short breath,60
black,64,F,941**,short breath,60
white,64,F,941**,chest pain,60
white,64,F,941**,short breath,60
"""
QI = ["Race", "DOB", "Sex", "ZIP"]


@pytest.fixture
def medical(tmp_path: Path) -> Path:
    """Seed 003's 2-anonymous medical table, with an age column added as a number."""
    path = tmp_path / "medical.csv"
    path.write_text(SEED_003_CSV)
    return path


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    status = main(args)
    return status, json.loads(capsys.readouterr().out)


def test_json_has_exactly_the_documented_shape(
    medical: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", str(medical), "--columns", *QI, "--k", "2", "--sensitive", "Disease", "Age"]
    status, out = run_json([*args, "--json"], capsys)
    assert status == 0
    assert list(out) == [
        "smallest_class",
        "k",
        "rows",
        "classes",
        "rows_below_k",
        "k_anonymous",
        "sensitive",
    ]
    assert (out["smallest_class"], out["k"], out["rows_below_k"], out["k_anonymous"]) == (
        2,
        2,
        0,
        True,
    )
    sensitive = out["sensitive"]
    assert isinstance(sensitive, dict) and list(sensitive) == ["Disease", "Age"]
    disease = sensitive["Disease"]
    assert disease["l_distinct"] == 1
    assert disease["recursive_c_l"] == [0.0, 1]
    assert disease["alpha_k"] == [1.0, 2]
    assert disease["t_ordered"] is None and "not a number" in disease["t_ordered_reason"]
    assert disease["delta_disclosure"] == pytest.approx(math.log(3))
    # Age: 60 six times, 61 three times; asian 63 M is all 61: q = 1 against p = 1/3.
    age = sensitive["Age"]
    assert age["t_ordered"] == pytest.approx(2 / 3)
    assert age["t_equal"] == pytest.approx(2 / 3)
    assert age["beta_basic"] == pytest.approx(2.0)


def test_json_without_sensitive_columns_has_an_empty_sensitive_object(
    medical: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(["check", str(medical), "--columns", *QI, "--k", "3", "--json"], capsys)
    assert status == 1  # the measures never change the exit status; k = 3 fails
    assert out["sensitive"] == {} and out["smallest_class"] == 2 and out["k"] == 3


def test_text_output_has_a_line_per_sensitive_column(
    medical: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["check", str(medical), "--columns", *QI, "--k", "2", "--sensitive", "Disease"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{medical} is 2-anonymous on Race, DOB, Sex, ZIP")
    assert lines[1].startswith("  Disease: l distinct 1, l entropy 1, recursive c l (0, 1), ")
    assert (
        "t ordered none ('Disease' is not ordered: value 'chest pain' is not a number)"
        in (lines[1])
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sensitive", "Illness"], "column 'Illness' not found"),
        (["--sensitive", "Race"], "column 'Race' is in both --columns and --sensitive"),
        (["--sensitive", "Disease", "Disease"], "a column is named twice"),
    ],
)
def test_bad_sensitive_columns_exit_2(
    medical: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["check", str(medical), "--columns", *QI, "--k", "2", *extra]) == 2
    assert message in capsys.readouterr().err


def test_python_api_returns_the_measures_with_the_old_fields() -> None:
    table = pl.read_csv(SEED_003_CSV.encode(), infer_schema=False)
    summary = kanonym.check(table, QI, k=2, sensitive=["Disease"])
    assert isinstance(summary, CheckSummary) and isinstance(summary, ClassSizeSummary)
    assert (summary.k_anonymous, summary.smallest_class, summary.rows_below_k) == (True, 2, 0)
    assert summary.sensitive["Disease"].l_distinct == 1
    assert kanonym.check(table, QI, k=2).sensitive == {}


def test_python_api_rejects_a_bare_string() -> None:
    table = pl.read_csv(SEED_003_CSV.encode(), infer_schema=False)
    with pytest.raises(InputError, match="got the string 'Disease'"):
        kanonym.check(table, QI, k=2, sensitive="Disease")
