"""One vocabulary: the library names Python parameters, the command line its options.

The translation happens in one place (:mod:`kanonym.cli.flags`); these tests
check both sides of it, the renamed ``apply`` options, and the job edge that
turns model specs into model objects.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import kanonym
from kanonym.cli import main
from kanonym.cli.flags import as_flags, flag

TABLE = pl.DataFrame(
    {
        "zip": ["02138", "02139", "02141", "02142", "02143", "02144"],
        "salary": ["1000", "2000", "3000", "4000", "1000", "2000"],
    }
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    TABLE.write_csv(tmp_path / "t.csv")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    ("options", "python", "cli"),
    [
        (
            {"algorithm": "minimal", "metric": "dm"},
            "a utility `metric` applies only to optimal and incognito, not to 'minimal'; "
            "give `policy` instead",
            "a utility --metric applies only to optimal and incognito, not to 'minimal'; "
            "give --policy instead",
        ),
        (
            {"max_suppressed_rows": -1},
            "`max_suppressed_rows` must be a whole number >= 0, got -1",
            "--max-suppressed-rows must be a whole number >= 0, got -1",
        ),
        (
            {"algorithm": "mondrian", "max_levels": {"zip": 1}},
            "`max_levels`: option(s) of the lattice searches, meaningless for the local "
            "recoding 'mondrian'",
            "--max-level: option(s) of the lattice searches, meaningless for the local "
            "recoding 'mondrian'",
        ),
    ],
)
def test_the_api_names_the_parameter_and_the_command_line_the_option(
    folder: Path, capsys: pytest.CaptureFixture[str], options: dict, python: str, cli: str
) -> None:
    with pytest.raises(kanonym.InputError) as caught:
        kanonym.anonymize(TABLE, quasi_identifiers={"zip": "mask"}, k=2, **options)
    assert str(caught.value) == python
    flags = {
        "algorithm": ["--algorithm", str(options.get("algorithm"))],
        "metric": ["--metric", "dm"],
        "max_suppressed_rows": ["--max-suppressed-rows", "-1"],
        "max_levels": ["--max-level", "zip=1"],
    }
    argv = ["anonymize", "t.csv", "--qi", "zip=mask", "--k", "2", "--insensitive", "salary"]
    argv += [item for name in options for item in flags[name]]
    assert main([*argv, "--output", "o.csv"]) == 2
    assert _error(capsys) == f"kanonym: error: {cli}\n"
    assert not (folder / "o.csv").exists()


def test_as_flags_writes_values_switches_and_command_specific_options() -> None:
    assert as_flags("use `algorithm='greedy'` or `keep_unlisted=True`") == (
        "use --algorithm greedy or --keep-unlisted"
    )
    assert as_flags("`time_limit=None` means no limit") == "no --time-limit means no limit"
    assert as_flags("`columns`: name one", "check") == "--columns: name one"
    assert as_flags("`columns`: name one", "qi-scan") == "--columns: name one"
    assert as_flags("`quasi_identifiers` and `weights`") == "--qi and --weight"
    # Backquotes around anything but a parameter name are left alone.
    assert as_flags("a value `Zip Code` stays") == "a value `Zip Code` stays"
    assert flag("report", "apply") == "--from-report" and flag("report") == "--report"


@pytest.mark.parametrize(
    ("command", "more"),
    [("check", ["--k", "2"]), ("risk", []), ("disclosure", ["--sensitive", "salary"])],
)
def test_measuring_commands_take_columns_and_refuse_the_former_qi(
    folder: Path, capsys: pytest.CaptureFixture[str], command: str, more: list[str]
) -> None:
    # --qi is the column -> hierarchy mapping; plain column names go after --columns.
    assert main([command, "t.csv", "--columns", "zip", *more, "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)
    for old in (["--qi", "zip"], ["--qi", "zip=mask"], ["--columns", "zip", "--qi", "zip"]):
        assert main([command, "t.csv", *old, *more]) == 2
        err = _error(capsys)
        assert err.startswith(f"kanonym: error: {command} takes plain column names with --columns")
        assert err.endswith("write --columns zip\n")
    # Without values, the hint still names the option to use.
    assert main([command, "t.csv", *more, "--qi"]) == 2
    assert "write --columns COL ..." in _error(capsys)


def test_help_documents_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "exit status:" in out
    assert "1    no safe release" in out and "2    bad input" in out


def test_apply_reads_from_report_and_writes_report(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = ["anonymize", "t.csv", "--qi", "zip=mask", "--k", "2", "--insensitive", "salary"]
    assert main([*made, "--seed", "1", "--output", "o.csv", "--report", "o.json", "--quiet"]) == 0
    applied = ["apply", "t.csv", "--from-report", "o.json", "--output", "b.csv"]
    assert main([*applied, "--report", "b.json", "--seed", "1", "--quiet"]) == 0
    assert json.loads((folder / "b.json").read_text())["applied_from"].endswith("o.json")
    assert (folder / "b.csv").read_bytes() == (folder / "o.csv").read_bytes()
    # The old spellings are refused naming the new ones, never read as something else.
    assert main(["apply", "t.csv", "--report", "o.json", "--output", "c.csv"]) == 2
    assert "reads the report to apply with --from-report (formerly --report)" in _error(capsys)
    old = ["apply", "t.csv", "--from-report", "o.json", "--output", "c.csv", "--new-report", "c"]
    assert main(old) == 2
    assert "apply's --new-report is now --report" in _error(capsys)
    assert not (folder / "c.csv").exists()


def test_a_model_spec_with_a_builder_hierarchy_is_read_at_the_edge(folder: Path) -> None:
    argv = ["anonymize", "t.csv", "--qi", "zip=mask", "--k", "2", "--seed", "1"]
    argv += [
        "--sensitive",
        "salary=interval:2000",
        "--model",
        "t-closeness:hierarchical:0.5:salary",
    ]
    assert main([*argv, "--output", "o.csv", "--report", "o.json", "--quiet"]) == 0
    report = json.loads((folder / "o.json").read_text())
    assert report["model_specs"] == ["t-closeness:hierarchical:0.5:salary"]
    assert report["sensitive_hierarchies"] == {"salary": "interval:2000"}
    # The same job through the API: the model object holds the built hierarchy.
    salary = kanonym.hierarchy.resolve(
        kanonym.hierarchy.parse_hierarchy("interval:2000"),
        TABLE["salary"].unique().to_list(),
        column="salary",
        source="t.csv",
    )
    model = kanonym.HierarchicalDistanceTCloseness(attribute="salary", t=0.5, hierarchy=salary)
    result = kanonym.anonymize(
        "t.csv", quasi_identifiers={"zip": "mask"}, k=2, models=[model], seed=1
    )
    assert result.table.equals(pl.read_csv(folder / "o.csv", infer_schema=False))


def test_no_solution_exits_1_naming_no_option_as_bad(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["anonymize", "t.csv", "--qi", "zip=mask", "--k", "2", "--sensitive", "salary"]
    argv += ["--model", "l-diversity:distinct:5:salary", "--output", "o.csv"]
    assert main(argv) == 1
    assert _error(capsys) == (
        "kanonym: no release: no generalization satisfies the privacy models within the "
        "suppression limit; nothing written\n"
    )
    with pytest.raises(kanonym.NoSolutionError) as caught:
        kanonym.anonymize(
            TABLE,
            quasi_identifiers={"zip": "mask"},
            k=2,
            models=[kanonym.DistinctLDiversity(attribute="salary", l=5)],
        )
    assert not isinstance(caught.value, kanonym.InputError)
    assert not (folder / "o.csv").exists()


def test_a_timeout_with_nothing_found_exits_1_naming_the_option(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kanonym.release import steps  # the pipeline's full-domain search runs there

    def timed_out(*args: object, **kwargs: object) -> None:
        raise kanonym.SearchTimeoutError("nothing found; give more `time_limit`")

    monkeypatch.setattr(steps, "run_search", timed_out)
    argv = ["anonymize", "t.csv", "--qi", "zip=mask", "--k", "2", "--insensitive", "salary"]
    assert main([*argv, "--time-limit", "1", "--output", "o.csv"]) == 1
    assert (
        _error(capsys)
        == "kanonym: no release: nothing found; give more --time-limit; nothing written\n"
    )
