"""``--population`` and delta-presence on the command line and in job files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main
from kanonym.datasets import ADULT_COLUMNS, adult_hierarchy_path, load_adult, load_adult_subset

QIS = [c for c in ADULT_COLUMNS if c != "occupation"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("population")
    load_adult().write_csv(folder / "adult.csv")
    load_adult_subset().write_csv(folder / "subset.csv")
    return folder


def _flags(files: Path) -> list[str]:
    return [
        "--qi",
        *(f"{c}={adult_hierarchy_path(c)}" for c in QIS),
        "--sensitive",
        "occupation",
        "--k",
        "1",
        "--metric",
        "average-class-size",
        "--seed",
        "1",
        "--quiet",
    ]


def test_delta_presence_release_matches_arx(files: Path) -> None:
    output, report = files / "release.csv", files / "release.json"
    code = main(
        [
            "anonymize",
            str(files / "subset.csv"),
            "--population",
            str(files / "adult.csv"),
            "--model",
            "delta-presence:0:0.2",
            *_flags(files),
            "--output",
            str(output),
            "--report",
            str(report),
        ]
    )
    assert code == 0
    written = json.loads(report.read_text())
    assert list(written["transformation"].values()) == [1, 4, 1, 1, 0, 2, 2, 0]
    assert "delta-presence:0:0.2" in written["model_specs"]
    assert pl.read_csv(output).height == 3016


def test_job_file_population_is_relative_to_the_file(files: Path) -> None:
    job = files / "job.toml"
    qi = ", ".join(f'"{c}={adult_hierarchy_path(c)}"' for c in QIS)
    job.write_text(
        f'input = "subset.csv"\npopulation = "adult.csv"\noutput = "job-release.csv"\n'
        f'qi = [{qi}]\nsensitive = ["occupation"]\nk = 1\nseed = 1\n'
        'models = ["delta-presence:0.05:0.15"]\nmetric = "average-class-size"\n'
    )
    assert main(["anonymize", "--config", str(job), "--quiet", "--no-report-html"]) == 0
    assert (files / "job-release.csv").exists()


def test_missing_population_exits_2_naming_the_parameter(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = files / "none.csv"
    code = main(
        [
            "anonymize",
            str(files / "subset.csv"),
            "--model",
            "delta-presence:0:0.2",
            *_flags(files),
            "--output",
            str(output),
        ]
    )
    assert code == 2 and not output.exists()
    message = capsys.readouterr().err.strip().splitlines()
    assert len(message) == 1 and "population" in message[0]


def test_inverted_bounds_exit_2(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "anonymize",
            str(files / "subset.csv"),
            "--population",
            str(files / "adult.csv"),
            "--model",
            "delta-presence:0.3:0.1",
            *_flags(files),
            "--output",
            str(files / "bad.csv"),
        ]
    )
    assert code == 2 and not (files / "bad.csv").exists()
    assert "larger than" in capsys.readouterr().err


def test_k_map_release_matches_arx(files: Path) -> None:
    output, report = files / "k-map.csv", files / "k-map.json"
    code = main(
        [
            "anonymize",
            str(files / "subset.csv"),
            "--population",
            str(files / "adult.csv"),
            "--model",
            "k-map:5",
            *_flags(files),
            "--output",
            str(output),
            "--report",
            str(report),
        ]
    )
    assert code == 0
    written = json.loads(report.read_text())
    # ARX's TestAnonymizationKMap: k = 5, no suppression, AECS 3016 / 67.
    assert list(written["transformation"].values()) == [1, 0, 1, 2, 3, 2, 2, 1]
    assert written["metrics"]["average-class-size"] == pytest.approx(45.014925373134325)
    assert "k-map:5" in written["model_specs"]
    k_map = next(m for m in written["models"] if m["model"] == "k-map")
    assert k_map["k"] == 5 and k_map["reached"] >= 5  # the least population of a class


def test_estimated_k_map_reports_the_derived_k(files: Path) -> None:
    output, report = files / "k-map-usa.csv", files / "k-map-usa.json"
    spec = "k-map:1000:zero-truncated-poisson:0.01:317238626"
    code = main(
        [
            "anonymize",
            str(files / "adult.csv"),
            "--model",
            spec,
            *_flags(files),
            "--output",
            str(output),
            "--report",
            str(report),
        ]
    )
    assert code == 0
    written = json.loads(report.read_text())
    assert spec in written["model_specs"]
    (k_map,) = [m for m in written["models"] if m["model"] == "k-map"]
    assert k_map["derived_k"] == 3 and k_map["population_size"] == 317238626
    released = pl.read_csv(output)
    assert released.group_by(QIS).len()["len"].min() >= 3


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("k-map:3:poison:0.01:317238626", "did you mean 'poisson'"),
        ("k-map:3:poisson:0.01", "expected the form k-map:K or"),
        ("k-map:3:poisson:0.01:1000", "population smaller than the sample"),
        ("k-map:3", "pass the population table"),
    ],
)
def test_bad_k_map_exits_2_in_one_line(
    files: Path, capsys: pytest.CaptureFixture[str], spec: str, words: str
) -> None:
    output = files / "bad-k-map.csv"
    code = main(
        [
            "anonymize",
            str(files / "subset.csv"),
            "--model",
            spec,
            *_flags(files),
            "--output",
            str(output),
        ]
    )
    assert code == 2 and not output.exists()
    message = capsys.readouterr().err.strip().splitlines()
    assert len(message) == 1 and words in message[0]


def test_job_file_takes_both_k_map_specs(files: Path) -> None:
    qi = ", ".join(f'"{c}={adult_hierarchy_path(c)}"' for c in QIS)
    common = f'qi = [{qi}]\nsensitive = ["occupation"]\nk = 1\nseed = 1\n'
    jobs = {
        "k-map-table": 'population = "adult.csv"\nmodels = ["k-map:10"]\n',
        "k-map-estimated": 'models = ["k-map:3:poisson:0.05:1000000"]\n',
    }
    for name, lines in jobs.items():
        job = files / f"{name}.toml"
        job.write_text(
            f'input = "subset.csv"\noutput = "{name}.csv"\nreport = "{name}.json"\n'
            + common
            + lines
        )
        assert main(["anonymize", "--config", str(job), "--quiet", "--no-report-html"]) == 0
        written = json.loads((files / f"{name}.json").read_text())
        assert any(m["model"] == "k-map" for m in written["models"])
