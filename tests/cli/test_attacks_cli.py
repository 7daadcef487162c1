"""The attack commands: risk, qi-scan, link and disclosure, exit codes and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kanonym.cli import main
from kanonym.datasets import adult_hierarchy_path, adult_path

MEDICAL = (
    "race,dob,sex,zip,marital,disease\n"
    "asian,64/04/12,F,94142,divorced,hypertension\n"
    "asian,64/09/13,F,94141,divorced,obesity\n"
    "asian,64/04/15,F,94139,married,chest pain\n"
    "asian,63/03/13,M,94139,married,obesity\n"
    "asian,63/03/18,M,94139,married,short breath\n"
    "black,64/09/27,F,94138,single,short breath\n"
    "black,64/09/27,F,94139,single,obesity\n"
    "white,64/09/27,F,94139,single,chest pain\n"
    "white,64/09/27,F,94141,widow,short breath\n"
)
VOTERS = (
    "name,address,city,zip,dob,sex,status\n"
    "Sue J. Doe,900 Market St.,San Francisco,94142,64/04/12,F,divorced\n"
)
HIERARCHIES = {
    "race.csv": "asian;person\nblack;person\nwhite;person\n",
    "zip.csv": "94138;9413*;941**\n94139;9413*;941**\n94141;9414*;941**\n94142;9414*;941**\n",
    "dob.csv": "".join(
        f"{d};{d[:2]};*\n"
        for d in ("64/04/12", "64/09/13", "64/04/15", "63/03/13", "63/03/18", "64/09/27")
    ),
}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "medical.csv").write_text(MEDICAL)
    (tmp_path / "voters.csv").write_text(VOTERS)
    for name, text in HIERARCHIES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _bad(args: list[str], capsys, needle: str) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("kanonym: error:")
    assert needle in captured.err
    assert captured.out == ""


def _link_args(d: Path, release: Path, *extra: str) -> list[str]:
    return [
        "link",
        str(release),
        str(d / "voters.csv"),
        "--on",
        "zip",
        "dob",
        "sex",
        "status=marital",
        *extra,
    ]


def test_link_reidentifies_sue_in_the_raw_table(files: Path, capsys) -> None:
    assert main([*_link_args(files, files / "medical.csv"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {
        "identities": 1,
        "zero_matches": 0,
        "unique_matches": 1,
        "below_k": 1,
        "k": 2,
        "distribution": {"1": 1},
    }
    assert main(_link_args(files, files / "medical.csv")) == 1
    assert "1 exactly one (re-identified)" in capsys.readouterr().out


def test_link_after_anonymize_exits_0(files: Path, capsys) -> None:
    d = files
    assert (
        main(
            [
                "anonymize",
                str(d / "medical.csv"),
                "--qi",
                f"race={d / 'race.csv'}",
                f"dob={d / 'dob.csv'}",
                "sex=suppress",
                f"zip={d / 'zip.csv'}",
                "marital=suppress",
                "--sensitive",
                "disease",
                "--k",
                "2",
                "--seed",
                "1",
                "--output",
                str(d / "release.csv"),
                "--quiet",
            ]
        )
        == 0
    )
    qi = ["--qi", f"zip={d / 'zip.csv'}", f"dob={d / 'dob.csv'}", "sex=suppress"]
    assert main([*_link_args(d, d / "release.csv"), *qi, "marital=suppress", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["unique_matches"] == 0 and summary["below_k"] == 0
    assert int(next(iter(summary["distribution"]))) >= 2


def test_link_bad_input(files: Path, capsys) -> None:
    release = files / "medical.csv"
    _bad(_link_args(files, release, "--qi", "zip"), capsys, "COL=HIERARCHY")
    _bad(_link_args(files, release, "--k", "0"), capsys, "k must be")
    _bad([*_link_args(files, release)[:3], "--on", "zip=", "dob"], capsys, "EXT_COL=REL_COL")
    _bad([*_link_args(files, release)[:3], "--on", "name"], capsys, "'name' not found")
    (files / "zip.csv").write_text(HIERARCHIES["zip.csv"].replace("94142;9414*;941**\n", ""))
    _bad(
        _link_args(files, release, "--qi", f"zip={files / 'zip.csv'}"),
        capsys,
        "column 'zip': value '94142' is not in hierarchy",
    )
    _bad(_link_args(files, files / "absent.csv"), capsys, "absent.csv")


def test_risk_json_and_text(files: Path, capsys) -> None:
    assert main(["risk", str(files / "medical.csv"), "--columns", "race", "sex", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # asian F 3, asian M 2, black F 2, white F 2.
    assert summary["class_sizes"] == {"2": 3, "3": 1}
    assert summary["prosecutor"]["highest"] == 0.5 and summary["marketer"] == 4 / 9
    assert summary["journalist"] is None and "journalist_reason" in summary
    args = ["risk", str(files / "medical.csv"), "--columns", "zip", "--population-size", "90"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "sample uniques" in out and "among 90 (sampling fraction 0.1): zayatz" in out
    population = ["--population", str(files / "medical.csv"), "--threshold", "0.5"]
    assert (
        main(["risk", str(files / "medical.csv"), "--columns", "zip", *population, "--json"]) == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["journalist"]["highest"] == 1.0 and summary["population_uniques"] == 2


def test_risk_bad_input(files: Path, capsys) -> None:
    table = str(files / "medical.csv")
    _bad(["risk", table, "--columns", "age"], capsys, "'age' not found")
    _bad(["risk", table, "--columns", "zip", "--threshold", "2"], capsys, "threshold")
    _bad(["risk", table, "--columns", "zip", "--population-size", "3"], capsys, "smaller than")
    _bad(
        ["risk", table, "--columns", "zip", "--population", table, "--population-size", "9"],
        capsys,
        "not allowed with",
    )
    _bad(
        ["risk", table, "--columns", "zip", "--population", str(files / "voters.csv")],
        capsys,
        "zip=",
    )


def test_qi_scan(files: Path, capsys) -> None:
    args = ["qi-scan", str(files / "medical.csv"), "--columns", "dob", "sex", "zip"]
    assert main([*args, "--json"]) == 0
    scan = json.loads(capsys.readouterr().out)
    assert scan["total"] == 7 and scan["complete"] is True
    assert scan["combinations"][0]["columns"] == ["dob", "zip"]  # 7 unique, fewest columns
    assert main([*args, "--top", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and "all 7 combinations" in out[0]
    _bad([*args, "--max-size", "0"], capsys, "largest combination")
    _bad([*args, "--top", "-1"], capsys, "--top")


def test_disclosure(files: Path, capsys) -> None:
    args = ["disclosure", str(files / "medical.csv"), "--columns", "race", "sex"]
    assert main([*args, "--sensitive", "disease", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["sensitive"]["disease"]
    assert d["homogeneous_classes"] == 0 and d["diversity"] == {"2": 3, "3": 1}
    assert main([*args, "--sensitive", "marital"]) == 0
    assert "homogeneous" in capsys.readouterr().out
    _bad([*args, "--sensitive", "race"], capsys, "both quasi-identifier and sensitive")
    _bad([*args, "--sensitive", "disease", "--dominance", "1"], capsys, "dominance")


def test_adult_smoke(capsys) -> None:
    adult = str(adult_path())
    assert main(["risk", adult, "--columns", "age", "sex", "race", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 30162 and 0 < summary["sample_uniqueness"] < 0.01
    assert main(["qi-scan", adult, "--max-size", "2", "--time-limit", "60"]) == 0
    assert "all 45 combinations of 1 to 2 of 9 columns" in capsys.readouterr().out
    assert (
        main(["disclosure", adult, "--columns", "age", "sex", "--sensitive", "salary-class"]) == 0
    )
    assert "salary-class:" in capsys.readouterr().out
    # Linking Adult to itself on age and sex, age generalized by ARX's hierarchy.
    link = [
        "link",
        adult,
        adult,
        "--on",
        "age",
        "sex",
        "--qi",
        f"age={adult_hierarchy_path('age')}",
    ]
    assert main([*link, "--k", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["zero_matches"] == 0
