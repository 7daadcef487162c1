"""``--check-lattice`` and the job-file key ``check-lattice``: the HTML report's lattice
checked whole, for the page only; refused where there is no page, and by ``release``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.patients import write_patients

from kanonym.cli.main import main

ROLES = [
    "--qi", "birth_date=date", "sex=suppress", "zip=mask",
    "--identifying", "name", "ssn",
    "--insensitive", "diagnosis", "admission_date", "length_of_stay",
    "--k", "3", "--seed", "1",
]  # fmt: skip
CHECKED = "Optimum over the whole lattice"


def _page(folder: Path, *extra: str) -> str:
    folder.mkdir()
    source = write_patients(folder, rows=80)
    page = folder / "r.html"
    args = ["anonymize", str(source), *ROLES, "--output", str(folder / "r.csv")]
    assert main([*args, "--report-html", str(page), "--quiet", *extra]) == 0
    return page.read_text()


def test_the_flag_checks_the_lattice_for_the_page(tmp_path: Path) -> None:
    assert CHECKED not in _page(tmp_path / "plain")
    assert CHECKED in _page(tmp_path / "checked", "--check-lattice")


def test_the_job_file_key(tmp_path: Path) -> None:
    source = write_patients(tmp_path, rows=80)
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{source.name}"\noutput = "r.csv"\nreport-html = "r.html"\n'
        "check-lattice = true\nk = 3\nseed = 1\n"
        'identifying = ["name", "ssn"]\n'
        'insensitive = ["diagnosis", "admission_date", "length_of_stay"]\n'
        '[qi]\nbirth_date = "date"\nsex = "suppress"\nzip = "mask"\n'
    )
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 0
    assert CHECKED in (tmp_path / "r.html").read_text()


def test_without_a_page_it_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_patients(tmp_path, rows=80)
    args = ["anonymize", str(source), *ROLES, "--output", str(tmp_path / "r.csv")]
    assert main([*args, "--check-lattice"]) == 2
    error = capsys.readouterr().err
    assert "'check-lattice'" in error and "report-html" in error and error.count("\n") == 1
    assert not (tmp_path / "r.csv").exists()


def test_release_refuses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_patients(tmp_path, rows=80)
    args = ["release", str(source), *ROLES, "--ledger", str(tmp_path / "l.sqlite")]
    args += ["--output", str(tmp_path / "r.csv"), "--report-html", str(tmp_path / "r.html")]
    assert main([*args, "--check-lattice"]) == 2
    assert "'check-lattice'" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()
