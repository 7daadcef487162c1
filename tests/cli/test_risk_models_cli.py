"""The risk thresholds on the command line and in job files (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main
from kanonym.datasets import ADULT_COLUMNS, adult_hierarchy_path, load_adult


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("risk")
    load_adult().write_csv(folder / "adult.csv")
    return folder


def _flags(metric: str = "arx-loss") -> list[str]:
    return [
        "--qi",
        *(f"{c}={adult_hierarchy_path(c)}" for c in ADULT_COLUMNS),
        "--k",
        "1",
        "--max-suppression",
        "0.04",
        "--metric",
        metric,
        "--seed",
        "1",
        "--quiet",
    ]


def test_sample_uniqueness_release_matches_arx_and_reports_the_value_reached(
    files: Path,
) -> None:
    output, report, page = files / "unique.csv", files / "unique.json", files / "unique.html"
    code = main(
        [
            "anonymize",
            str(files / "adult.csv"),
            "--model",
            "sample-uniqueness:0.01",
            *_flags(),
            "--output",
            str(output),
            "--report",
            str(report),
            "--report-html",
            str(page),
        ]
    )
    assert code == 0
    assert "model=sample-uniqueness, threshold=0.01, reached=" in page.read_text()
    written = json.loads(report.read_text())
    # ARX's TestAnonymizationRiskBased, SampleUniqueness(0.01) with Loss.
    assert list(written["transformation"].values()) == [0, 3, 0, 0, 1, 1, 1, 1, 0]
    assert written["metrics"]["arx-loss"] == pytest.approx(0.1606952725863784, rel=1e-9)
    assert "sample-uniqueness:0.01" in written["model_specs"]
    (model,) = [m for m in written["models"] if m["model"] == "sample-uniqueness"]
    released = pl.read_csv(output, infer_schema=False)
    sizes = released.group_by(ADULT_COLUMNS).len()["len"]
    assert model["reached"] == pytest.approx((sizes == 1).sum() / released.height)
    assert model["reached"] <= 0.01


def test_job_file_takes_the_same_specs(files: Path) -> None:
    job = files / "job.toml"
    qi = ", ".join(f'"{c}={adult_hierarchy_path(c)}"' for c in ADULT_COLUMNS)
    job.write_text(
        f'input = "adult.csv"\noutput = "job-release.csv"\nreport = "job-release.json"\n'
        f"qi = [{qi}]\nk = 1\nseed = 1\nmax_suppression = 0.04\n"
        'models = ["population-uniqueness:0.0001:zayatz:317238626", "average-risk:0.5"]\n'
        'metric = "arx-loss"\n'
    )
    assert main(["anonymize", "--config", str(job), "--quiet", "--no-report-html"]) == 0
    written = json.loads((files / "job-release.json").read_text())
    # ARX's TestAnonymizationRiskBased, PopulationUniqueness(1e-4, ZAYATZ) with Loss (the
    # average risk 0.5 asks nothing more).
    assert list(written["transformation"].values()) == [0, 3, 0, 0, 1, 1, 1, 1, 0]
    assert written["metrics"]["arx-loss"] == pytest.approx(0.16078200456326086, rel=1e-9)
    reached = {m["model"]: m.get("reached") for m in written["models"]}
    assert 0 < reached["population-uniqueness"] <= 1e-4
    assert reached["average-risk"] <= 0.5


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sample-uniqueness:0", "threshold must be a number > 0"),
        ("average-risk:1.5", "average_risk must be a number > 0 and <= 1"),
        ("population-uniqueness:0:zayatz:317238626", "threshold must be a number > 0"),
        (
            "population-uniqueness:0.01:pitman:1000",
            "population_size 1000 is smaller than the table's 30162 rows",
        ),
        ("population-uniqueness:0.01:chen:1000", "estimator 'chen' is not dankar"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    files: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    output, report = files / "bad.csv", files / "bad.json"
    code = main(
        [
            "anonymize",
            str(files / "adult.csv"),
            "--model",
            spec,
            *_flags(),
            "--output",
            str(output),
            "--report",
            str(report),
        ]
    )
    assert code == 2
    assert not output.exists() and not report.exists()
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_local_recoding_is_refused(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = files / "mondrian.csv"
    code = main(
        [
            "anonymize",
            str(files / "adult.csv"),
            "--qi",
            *(f"{c}={adult_hierarchy_path(c)}" for c in ADULT_COLUMNS),
            "--k",
            "2",
            "--algorithm",
            "mondrian",
            "--model",
            "sample-uniqueness:0.1",
            "--quiet",
            "--output",
            str(output),
        ]
    )
    assert code == 2 and not output.exists()
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "sample-uniqueness is served with full-domain" in lines[0]
