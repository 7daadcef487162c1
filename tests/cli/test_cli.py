"""The ``kanonym`` command: success paths, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main

RACE = "asian;person\nblack;person\nwhite;person\n"
ZIP = "94138;9413*;941**\n94139;9413*;941**\n94141;9414*;941**\n94142;9414*;941**\n"
TABLE = (
    "name,race,zip,disease\r\n"
    "Ann,asian,94142,flu\r\n"
    "Bob,asian,94141,cold\r\n"
    "Cid,asian,94139,flu\r\n"
    'Dee,asian,94139,"cough, dry"\r\n'
    "Eve,asian,94139,flu\r\n"
    "Fay,black,94138,cold\r\n"
    "Gus,black,94139,flu\r\n"
    "Hal,white,94139,cold\r\n"
    "Ida,white,94141,flu\r\n"
)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "race.csv").write_text(RACE)
    (tmp_path / "zip.csv").write_text(ZIP)
    (tmp_path / "pt.csv").write_bytes(TABLE.encode())
    return tmp_path


def _anonymize_args(d: Path, *extra: str) -> list[str]:
    return [
        "anonymize",
        str(d / "pt.csv"),
        "--qi",
        f"race={d / 'race.csv'}",
        f"zip={d / 'zip.csv'}",
        "--identifying",
        "name",
        "--sensitive",
        "disease",
        "--k",
        "2",
        "--max-suppressed-rows",
        "2",
        "--seed",
        "5",
        "--output",
        str(d / "out.csv"),
        "--report",
        str(d / "report.json"),
        *extra,
    ]


def test_anonymize_writes_release_and_report(files: Path, capsys) -> None:
    assert main(_anonymize_args(files)) == 0
    assert "released 7 of 9 rows" in capsys.readouterr().out
    written = (files / "out.csv").read_bytes()
    assert written.startswith(b"race,zip,disease\r\n")  # name dropped, CRLF kept
    assert b'"cough, dry"' in written or b"cough" not in written
    report = json.loads((files / "report.json").read_text())
    assert report["transformation"] == {"race": 0, "zip": 1}
    # Default search: optimal under loss. GT[0,1] costs (7 * 1/3 + 2 * 2) / 18 cells,
    # GT[0,2] 9/18 and GT[1,0] 11/18.
    assert report["seed"] == 5 and report["algorithm"] == "optimal"
    assert report["metric"] == "loss" and report["policy"] is None
    assert report["metrics"]["loss"] == pytest.approx((7 / 3 + 4) / 18)
    assert report["proven_optimal"] is True
    assert set(report["timings"]) == {"read", "encode", "search", "transform", "verify", "write"}
    released = pl.read_csv(files / "out.csv", infer_schema=False)
    assert released.group_by(["race", "zip"]).len()["len"].min() >= 2


def test_minimal_lists_every_k_minimal_generalization(files: Path) -> None:
    assert main(_anonymize_args(files, "--algorithm", "minimal")) == 0
    report = json.loads((files / "report.json").read_text())
    assert report["policy"] == "min-relative-distance" and report["metric"] is None
    assert len(report["minimal_generalizations"]) == 2


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--algorithm", "minimal", "--metric", "dm"], "applies only to optimal"),
        (["--policy", "min-suppression"], "applies only to minimal"),
        (["--time-limit", "0"], "--time-limit must be a number of seconds > 0"),
    ],
)
def test_policy_and_metric_do_not_mix(files: Path, capsys, extra, needle) -> None:
    _expect_bad_input(_anonymize_args(files, *extra), capsys, needle, files / "out.csv")


@pytest.mark.parametrize(
    "metric", ["dm-star", "dm", "entropy", "loss", "precision", "aecs", "height"]
)
@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
def test_every_metric_from_the_command_line(files: Path, algorithm, metric) -> None:
    assert main(_anonymize_args(files, "--algorithm", algorithm, "--metric", metric)) == 0
    report = json.loads((files / "report.json").read_text())
    assert report["metric"] == metric and report["algorithm"] == algorithm
    assert {"dm-star", "dm", "entropy", "loss", "precision", "aecs", "height"} <= set(
        report["metrics"]
    )


def test_samarati_algorithm_and_policy_flags(files: Path) -> None:
    args = _anonymize_args(files, "--algorithm", "samarati", "--policy", "max-distribution")
    assert main(args) == 0
    report = json.loads((files / "report.json").read_text())
    assert report["algorithm"] == "samarati" and report["transformation"] == {"race": 0, "zip": 1}


def test_toml_job_file(files: Path) -> None:
    (files / "job.toml").write_text(
        'input = "pt.csv"\noutput = "from-toml.csv"\nreport = "from-toml.json"\n'
        'k = 2\nmax-suppressed-rows = 2\nseed = 5\nidentifying = ["name"]\n'
        'sensitive = ["disease"]\n[qi]\nrace = "race.csv"\nzip = "zip.csv"\n'
    )
    assert main(["anonymize", "--config", str(files / "job.toml"), "--quiet"]) == 0
    assert main(_anonymize_args(files)) == 0
    # Same job and seed from the file and from the flags: the same release.
    assert (files / "from-toml.csv").read_bytes() == (files / "out.csv").read_bytes()


def test_flags_override_the_job_file(files: Path) -> None:
    (files / "job.toml").write_text(
        'input = "pt.csv"\noutput = "o.csv"\nk = 2\nmax-suppressed-rows = 2\n'
        'qi = ["race=race.csv", "zip=zip.csv"]\nidentifying = ["name"]\ninsensitive = ["disease"]\n'
    )
    assert main(["anonymize", "--config", str(files / "job.toml"), "--max-suppression", "0"]) == 0
    released = pl.read_csv(files / "o.csv", infer_schema=False)
    assert released.height == 9  # no suppression allowed any more


def _expect_bad_input(args: list[str], capsys, needle: str, out: Path | None = None) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kanonym: error:")
    assert needle in err
    if out is not None:
        assert not out.exists()


def test_unknown_column(files: Path, capsys) -> None:
    args = _anonymize_args(files)
    args[args.index("name")] = "surname"
    _expect_bad_input(args, capsys, "'surname'", files / "out.csv")


def test_value_missing_from_hierarchy(files: Path, capsys) -> None:
    (files / "zip.csv").write_text(ZIP.replace("94142;9414*;941**\n", ""))
    _expect_bad_input(_anonymize_args(files), capsys, "94142", files / "out.csv")


def test_hierarchy_value_with_two_parents(files: Path, capsys) -> None:
    # 94141 listed twice, once under 9414* and once under 9413*: two parents.
    (files / "zip.csv").write_text(ZIP + "94141;9413*;941**\n")
    _expect_bad_input(_anonymize_args(files), capsys, "two parents", files / "out.csv")


def test_k_larger_than_the_table(files: Path, capsys) -> None:
    args = _anonymize_args(files)
    args[args.index("--k") + 1] = "10"
    _expect_bad_input(args, capsys, "larger than the table", files / "out.csv")


def test_k_below_one(files: Path, capsys) -> None:
    args = _anonymize_args(files)
    args[args.index("--k") + 1] = "0"
    _expect_bad_input(args, capsys, "k must be", files / "out.csv")


def test_both_suppression_flags(files: Path, capsys) -> None:
    _expect_bad_input(
        _anonymize_args(files, "--max-suppression", "0.1"), capsys, "not allowed", files / "out.csv"
    )


def test_empty_file(files: Path, capsys) -> None:
    (files / "pt.csv").write_bytes(b"")
    _expect_bad_input(_anonymize_args(files), capsys, "pt.csv", files / "out.csv")


def test_missing_input_file(files: Path, capsys) -> None:
    (files / "pt.csv").unlink()
    _expect_bad_input(_anonymize_args(files), capsys, "pt.csv", files / "out.csv")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(files: Path, capsys) -> None:
    (files / "pt.csv").chmod(0)
    _expect_bad_input(_anonymize_args(files), capsys, "pt.csv", files / "out.csv")


def test_input_that_is_a_directory(files: Path, capsys) -> None:
    args = _anonymize_args(files)
    args[1] = str(files)
    _expect_bad_input(args, capsys, str(files), files / "out.csv")


def test_check_exit_codes(files: Path, capsys) -> None:
    assert main(["check", str(files / "pt.csv"), "--columns", "race", "--k", "2"]) == 0
    assert main(["check", str(files / "pt.csv"), "--columns", "race", "zip", "--k", "2"]) == 1
    assert main(["check", str(files / "pt.csv"), "--columns", "race", "--k", "10"]) == 1
    capsys.readouterr()
    assert (
        main(["check", str(files / "pt.csv"), "--columns", "race", "zip", "--k", "2", "--json"])
        == 1
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "smallest_class": 1,
        "k": 2,
        "rows": 9,
        "classes": 7,
        "rows_below_k": 6,
        "k_anonymous": False,
        "sensitive": {},
    }
    _expect_bad_input(
        ["check", str(files / "pt.csv"), "--columns", "age", "--k", "2"], capsys, "age"
    )
    _expect_bad_input(
        ["check", str(files / "pt.csv"), "--columns", "race", "--k", "0"], capsys, "k"
    )


def test_version_and_exit_codes_as_a_process(files: Path) -> None:
    version = subprocess.run(
        [sys.executable, "-m", "kanonym", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout.startswith("kanonym 0.")
    bad = subprocess.run(
        [sys.executable, "-m", "kanonym", "anonymize", str(files / "nope.csv")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_demo(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--output-dir", str(tmp_path), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "optimal search minimizing loss" in out
    release = pl.read_csv(tmp_path / "adult-k5.csv", separator=";", infer_schema=False)
    report = json.loads((tmp_path / "adult-k5.report.json").read_text())
    assert release.height == report["released_rows"] >= 30162 - 1206
    columns = list(report["transformation"])
    assert release.group_by(columns).len()["len"].min() >= 5
    assert (tmp_path / "adult-k5.report.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("pt.parquet", b"PAR1 this is not parquet PAR1"),
        ("pt.csv", b"race,zip\x00\x01\x02\nasian,94142\n"),
        ("pt.csv.gz", b"\x1f\x8b\x08\x00corrupt"),
    ],
)
def test_unreadable_content(files: Path, capsys, name: str, content: bytes) -> None:
    (files / name).write_bytes(content)
    args = _anonymize_args(files)
    args[1] = str(files / name)
    _expect_bad_input(args, capsys, name, files / "out.csv")


def test_parquet_in_and_out(files: Path) -> None:
    pl.read_csv(files / "pt.csv", infer_schema=False).write_parquet(files / "pt.parquet")
    args = _anonymize_args(files)
    args[1] = str(files / "pt.parquet")
    args[args.index("--output") + 1] = str(files / "out.parquet")
    assert main(args) == 0
    released = pl.read_parquet(files / "out.parquet")
    assert released.columns == ["race", "zip", "disease"]
    assert released.group_by(["race", "zip"]).len()["len"].min() >= 2


def test_weight_and_level_flags(files: Path) -> None:
    args = _anonymize_args(
        files, "--min-level", "race=1", "--weight", "zip=0.5", "--max-level", "zip=1"
    )
    assert main(args) == 0
    report = json.loads((files / "report.json").read_text())
    assert report["transformation"]["race"] == 1 and report["transformation"]["zip"] <= 1
    assert report["weights"] == {"race": 1.0, "zip": 0.5}
    assert report["min_levels"] == {"race": 1} and report["max_levels"] == {"zip": 1}


def test_weight_flag_errors(files: Path, capsys) -> None:
    _expect_bad_input(_anonymize_args(files, "--weight", "zip"), capsys, "COL=VALUE")
    _expect_bad_input(_anonymize_args(files, "--weight", "zip=x"), capsys, "not a number")
    _expect_bad_input(_anonymize_args(files, "--min-level", "zip=9"), capsys, "above the height")
