"""Issue 15, point 8: one key in two spellings, a missing root, ARX files listing a value twice.

* ``max-suppression`` and ``max_suppression`` in one job file: one value was
  used and the other silently ignored. Any key given in both spellings is now
  refused, naming both.
* A hierarchy whose top level is an empty cell was accepted: generalized cells
  would be written empty and read back as missing data. It is refused.
* An ARX file listing a value on two lines with different generalizations
  could be read only from Python (``load_arx(..., duplicates="last")``): the
  command line and the job file now take ``hierarchy-duplicates``, and the
  reports list the values concerned, the line kept and the lines dropped.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from kanonym.cli import main
from kanonym.config import AnonymizationConfig
from kanonym.errors import HierarchyError
from kanonym.hierarchy import Hierarchy, load_arx


def _table(folder: Path) -> Path:
    ages = [30 + (i * 7) % 20 for i in range(40)]
    frame = pl.DataFrame(
        {
            "age": [str(a) for a in ages],
            "sex": ["F" if i % 3 else "M" for i in range(40)],
            "diagnosis": [("flu", "asthma", "angina")[i % 3] for i in range(40)],
        }
    )
    path = folder / "t.csv"
    frame.write_csv(path)
    return path


def _age_file(folder: Path, *, repeated: bool = True) -> Path:
    """Ages 30-49 by decade; 35 also listed first under 30-34, which the last line overrides."""
    lines = ["35;30-34;*"] if repeated else []
    lines += [f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(30, 50)]
    path = folder / "age.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _args(folder: Path, *extra: str) -> list[str]:
    return [
        "anonymize", str(_table(folder)), "--qi", f"age={_age_file(folder)}", "sex=suppress",
        "--insensitive", "diagnosis", "--k", "2", "--seed", "1",
        "--output", str(folder / "out.csv"), "--report", str(folder / "out.json"), "--quiet",
        *extra,
    ]  # fmt: skip


def _job(folder: Path, lines: list[str]) -> Path:
    _table(folder)
    job = folder / "job.toml"
    job.write_text(
        "\n".join(
            [
                'input = "t.csv"',
                'output = "out.csv"',
                'insensitive = ["diagnosis"]',
                "k = 2",
                *lines,
                "[qi]",
                'age = "interval:5,10"',
                'sex = "suppress"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return job


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("max-suppression = 0.1", "max_suppression = 0.5"),
        ("time_limit = 5", "time-limit = 9"),
        ('models = ["l-diversity:distinct:2:diagnosis"]', 'model = ["l-diversity:distinct:3:x"]'),
        ("max_suppressed_rows = 1", "max-suppressed-rows = 2"),
    ],
)
def test_issue15_p8_a_key_in_both_spellings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str, second: str
) -> None:
    job = _job(tmp_path, [first, second])
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 2
    err = capsys.readouterr().err
    one, other = (line.split(" = ")[0] for line in (first, second))
    assert f"'{one}' and '{other}' are one key spelled two ways" in err, err
    assert str(job) in err and err.count("\n") == 1
    assert not (tmp_path / "out.csv").exists()


def test_a_flag_still_replaces_the_file_key_in_either_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = _job(tmp_path, ["max_suppression = 0.5", "seed = 3"])
    argv = ["anonymize", "--config", str(job), "--max-suppression", "0%", "--report", "r.json"]
    assert main([*argv, "--quiet"]) == 0, capsys.readouterr().err
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    Path("r.json").unlink()
    assert report["suppression_limit"]["fraction"] == 0.0 and report["seed"] == 3


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_issue15_p8_a_hierarchy_whose_root_is_an_empty_cell_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _table(tmp_path)
    sex = tmp_path / "sex.csv"
    sex.write_text("F;\nM;\n", encoding="utf-8")
    argv = [
        "anonymize", str(source), "--qi", f"sex={sex}", "age=interval:5,10",
        "--insensitive", "diagnosis", "--k", "2", "--output", str(tmp_path / "out.csv"),
        "--quiet",
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(sex) in err
    assert "top level 1 is the missing value" in err and "such as '*'" in err
    assert not (tmp_path / "out.csv").exists()
    with pytest.raises(HierarchyError, match="top level 2 is the missing value"):
        Hierarchy("h", (("a", "b"), ("ab", "ab"), (None, None)))
    # A lone leaf generalizes nothing: it may be the missing value.
    assert Hierarchy("h", ((None,),)).height == 0


def test_issue15_p8_a_value_listed_twice_is_refused_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "level 0 value '35' has two parents at level 1: '30-34' and '30-39'" in err
    assert "(lines 1 and 7)" in err and "--hierarchy-duplicates last" in err
    assert 'hierarchy-duplicates = "last"' in err and "duplicates=" not in err
    assert not (tmp_path / "out.csv").exists()


def test_issue15_p8_hierarchy_duplicates_last_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "out.html"
    assert main(_args(tmp_path, "--hierarchy-duplicates", "last", "--report-html", str(page))) == 0
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert report["hierarchy_duplicates"] == "last"
    assert report["repeated_leaves"] == {
        "age": [
            {
                "leaf": "35",
                "kept": {"line": 7, "generalizations": ["30-39", "*"]},
                "dropped": [{"line": 1, "generalizations": ["30-34", "*"]}],
            }
        ]
    }
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert "30-34" not in released.get_column("age").to_list()
    # The page counts them (it shows no hierarchy content).
    text = page.read_text(encoding="utf-8")
    assert "age: 1 value (the JSON report lists" in text and "30-34" not in text
    # apply reads the files as the report's release did, or as told.
    batch = tmp_path / "batch.csv"
    pl.read_csv(tmp_path / "t.csv", infer_schema=False).write_csv(batch)
    applied = [
        "apply", str(batch), "--from-report", str(tmp_path / "out.json"),
        "--output", str(tmp_path / "applied.csv"), "--report", str(tmp_path / "a.json"),
        "--quiet",
    ]  # fmt: skip
    assert main(applied) == 0, capsys.readouterr().err
    again = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert again["repeated_leaves"] == report["repeated_leaves"]
    assert main([*applied, "--hierarchy-duplicates", "error"]) == 2
    assert "--hierarchy-duplicates last" in capsys.readouterr().err


def test_issue15_p8_hierarchy_duplicates_in_a_job_file_and_a_ledger_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(tmp_path)
    _age_file(tmp_path)
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.csv"\noutput = "out.csv"\nreport = "out.json"\ninsensitive = ["diagnosis"]\n'
        'k = 2\nseed = 1\nhierarchy-duplicates = "last"\n[qi]\nage = "age.csv"\n'
        'sex = "suppress"\n',
        encoding="utf-8",
    )
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [leaf["leaf"] for leaf in report["repeated_leaves"]["age"]] == ["35"]
    ledger = ["release", "--config", str(job), "--ledger", str(tmp_path / "l.db"), "--quiet"]
    assert main([*ledger, "--output", "r.csv", "--report", "r.json"]) == 0
    recorded = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert recorded["repeated_leaves"] == report["repeated_leaves"]
    # A bad value names the key and the choices.
    job.write_text(job.read_text().replace('"last"', '"first"'), encoding="utf-8")
    assert main(["anonymize", "--config", str(job), "--quiet"]) == 2
    assert "'hierarchy-duplicates' must be 'error' or 'last'" in capsys.readouterr().err


def test_issue15_p8_the_api_passes_the_option_through(tmp_path: Path) -> None:
    age = _age_file(tmp_path)
    config = AnonymizationConfig(quasi_identifiers={"age": age}, k=2, hierarchy_duplicates="last")
    (hierarchy,) = config.hierarchies.values()
    assert isinstance(hierarchy, Hierarchy) and hierarchy.repeated_leaves[0].leaf == "35"
    assert load_arx(age, duplicates="last").repeated_leaves == hierarchy.repeated_leaves
    (tmp_path / "plain").mkdir()
    assert load_arx(_age_file(tmp_path / "plain", repeated=False)).repeated_leaves == ()
    with pytest.raises(HierarchyError, match="pass `duplicates='last'`"):
        AnonymizationConfig(quasi_identifiers={"age": age}, k=2)
