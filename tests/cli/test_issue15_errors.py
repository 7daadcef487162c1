"""Issue 15, point 4: error messages name values, cut short, and never a key's.

A value echoed whole made a 1 MB TOML value a 1 MB error line, and a
duplicate --key printed the SSN it was about. Values are now shown through
kanonym.errors.echo (60 characters at most, then the length), and key values
not at all: the message names the column and counts the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from tests.patients import patients, write_patients

from kanonym.cli import main
from kanonym.errors import InputError, echo

BIG = "v" * 1_000_000
SSN = "123-45-6789"
LIMIT = 300

BASE: dict[str, object] = {
    "output": "out.csv",
    "qi": {"birth_date": "date", "sex": "suppress", "zip": "mask"},
    "identifying": ["name", "ssn"],
    "insensitive": ["diagnosis", "admission_date", "length_of_stay"],
    "k": 3,
}


def _value(value: object) -> str:
    """A TOML value: JSON's strings, numbers and arrays are TOML's; tables are inline."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _toml(options: dict[str, object]) -> str:
    return "".join(f"{json.dumps(key)} = {_value(value)}\n" for key, value in options.items())


def _error(folder: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object]) -> str:
    source = folder / "patients.csv"
    if not source.exists():
        write_patients(folder, rows=30)
    if "models" in change:
        change = {**change, "insensitive": ["admission_date", "length_of_stay"]}
    job = folder / "job.toml"
    job.write_text(_toml({"input": str(source), **BASE, **change}), encoding="utf-8")
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kanonym: error: ") and err.count("\n") == 1
    assert "not valid TOML" not in err
    assert not (folder / "out.csv").exists()
    return err


def test_issue15_p4_a_megabyte_toml_value_gives_a_short_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(tmp_path, capsys, {"k": BIG})
    assert len(err) < LIMIT and "(1,000,000 characters)" in err


@pytest.mark.parametrize(
    "change",
    [
        {"k": [BIG]},
        {"seed": BIG},
        {"keep-unlisted": BIG},
        {"max-suppression": BIG},
        {"algorithm": BIG},
        {"metric": BIG},
        {"delimiter": BIG},
        {"models": [BIG]},
        {"models": ["l-diversity:distinct:" + BIG + ":diagnosis"]},
        {"qi": [BIG]},
        {"qi": {"zip": BIG}},
        {"qi": {"zip": "interval:" + BIG}},
        {"qi": {"zip": "interval:1" + "0" * 100_000}},
        {"weight": {"zip": BIG}},
        {"min-level": ["zip=" + BIG]},
        {BIG: 1},
    ],
    ids=lambda change: "-".join(change)[:30],
)
def test_issue15_p4_every_megabyte_toml_value_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object]
) -> None:
    err = _error(tmp_path, capsys, change)
    # At most 60 characters of any value, and its length. Some messages list every
    # model form or job-file key as well, so the line may pass 300 characters.
    assert "v" * 61 not in err and "0" * 61 not in err, err[:LIMIT]
    assert " characters)" in err and len(err) < 2 * LIMIT


def test_issue15_p4_a_long_value_missing_from_a_hierarchy_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = patients(rows=30).with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(pl.lit("F" * 200_000))
        .otherwise("sex")
        .alias("sex")
    )
    table.write_csv(tmp_path / "t.csv")
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    argv = [
        "anonymize", str(tmp_path / "t.csv"), "--qi", f"sex={tmp_path / 'sex.csv'}",
        "--identifying", "name", "ssn", "--keep-unlisted", "--k", "2",
        "--output", str(tmp_path / "o.csv"), "--quiet",
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "column 'sex'" in err and "(200,000 characters) is not in hierarchy" in err
    assert len(err) < LIMIT + len(str(tmp_path)) * 2


def test_issue15_p4_a_duplicate_key_never_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = patients(rows=40).with_columns(
        pl.when(pl.int_range(pl.len()).is_in([4, 17]))
        .then(pl.lit(SSN))
        .otherwise(pl.col("ssn"))
        .alias("ssn")
    )
    table.write_csv(tmp_path / "patients.csv")
    argv = [
        "release", str(tmp_path / "patients.csv"),
        "--qi", "birth_date=date", "sex=suppress", "zip=mask",
        "--identifying", "name", "--insensitive", "diagnosis", "admission_date",
        "length_of_stay", "--k", "3", "--max-suppression", "10%",
        "--key", "ssn", "--ledger", str(tmp_path / "ledger.db"),
        "--output", str(tmp_path / "r.csv"), "--quiet",
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert SSN not in err and "6789" not in err
    # The column and how many rows: enough to find them, nothing to read off.
    assert "key column 'ssn'" in err and "2 rows" in err and err.count("\n") == 1
    assert not (tmp_path / "r.csv").exists()


def test_issue15_p4_echo_cuts_values_and_keeps_them_on_one_line() -> None:
    assert echo("Aleut") == "'Aleut'"
    assert echo("x" * 61) == "'" + "x" * 60 + "...' (61 characters)"
    assert echo("a\nb") == "'a\\nb'"
    assert echo([BIG]).endswith("(1,000,004 characters)") and len(echo([BIG])) < 100
    error = InputError(f"value {echo(BIG)} is bad")
    assert len(str(error)) < 120
