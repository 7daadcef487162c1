"""Issue 15, points 6 and 9: output paths and what a killed run leaves behind."""

from __future__ import annotations

from pathlib import Path

from tests.patients import write_patients

from kanonym.cli import main

ROLES = [
    "--qi", "birth_date=date", "sex=suppress", "zip=mask",
    "--identifying", "name", "ssn",
    "--insensitive", "diagnosis", "admission_date", "length_of_stay",
    "--k", "3", "--quiet",
]  # fmt: skip


def test_issue15_p6_output_with_a_trailing_slash_is_refused(tmp_path: Path, capsys) -> None:
    source = write_patients(tmp_path, rows=60)
    argv = ["anonymize", str(source), *ROLES, "--output", f"{tmp_path}/out/new/"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["patients.csv"]
