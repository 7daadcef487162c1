"""``kanonym explore``: the frontier printed, every point as JSON, a page, bad input exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.patients import write_patients

from kanonym.cli.explore import parse_ks, parse_limits
from kanonym.cli.main import main

ROLES = [
    "--qi", "birth_date=date", "sex=suppress", "zip=mask",
    "--identifying", "name", "ssn",
    "--insensitive", "diagnosis", "admission_date", "length_of_stay",
]  # fmt: skip


def test_json_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_patients(tmp_path, rows=120)
    out, page = tmp_path / "sweep.json", tmp_path / "sweep.html"
    args = ["explore", str(source), *ROLES, "--k", "2..5", "--suppression", "0,5%"]
    assert main([*args, "--json", str(out), "--html", str(page)]) == 0
    printed = capsys.readouterr().out
    assert "the frontier" in printed and f"wrote {out} and {page}" in printed
    document = json.loads(out.read_text())
    assert document["schema_version"] == 1 and document["metric"] == "loss"
    points = document["points"]
    assert [(p["max_suppression"], p["k"]) for p in points] == [
        (limit, k) for limit in (0.0, 0.05) for k in (2, 3, 4, 5)
    ]
    keys = {
        "k", "max_suppression", "max_suppressed_rows", "solution", "transformation", "metric",
        "score", "equivalence_classes", "suppressed_rows", "released_rows", "highest_risk",
        "average_risk", "records_at_risk", "proven_optimal", "nodes_checked", "on_frontier",
    }  # fmt: skip
    assert all(set(p) == keys for p in points)
    assert any(p["on_frontier"] for p in points)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "<script" not in text


def test_job_file_as_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_patients(tmp_path, rows=120)
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{source.name}"\noutput = "r.csv"\nreport = "r.json"\nk = 9\n'
        'identifying = ["name", "ssn"]\n'
        'insensitive = ["diagnosis", "admission_date", "length_of_stay"]\n'
        '[qi]\nbirth_date = "date"\nsex = "suppress"\nzip = "mask"\n'
    )
    out = tmp_path / "s.json"
    assert main(["explore", "--config", str(job), "--k", "2,3", "--json", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert {p["k"] for p in json.loads(out.read_text())["points"]} == {2, 3}
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--k", "5..2"], "--k '5..2'"),
        (["--k", "two"], "--k 'two'"),
        (["--suppression", "0,150%"], "--suppression"),
        (["--risk-threshold", "2"], "risk threshold"),
        (["--qi", "nope=mask"], "nope"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    source = write_patients(tmp_path, rows=60)
    out, page = tmp_path / "s.json", tmp_path / "s.html"
    args = ["explore", str(source), *ROLES, *extra, "--json", str(out), "--html", str(page)]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert error.startswith("kanonym: error:") and needle in error
    assert error.count("\n") == 1
    assert not out.exists() and not page.exists()


def test_unlisted_column_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_patients(tmp_path, rows=60)
    assert main(["explore", str(source), "--qi", "zip=mask", "--k", "2"]) == 2
    assert "have no role" in capsys.readouterr().err


def test_demo_takes_no_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--demo", str(tmp_path / "x.csv")]) == 2
    assert "--demo" in capsys.readouterr().err


def test_ranges_and_lists() -> None:
    assert parse_ks(["2..4", "10"]) == (2, 3, 4, 10)
    assert parse_limits(["5%", "0", "0.05"]) == (0.05, 0.0)


def test_ranges_are_cut_at_the_rows_before_they_are_built() -> None:
    # A billion-k range would be a billion points: cut at the table's rows first.
    assert parse_ks(["2..1000000000"], rows=6) == (2, 3, 4, 5, 6)
    assert parse_ks(["2..4", "9..12", "20"], rows=6) == (2, 3, 4, 9, 20)


def test_a_huge_range_sweeps_up_to_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_patients(tmp_path, rows=12)
    out = tmp_path / "s.json"
    args = ["explore", str(source), *ROLES, "--k", "2..1000000000", "--suppression", "0"]
    assert main([*args, "--json", str(out), "--quiet"]) == 0
    document = json.loads(out.read_text())
    assert [p["k"] for p in document["points"]] == list(range(2, 13))
    assert document["source"].endswith("patients.csv")
