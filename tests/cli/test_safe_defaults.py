"""Issue 10, points 1-3 and 11: column roles, protected inputs, checked destinations, warnings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.patients import write_patients

import kanonym
from kanonym.cli import main
from kanonym.errors import UnassignedColumnsError

QI = ["--qi", "birth_date=date", "sex=suppress", "zip=mask"]
UNCHANGED = ["diagnosis", "admission_date", "length_of_stay"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_patients(tmp_path)
    return tmp_path


def _anonymize(folder: Path, *extra: str) -> list[str]:
    return ["anonymize", str(folder / "patients.csv"), *QI, "--k", "5", *extra]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _bad_input(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    capsys.readouterr()  # what earlier commands of the test printed
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kanonym: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def test_issue10_p1_unassigned_columns_are_refused(folder: Path, capsys) -> None:
    before = _files(folder)
    argv = _anonymize(folder, "--output", str(folder / "out.csv"))
    err = _bad_input(argv, capsys, "'name', 'ssn'", "--insensitive", "--keep-unlisted")
    for column in UNCHANGED:
        assert repr(column) in err
    # Columns unique on every row are suggested as identifying, never as released unchanged.
    assert "e.g. --identifying name ssn --insensitive " in err
    assert "likely direct identifiers" in err
    assert _files(folder) == before


def test_issue10_p1_a_column_given_a_role_is_released_and_listed(folder: Path, capsys) -> None:
    argv = _anonymize(
        folder,
        "--identifying",
        "name",
        "ssn",
        "--insensitive",
        *UNCHANGED,
        "--output",
        str(folder / "out.csv"),
        "--report",
        str(folder / "out.json"),
        "--report-html",
        str(folder / "out.html"),
        "--seed",
        "1",
    )
    assert main(argv) == 0
    released = (folder / "out.csv").read_text()
    assert "Person" not in released and released.startswith("birth_date,sex,zip,diagnosis,")
    report = json.loads((folder / "out.json").read_text())
    assert report["insensitive"] == UNCHANGED and report["keep_unlisted"] is False
    listed = {c["column"]: c for c in report["released_unchanged"]}
    assert list(listed) == UNCHANGED
    assert {c["role"] for c in listed.values()} == {"insensitive"}
    assert not any(c["likely_direct_identifier"] for c in listed.values())
    page = (folder / "out.html").read_text()
    assert "Columns released unchanged" in page
    for column in UNCHANGED:
        assert f"<td>{column}</td>" in page


def test_issue10_p1_keep_unlisted_is_recorded_and_direct_identifiers_flagged(
    folder: Path, capsys
) -> None:
    argv = _anonymize(
        folder,
        "--keep-unlisted",
        "--output",
        str(folder / "out.csv"),
        "--report",
        str(folder / "out.json"),
        "--report-html",
        str(folder / "out.html"),
        "--quiet",
    )
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "column 'name' (unlisted) is released unchanged and unique on 100% of rows" in err
    assert "column 'ssn' (unlisted)" in err and "likely a direct identifier" in err
    report = json.loads((folder / "out.json").read_text())
    assert report["keep_unlisted"] is True
    listed = {c["column"]: c for c in report["released_unchanged"]}
    assert list(listed) == ["name", "ssn", *UNCHANGED]
    assert {listed[c]["role"] for c in listed} == {"unlisted"}
    assert listed["name"]["likely_direct_identifier"] and listed["ssn"]["uniqueness"] == 1.0
    assert not listed["diagnosis"]["likely_direct_identifier"]
    assert any("'ssn'" in warning for warning in report["warnings"])
    page = (folder / "out.html").read_text()
    assert "released unchanged (keep unlisted)" in page and "likely a direct identifier" in page


def test_issue10_p1_job_file_takes_the_roles(folder: Path) -> None:
    (folder / "job.toml").write_text(
        'input = "patients.csv"\noutput = "out.csv"\nk = 5\n'
        'identifying = ["name", "ssn"]\ninsensitive = ["diagnosis"]\nkeep-unlisted = true\n'
        '[qi]\nbirth_date = "date"\nsex = "suppress"\nzip = "mask"\n'
    )
    assert main(["anonymize", "--config", str(folder / "job.toml"), "--quiet"]) == 0
    header = (folder / "out.csv").read_text().splitlines()[0]
    assert header == "birth_date,sex,zip,diagnosis,admission_date,length_of_stay"


def test_issue10_p1_the_api_refuses_naming_its_parameters(folder: Path) -> None:
    with pytest.raises(UnassignedColumnsError) as caught:
        kanonym.anonymize(
            folder / "patients.csv",
            quasi_identifiers={"zip": "mask"},
            identifying=["name", "ssn"],
            k=2,
        )
    assert caught.value.columns == ("birth_date", "sex", *UNCHANGED)
    message = str(caught.value)
    assert "insensitive" in message and "keep_unlisted=True" in message and "--" not in message


def test_issue10_p1_apply_keeps_the_roles_and_refuses_a_new_column(folder: Path, capsys) -> None:
    fit = _anonymize(
        folder,
        "--identifying",
        "name",
        "ssn",
        "--insensitive",
        *UNCHANGED,
        "--output",
        str(folder / "out.csv"),
        "--report",
        str(folder / "out.json"),
        "--quiet",
    )
    assert main(fit) == 0
    apply = ["apply", "--from-report", str(folder / "out.json"), "--quiet"]
    assert main([*apply, str(folder / "patients.csv"), "--output", str(folder / "b.csv")]) == 0
    batch = (folder / "patients.csv").read_text().splitlines()
    (folder / "batch.csv").write_text(
        "\n".join(
            f"{line},{'email' if i == 0 else f'p{i}@example.org'}" for i, line in enumerate(batch)
        )
        + "\n"
    )
    argv = [*apply, str(folder / "batch.csv"), "--output", str(folder / "b2.csv")]
    _bad_input(argv, capsys, "'email'", "have no role")
    assert not (folder / "b2.csv").exists()


@pytest.mark.parametrize(
    ("destination", "needle"),
    [
        (["--output", "{in}"], "output {in} is the input table"),
        (["--output", "o.csv", "--report", "{in}"], "report {in} is the input table"),
        (["--output", "o.csv", "--report-html", "{in}"], "report-html {in} is the input table"),
        (["--output", "{h}"], "is the hierarchy file of 'zip'"),
        (["--output", "o.csv", "--report", "o.csv"], "is also given as output"),
        (["--output", "o.csv", "--report", "r.json", "--report-html", "r.json"], "also given"),
        (["--output", "{link}"], "is the input table"),
    ],
)
def test_issue10_p2_a_destination_is_never_an_input_or_another_destination(
    folder: Path, capsys, destination: list[str], needle: str
) -> None:
    source = folder / "patients.csv"
    hierarchy = folder / "zip.csv"
    hierarchy.write_text("".join(f"021{z};021**;*\n" for z in range(30, 46)))
    os.link(source, folder / "hardlink.csv")
    names = {"{in}": str(source), "{h}": str(hierarchy), "{link}": str(folder / "hardlink.csv")}
    resolved = [
        names.get(item, str(folder / item) if "." in item else item) for item in destination
    ]
    before = _files(folder)
    argv = [
        "anonymize",
        str(source),
        "--qi",
        "birth_date=date",
        "sex=suppress",
        f"zip={hierarchy}",
        "--identifying",
        "name",
        "ssn",
        "--insensitive",
        *UNCHANGED,
        "--k",
        "5",
        *resolved,
    ]
    expected = needle
    for placeholder, path in names.items():
        expected = expected.replace(placeholder, path)
    _bad_input(argv, capsys, expected)
    assert _files(folder) == before


def test_issue10_p2_checked_before_anything_is_read(folder: Path, capsys) -> None:
    # An input that cannot be read: if it were read first, its error would show.
    garbage = folder / "garbage.csv"
    garbage.write_bytes(b"\x00\x01 not a table")
    argv = ["anonymize", str(garbage), *QI, "--k", "5", "--output", str(garbage)]
    _bad_input(argv, capsys, "is the input table")
    assert garbage.read_bytes() == b"\x00\x01 not a table"


def test_issue10_p2_ledger_and_apply_destinations(folder: Path, capsys) -> None:
    roles = ["--identifying", "name", "ssn", "--insensitive", *UNCHANGED]
    ledger = folder / "ledger.sqlite"
    release = ["release", str(folder / "patients.csv"), *QI, *roles, "--k", "5"]
    _bad_input(
        [*release, "--ledger", str(ledger), "--output", str(folder / "patients.csv")],
        capsys,
        "is the input table",
    )
    _bad_input(
        [*release, "--ledger", str(folder / "out.csv"), "--output", str(folder / "out.csv")],
        capsys,
        "is also given as output",
    )
    assert not ledger.exists() and not (folder / "out.csv").exists()
    fit = _anonymize(
        folder,
        *roles,
        "--output",
        str(folder / "out.csv"),
        "--report",
        str(folder / "out.json"),
        "--quiet",
    )
    assert main(fit) == 0
    before = _files(folder)
    apply = ["apply", "--from-report", str(folder / "out.json"), str(folder / "patients.csv")]
    _bad_input([*apply, "--output", str(folder / "patients.csv")], capsys, "is the input table")
    _bad_input(
        [*apply, "--output", str(folder / "b.csv"), "--report", str(folder / "out.json")],
        capsys,
        "is the report",
    )
    assert _files(folder) == before


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--output", "missing/out.csv"], "folder {f}/missing does not exist"),
        (["--output", "o.csv", "--report", "missing/r.json"], "folder {f}/missing does not exist"),
        (["--output", "o.csv", "--report-html", "nope/r.html"], "folder {f}/nope does not exist"),
        (["--output", "adir"], "is a directory"),
        (["--output", "afile/out.csv"], "is not a folder"),
    ],
)
def test_issue10_p3_destinations_are_checked_before_the_input_is_read(
    folder: Path, capsys, flags: list[str], needle: str
) -> None:
    (folder / "adir").mkdir()
    (folder / "afile").write_text("x")
    garbage = folder / "garbage.csv"
    garbage.write_bytes(b"\x00\x01 not a table")
    flags = [str(folder / f) if i % 2 else f for i, f in enumerate(flags)]
    _bad_input(
        ["anonymize", str(garbage), *QI, "--k", "5", *flags],
        capsys,
        needle.replace("{f}", str(folder)),
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_issue10_p3_an_unwritable_folder_is_refused_before_reading(folder: Path, capsys) -> None:
    locked = folder / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        argv = _anonymize(folder, "--keep-unlisted", "--output", str(locked / "out.csv"))
        _bad_input(argv, capsys, "is not writable")
    finally:
        locked.chmod(0o700)


def test_issue10_p11_a_useless_release_is_flagged(folder: Path, capsys) -> None:
    argv = [
        "anonymize",
        str(folder / "patients.csv"),
        *QI,
        "--identifying",
        "name",
        "ssn",
        "--insensitive",
        *UNCHANGED,
        "--k",
        "300",
        "--output",
        str(folder / "out.csv"),
        "--report",
        str(folder / "out.json"),
        "--report-html",
        str(folder / "out.html"),
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    wiped = [
        "birth_date: fully suppressed",
        "sex: fully suppressed",
        # Every ZIP starts with 0: masked to 0****, it tells as little as the root.
        "zip: one value ('0****') for every row, as good as suppressed",
    ]
    for warning in wiped:
        assert f"kanonym: warning: {warning}\n" in err
    assert "information loss (loss) 1.000 is above 0.9" in err
    report = json.loads((folder / "out.json").read_text())
    assert report["warnings"][:3] == wiped
    page = (folder / "out.html").read_text()
    assert "Warnings" in page and "sex: fully suppressed" in page


def test_issue10_p11_a_useful_release_has_no_warning(folder: Path, capsys) -> None:
    result = kanonym.anonymize(
        folder / "patients.csv",
        quasi_identifiers={"birth_date": "date", "sex": "suppress", "zip": "mask"},
        identifying=["name", "ssn"],
        insensitive=UNCHANGED,
        k=2,
        max_suppression=0.1,
        seed=1,
    )
    assert result.warnings == () and result.report()["warnings"] == []
