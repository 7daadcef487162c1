"""``kanonym release`` and ``kanonym audit``: exit codes, one-line errors, job files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests import sweeney2002 as seed

from kanonym.cli import main
from kanonym.engine import embedded
from kanonym.errors import VerificationError
from kanonym.release.recorded import Ledger


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    seed.write_hierarchies(tmp_path)
    seed.write_table(tmp_path, "pt.csv", seed.keyed(seed.PT))
    seed.write_table(tmp_path, "pt_t1.csv", seed.keyed(seed.PT + seed.T1_ADDITIONS))
    seed.write_table(tmp_path, "gt1.csv", seed.frame(seed.GT1))
    seed.write_table(tmp_path, "gt3.csv", seed.frame(seed.GT3))
    seed.write_table(tmp_path, "gt1_t1.csv", seed.frame(seed.GT1_T1_BASED))
    return tmp_path


QI = ["--qi", "Race=race.csv", "BirthDate=birthdate.csv", "Gender=gender.csv", "ZIP=zip.csv"]


def _release(source: str, output: str, *extra: str) -> list[str]:
    # Without a key (given, or inherited from --based-on/--replay) 'id' is released unchanged.
    keyed = {"--key", "--based-on", "--replay"} & set(extra)
    return [
        "release",
        source,
        "--ledger",
        "ledger.sqlite",
        *QI,
        "--insensitive",
        "Problem",
        *([] if keyed else ["id"]),
        "--k",
        "2",
        "--output",
        output,
        *extra,
    ]


def _one_line_error(capsys: pytest.CaptureFixture[str], needle: str) -> None:
    # Earlier, successful commands of the test may have printed their warnings.
    lines = capsys.readouterr().err.splitlines(keepends=True)
    err = "".join(line for line in lines if not line.startswith("kanonym: warning: "))
    assert err.count("\n") == 1 and err.startswith("kanonym: error: ") and needle in err


def test_release_then_temporal_release_then_audit(folder: Path, capsys) -> None:
    assert (
        main(_release("pt.csv", "r1.csv", "--key", "id", "--seed", "1", "--report", "r1.json")) == 0
    )
    out = capsys.readouterr().out
    assert (
        "released 12 of 12 rows" in out and "recorded as release 1 in ledger.sqlite (seed 1)" in out
    )
    assert json.loads((folder / "r1.json").read_text())["ledger"]["release_id"] == 1
    assert main(_release("pt_t1.csv", "r2.csv", "--based-on", "1", "--seed", "2")) == 0
    assert "based on release 1" in capsys.readouterr().out
    assert main(["audit", "--ledger", "ledger.sqlite", "1", "2", *QI, "--k", "2"]) == 0
    assert "the linked table is 2-anonymous" in capsys.readouterr().out


def test_seed_reuse_exits_2_and_replay_exits_0(folder: Path, capsys) -> None:
    assert main(_release("pt.csv", "r1.csv", "--key", "id", "--seed", "1", "--quiet")) == 0
    assert main(_release("pt.csv", "r2.csv", "--key", "id", "--seed", "1")) == 2
    _one_line_error(capsys, "seed 1 was already used for this source by release 1")
    assert not (folder / "r2.csv").exists()
    assert main(_release("pt.csv", "r2.csv", "--replay", "1")) == 0
    assert "re-run of release 1, reproduced exactly" in capsys.readouterr().out
    assert (folder / "r1.csv").read_bytes() == (folder / "r2.csv").read_bytes()


def test_complementary_release_is_reported(folder: Path, capsys) -> None:
    assert main(_release("pt.csv", "r1.csv", "--key", "id", "--seed", "1", "--quiet")) == 0
    assert main(_release("pt.csv", "r2.csv", "--key", "id", "--seed", "2")) == 0
    assert "quasi-identifier enlarged with Problem" in capsys.readouterr().out


def test_job_file_with_ledger_keys(folder: Path, capsys) -> None:
    (folder / "jobs").mkdir()
    (folder / "jobs" / "t0.toml").write_text(
        'input = "../pt.csv"\noutput = "../r1.csv"\nledger = "../ledger.sqlite"\nkey = "id"\n'
        'k = 2\nseed = 1\ninsensitive = ["Problem"]\n[qi]\n'
        'Race = "../race.csv"\nBirthDate = "../birthdate.csv"\nGender = "../gender.csv"\n'
        'ZIP = "../zip.csv"\n'
    )
    assert main(["release", "--config", "jobs/t0.toml"]) == 0
    assert (folder / "r1.csv").exists()
    job = (folder / "jobs" / "t0.toml").read_text()
    t1 = (
        job.replace("pt.csv", "pt_t1.csv")
        .replace("r1.csv", "r2.csv")
        .replace("seed = 1", "seed = 2")
    )
    t1 = t1.replace('key = "id"\n', "based-on = 1\n")
    (folder / "jobs" / "t1.toml").write_text(t1)
    assert main(["release", "--config", "jobs/t1.toml"]) == 0
    entries = Ledger(folder / "ledger.sqlite").entries()
    assert [(e.id, e.based_on, e.key) for e in entries] == [(1, None, "id"), (2, 1, "id")]
    (folder / "jobs" / "bad.toml").write_text(t1.replace("based-on = 1", 'based-on = "one"'))
    assert main(["release", "--config", "jobs/bad.toml"]) == 2
    _one_line_error(capsys, "'based-on' must be a release number")


def test_audit_of_gt1_and_gt3_exits_1_and_shows_only_generalized_classes(folder, capsys) -> None:
    assert main(["audit", "gt1.csv", "gt3.csv", *QI, "--k", "2", "--json"]) == 1
    out = capsys.readouterr().out
    document = json.loads(out)
    assert document["classes_below_k"] == 2 and document["join_columns"] == ["Problem"]
    assert '"02138"' not in out and '"02139"' not in out
    assert main(["audit", "gt1.csv", "gt3.csv", *QI, "--k", "2"]) == 1
    text = capsys.readouterr().out
    assert "is NOT 2-anonymous: 2 classes (2 records) below k" in text
    assert "[Race=white, BirthDate=1960-69, Gender=male, ZIP=0213*]" in text


def test_audit_of_gt1_and_its_t1_extension_exits_0(folder: Path, capsys) -> None:
    assert main(["audit", "gt1.csv", "gt1_t1.csv", *QI, "--k", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["k_anonymous"] is True


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["audit", "gt1.csv", *QI, "--k", "2"], "at least two releases"),
        (
            ["audit", "gt1.csv", "gt3.csv", "--qi", "Race", "--k", "2"],
            "not of the form COL=HIERARCHY",
        ),
        (
            ["audit", "gt1.csv", "gt3.csv", "--qi", "Race=race.csv", "Race=race.csv", "--k", "2"],
            "given twice",
        ),
        (["audit", "gt1.csv", "nope.csv", *QI, "--k", "2"], "nope.csv: file not found"),
        (["audit", "gt1.csv", "gt3.csv", *QI, "--k", "0"], "k must be"),
        (["audit", "--ledger", "absent.sqlite", "1", "2", *QI, "--k", "2"], "ledger not found"),
        (["audit", "--ledger", "pt.csv", "1", "2", *QI, "--k", "2"], "not a kanonym ledger"),
        (
            ["release", "pt.csv", *QI, "--k", "2", "--output", "o.csv"],
            "'--ledger LEDGER' is required",
        ),
        (_release("pt.csv", "o.csv", "--based-on", "3"), "--based-on 3: no such release"),
        (_release("pt.csv", "o.csv", "--key", "ssn"), "key column 'ssn' not found"),
        (_release("pt.csv", "o.csv", "--replay", "1"), "--replay 1: no such release"),
        (
            ["release", "pt.csv", "--ledger", "gt1.csv", *QI, "--k", "2", "--output", "o.csv"],
            "not a kanonym ledger",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(folder: Path, capsys, argv, needle) -> None:
    assert main(argv) == 2
    _one_line_error(capsys, needle)
    assert not (folder / "o.csv").exists()


def test_audit_of_an_unknown_ledger_release(folder: Path, capsys) -> None:
    assert main(_release("pt.csv", "r1.csv", "--seed", "1", "--quiet")) == 0
    assert main(["audit", "--ledger", "ledger.sqlite", "1", "5", *QI, "--k", "2"]) == 2
    _one_line_error(capsys, "no release 5 in the ledger")


def test_failed_verification_exits_1_and_records_nothing(folder: Path, capsys, monkeypatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise VerificationError("injected")

    monkeypatch.setattr(embedded, "verify_release", fail)
    assert main(_release("pt.csv", "o.csv", "--seed", "1")) == 1
    assert "verification failed, nothing written" in capsys.readouterr().err
    assert not (folder / "o.csv").exists()
    assert Ledger(folder / "ledger.sqlite").entries() == ()


def test_issue10_p4_audit_reuses_what_the_ledger_recorded(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """No --qi, no --k: the date builder's hierarchy and k=5 come from the ledger."""
    from tests.patients import write_patients

    monkeypatch.chdir(tmp_path)
    write_patients(tmp_path, rows=300)
    common = ["--ledger", "l.sqlite", "--identifying", "name", "ssn", "--k", "5", "--quiet"]
    rest = ["diagnosis", "admission_date", "length_of_stay"]
    assert (
        main(
            [
                "release",
                "patients.csv",
                *common,
                "--qi",
                "birth_date=date",
                "sex=suppress",
                "zip=mask",
                "--insensitive",
                *rest,
                "--output",
                "r1.csv",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "release",
                "patients.csv",
                *common,
                "--qi",
                "zip=mask",
                "--insensitive",
                "birth_date",
                "sex",
                *rest,
                "--output",
                "r2.csv",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["audit", "--ledger", "l.sqlite", "1", "2", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["k"] == 5 and document["linked_rows"] > 0 and document["k_anonymous"]
    assert (
        document["columns"] == ["birth_date", "sex", "zip"] and "quasi_identifiers" not in document
    )
    # Files need the quasi-identifiers and k.
    assert main(["audit", "r1.csv", "r2.csv"]) == 2
    _one_line_error(capsys, "files need --qi")
    # A partial --qi that links nothing is an error, not a pass.
    assert main(["audit", "r1.csv", "r2.csv", "--qi", "zip=mask", "--k", "5"]) == 2
    _one_line_error(capsys, "nothing linked")


def test_issue10_p14_ledger_list_and_show(folder: Path, capsys) -> None:
    assert main(_release("pt.csv", "out1.csv", "--key", "id", "--seed", "1")) == 0
    capsys.readouterr()
    assert main(["ledger", "list", "ledger.sqlite"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].split()[0] == "1" and "k=2" in lines[0]
    assert main(["ledger", "list", "ledger.sqlite", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["id"] == 1 and listed["k"] == 2 and listed["output"].endswith("out1.csv")
    assert main(["ledger", "show", "ledger.sqlite", "1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["key"] == "id" and shown["seed"] == 1
    # quasi_identifiers maps each to its hierarchy, as in reports (no separate "hierarchies").
    qis = shown["quasi_identifiers"]
    assert "hierarchies" not in shown and list(qis) == list(shown["transformation"])
    assert listed["quasi_identifiers"] == {name: qi["source"] for name, qi in qis.items()}
    assert all(len(qi["sha256"]) == 64 and qi["height"] >= 1 for qi in qis.values())
    assert main(["ledger", "show", "ledger.sqlite", "9"]) == 2
    _one_line_error(capsys, "no release 9")
    assert main(["ledger", "list", "absent.sqlite"]) == 2
    _one_line_error(capsys, "ledger not found")


def test_issue10_p14_release_lists_every_file_written(folder: Path, capsys) -> None:
    argv = _release("pt.csv", "out1.csv", "--key", "id", "--seed", "1", "--report", "out1.json")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"wrote \S*out1\.csv and \S*out1\.json; recorded as release 1", out)
