"""``kanonym anonymize --algorithm mondrian``: release, report, job file and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main

MARITAL = (
    "married;married;married;*\n"
    "single;single;not married;*\n"
    "divorced;divorced or widow;not married;*\n"
    "widow;divorced or widow;not married;*\n"
)
TABLE = (
    "name,marital,zip,age,disease\n"
    "Ann,divorced,94142,41,flu\n"
    "Bob,divorced,94141,38,cold\n"
    "Cid,married,94139,29,flu\n"
    "Dee,married,94139,33,ulcer\n"
    "Eve,married,94139,35,flu\n"
    "Fay,single,94138,22,cold\n"
    "Gus,single,94139,24,flu\n"
    "Hal,single,94139,27,ulcer\n"
    "Ida,widow,94141,70,cold\n"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "marital.csv").write_text(MARITAL)
    (tmp_path / "pt.csv").write_text(TABLE)
    return tmp_path


def _args(d: Path, *extra: str) -> list[str]:
    return [
        "anonymize",
        str(d / "pt.csv"),
        "--qi",
        f"marital={d / 'marital.csv'}",
        "zip=mask",
        "--identifying",
        "name",
        "--keep-unlisted",
        "--k",
        "3",
        "--algorithm",
        "mondrian",
        "--seed",
        "4",
        "--output",
        str(d / "out.csv"),
        "--report",
        str(d / "report.json"),
        *extra,
    ]


def test_cli_writes_the_seed_example_and_its_report(folder: Path, capsys) -> None:
    assert main(_args(folder)) == 0
    assert "3 classes" in capsys.readouterr().out
    released = pl.read_csv(folder / "out.csv", infer_schema=False)
    assert released.columns == ["marital", "zip", "age", "disease"]
    assert released.group_by("marital", "zip").len().sort("marital").rows() == [
        ("divorced or widow", "9414*", 3),
        ("married", "94139", 3),
        ("single", "9413*", 3),
    ]
    report = json.loads((folder / "report.json").read_text())
    assert report["algorithm"] == "mondrian"
    assert report["transformation"] is None
    assert report["recoding"] == {
        "method": "mondrian",
        "variant": "strict",
        "partitions": 3,
        "classes": 3,
        "attributes": {"marital": "categorical", "zip": "categorical"},
    }
    metrics = report["metrics"]
    assert metrics["dm"] == metrics["dm-star"] == 27 and metrics["aecs"] == 1.0
    assert metrics["ncp"] == pytest.approx(1 / 6)
    assert metrics["loss"] is None and metrics["precision"] is None
    assert report["suppressed_rows"] == 0 and report["minimal_generalizations"] == []
    assert report["metric"] is None and report["policy"] is None
    assert not report["proven_optimal"] and report["verified"]
    assert set(report["timings"]) == {"read", "encode", "partition", "transform", "verify", "write"}


def test_job_file_runs_relaxed_mondrian_with_a_model(folder: Path) -> None:
    (folder / "job.toml").write_text(
        'input = "pt.csv"\noutput = "rel.csv"\nreport = "rel.json"\nk = 2\n'
        'algorithm = "mondrian-relaxed"\nseed = 1\nidentifying = ["name"]\n'
        'sensitive = ["disease"]\nmodels = ["l-diversity:distinct:2:disease"]\n'
        'numeric = ["zip"]\ninsensitive = ["marital"]\n[qi]\nage = "interval:10"\nzip = "mask"\n'
    )
    assert main(["anonymize", "--config", str(folder / "job.toml"), "--quiet"]) == 0
    report = json.loads((folder / "rel.json").read_text())
    assert report["recoding"]["variant"] == "relaxed"
    assert report["recoding"]["attributes"] == {"age": "numeric", "zip": "numeric"}
    released = pl.read_csv(folder / "rel.csv", infer_schema=False)
    for _, group in released.group_by("age", "zip"):
        assert group.height >= 2 and group["disease"].n_unique() >= 2
    # --numeric zip: ranges of ZIP codes, not masks.
    assert all("*" not in z for z in released["zip"])


def test_apply_refuses_a_mondrian_report(folder: Path, capsys) -> None:
    assert main(_args(folder, "--quiet")) == 0
    code = main(
        [
            "apply",
            "--from-report",
            str(folder / "report.json"),
            str(folder / "pt.csv"),
            "--output",
            str(folder / "again.csv"),
        ]
    )
    assert code == 2
    assert "local recoding (mondrian) cannot be re-applied" in capsys.readouterr().err
    assert not (folder / "again.csv").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-suppression", "0.1"], "suppresses nothing"),
        (["--max-suppressed-rows", "1"], "suppresses nothing"),
        (["--metric", "loss"], "--metric: option(s) of the lattice searches"),
        (["--policy", "min-suppression"], "--policy"),
        (["--min-level", "zip=1"], "--min-level"),
        (["--max-level", "zip=1"], "--max-level"),
        (["--time-limit", "5"], "--time-limit"),
        (["--numeric", "marital"], "column 'marital': value 'married' is not a number"),
        (["--numeric", "name"], "numeric: 'name' is not a quasi-identifier"),
        (["--numeric", "zip", "--categorical", "zip"], "'zip' is named both"),
        (["--k", "10"], "k=10 is larger than the table"),
        (["--sensitive", "nothere"], "column 'nothere' not found"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    folder: Path, capsys, extra: list[str], message: str
) -> None:
    assert main(_args(folder, *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (folder / "out.csv").exists() and not (folder / "report.json").exists()


def test_no_local_recoding_exits_1_and_writes_nothing(folder: Path, capsys) -> None:
    # Valid input that no release satisfies: not bad input (2), no safe release (1).
    extra = ["--sensitive", "disease", "--model", "l-diversity:distinct:4:disease"]
    assert main(_args(folder, *extra)) == 1
    err = capsys.readouterr().err
    assert err.startswith("kanonym: no release: the whole table as one class fails distinct-l")
    assert err.endswith("; nothing written\n") and err.count("\n") == 1
    assert not (folder / "out.csv").exists() and not (folder / "report.json").exists()


def test_relaxed_rejects_delta_disclosure(folder: Path, capsys) -> None:
    args = _args(folder, "--sensitive", "disease", "--model", "delta-disclosure:2:disease")
    args[args.index("mondrian")] = "mondrian-relaxed"
    assert main(args) == 2
    assert "delta-disclosure-privacy may fail on a union of classes" in capsys.readouterr().err


def test_numeric_flag_needs_local_recoding(folder: Path, capsys) -> None:
    args = _args(folder, "--numeric", "zip")
    args[args.index("mondrian")] = "optimal"
    assert main(args) == 2
    assert "--numeric and --categorical apply to local recoding" in capsys.readouterr().err
