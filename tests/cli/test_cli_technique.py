"""``--technique`` and ``--algorithm mu-argus`` on the command line and in job files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main

TABLE = (
    "name;race;zip\n"
    "Ann;asian;94142\nBob;asian;94141\nCid;asian;94139\nDee;asian;94139\nEve;asian;94139\n"
    "Fay;black;94138\nGus;black;94139\nHal;white;94139\nIda;white;94141\n"
)
ZIP = "94138;9413*;*\n94139;9413*;*\n94141;9414*;*\n94142;9414*;*\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "pt.csv").write_text(TABLE)
    (tmp_path / "zip.csv").write_text(ZIP)
    return tmp_path


def _args(d: Path, *extra: str) -> list[str]:
    return [
        "anonymize",
        str(d / "pt.csv"),
        "--qi",
        "race=suppress",
        f"zip={d / 'zip.csv'}",
        "--identifying",
        "name",
        "--k",
        "2",
        "--seed",
        "3",
        "--output",
        str(d / "out.csv"),
        "--report",
        str(d / "report.json"),
        *extra,
    ]


def test_cell_suppression_writes_the_root_and_reports_the_cells(folder: Path, capsys) -> None:
    assert main(_args(folder, "--technique", "AG_CS", "--max-suppressed-rows", "4")) == 0
    out = capsys.readouterr().out
    report = json.loads((folder / "report.json").read_text())
    assert report["technique"] == "AG_CS"
    assert report["released_rows"] == 9 and report["suppressed_rows"] == 0
    cells = report["suppressed_cells"]
    assert f"{cells['total']} cells blanked in {cells['rows']} rows, limit 4 rows" in out
    released = pl.read_csv(folder / "out.csv", separator=";", infer_schema=False)
    assert released.columns == ["race", "zip"]
    blanked = sum(v == "*" for col in released.columns for v in released[col].to_list())
    levels = report["transformation"]
    assert blanked >= cells["total"] > 0 and levels["race"] == 0
    assert released.group_by(["race", "zip"]).len()["len"].min() >= 2


def test_mu_argus_defaults_to_cell_suppression(folder: Path) -> None:
    assert main(_args(folder, "--algorithm", "mu-argus", "--max-suppressed-rows", "4")) == 0
    report = json.loads((folder / "report.json").read_text())
    assert report["technique"] == "AG_CS" and report["algorithm"] == "mu-argus"
    assert report["proven_optimal"] is False
    phases = report["suppressed_cells"]["by_phase"]
    assert phases["combinations"] + phases["completion"] == report["suppressed_cells"]["total"]


def test_technique_in_a_job_file(folder: Path) -> None:
    (folder / "job.toml").write_text(
        'input = "pt.csv"\noutput = "o.csv"\nreport = "r.json"\nk = 2\ntechnique = "_AS"\n'
        'identifying = ["name"]\n[qi]\nrace = "suppress"\nzip = "zip.csv"\n'
    )
    assert main(["anonymize", "--config", str(folder / "job.toml"), "--quiet"]) == 0
    report = json.loads((folder / "r.json").read_text())
    assert report["technique"] == "_AS" and report["suppressed_attributes"] == ["zip"]
    assert report["transformation"] == {"race": 0, "zip": 2}


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--technique", "CG_TS"], "technique CG_TS is not applicable"),
        (["--technique", "CG_AS"], "technique CG_AS is not applicable"),
        (["--technique", "_"], "technique _ is not interesting"),
        (["--technique", "CG_"], "needs --algorithm mondrian"),
        (["--technique", "AG_", "--max-suppressed-rows", "2"], "suppresses nothing"),
        (["--technique", "_AS", "--max-suppression", "0.1"], "blanks whole attributes"),
        (["--technique", "_CS", "--max-level", "zip=1"], "does not generalize"),
        (["--technique", "AG_CS", "--algorithm", "minimal"], "cannot run with --algorithm minimal"),
        (["--algorithm", "mu-argus", "--technique", "AG_TS"], "mu-argus suppresses cells"),
        (["--technique", "ag_ts"], "unknown technique 'ag_ts'"),
    ],
)
def test_invalid_combinations_exit_2_with_the_reason(folder: Path, capsys, extra, needle) -> None:
    assert main(_args(folder, *extra)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kanonym: error:")
    assert needle in err
    assert not (folder / "out.csv").exists() and not (folder / "report.json").exists()


def test_apply_reruns_cell_suppression_on_a_new_batch(folder: Path, capsys) -> None:
    assert main(_args(folder, "--technique", "AG_CS", "--max-suppressed-rows", "4")) == 0
    batch = TABLE.replace("Ida;white;94141", "Ida;white;94139")
    (folder / "batch.csv").write_text(batch)
    code = main(
        [
            "apply",
            str(folder / "batch.csv"),
            "--from-report",
            str(folder / "report.json"),
            "--output",
            str(folder / "applied.csv"),
            "--report",
            str(folder / "applied.json"),
            "--seed",
            "1",
        ]
    )
    assert code == 0, capsys.readouterr().err
    first = json.loads((folder / "report.json").read_text())
    applied = json.loads((folder / "applied.json").read_text())
    assert applied["technique"] == "AG_CS"
    assert applied["transformation"] == first["transformation"]
    assert applied["suppressed_cells"]["rows"] <= 4
    released = pl.read_csv(folder / "applied.csv", separator=";", infer_schema=False)
    assert released.height == 9
    assert released.group_by(["race", "zip"]).len()["len"].min() >= 2
