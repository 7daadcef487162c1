"""``--model differential-privacy:...`` on the command line and ``models`` in a job file."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main
from kanonym.datasets import adult_hierarchy_path, load_adult

QIS = ("sex", "age", "race", "marital-status", "education")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dp")
    load_adult().write_csv(folder / "adult.csv")
    return folder


def _flags() -> list[str]:
    others = [c for c in load_adult().columns if c not in QIS]
    return [
        "--qi",
        *(f"{c}={adult_hierarchy_path(c)}" for c in QIS),
        "--insensitive",
        *others,
        "--quiet",
        "--no-report-html",
    ]


def test_a_release_needs_no_k_and_reports_the_derived_parameters(files: Path) -> None:
    output, report = files / "dp.csv", files / "dp.json"
    code = main(
        [
            "anonymize",
            str(files / "adult.csv"),
            "--model",
            "differential-privacy:1:1e-6:high",
            *_flags(),
            "--seed",
            "7",
            "--output",
            str(output),
            "--report",
            str(report),
        ]
    )
    assert code == 0
    written = json.loads(report.read_text())
    (model,) = [m for m in written["models"] if m["model"] == "differential-privacy"]
    assert (model["k"], model["epsilon"], model["delta"], model["generalization"]) == (
        75,
        1.0,
        1e-6,
        "high",
    )
    assert model["sample"]["job_seed"] == 7 and model["sample"]["rows"] == 30_162
    assert written["model_specs"] == ["differential-privacy:1:1e-06:high"]
    assert written["input_rows"] == 30_162
    released = pl.read_csv(output, infer_schema=False)
    assert released.height == written["released_rows"]
    assert released.height + written["suppressed_rows"] == model["sample"]["rows_drawn"]
    assert released.group_by(list(QIS)).len()["len"].min() >= 75


def test_a_job_file_names_the_model(files: Path) -> None:
    job = files / "job.toml"
    qi = ", ".join(f'"{c}={adult_hierarchy_path(c)}"' for c in QIS)
    others = ", ".join(f'"{c}"' for c in load_adult().columns if c not in QIS)
    job.write_text(
        f'input = "adult.csv"\noutput = "job-release.csv"\nqi = [{qi}]\n'
        f"insensitive = [{others}]\nseed = 3\n"
        'models = ["differential-privacy:2:1e-5:medium"]\n'
    )
    assert main(["anonymize", "--config", str(job), "--quiet", "--no-report-html"]) == 0
    released = pl.read_csv(files / "job-release.csv", infer_schema=False)
    assert released.group_by(list(QIS)).len()["len"].min() >= 114


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        (["--model", "differential-privacy:0:1e-6"], "epsilon must be a finite number > 0"),
        (["--model", "differential-privacy:1:1e-4"], "delta = 0.0001 must be below 1/n"),
        (["--model", "differential-privacy:1:1e-6:middle"], "SCHEME 'middle' is not one of"),
        (
            ["--model", "differential-privacy:1:1e-6", "--max-suppression", "0.1"],
            "--max-suppression: differential privacy suppresses every class below its k",
        ),
        (
            ["--model", "differential-privacy:1:1e-6", "--engine", "streaming"],
            "differential privacy is served by the embedded engine only",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    files: Path, arguments: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    output, report = files / "bad.csv", files / "bad.json"
    code = main(
        [
            "anonymize",
            str(files / "adult.csv"),
            *arguments,
            *_flags(),
            "--output",
            str(output),
            "--report",
            str(report),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("kanonym: error: ") and needle in err, err
    assert not output.exists() and not report.exists()
