"""Issue 10, point 13: every option of every command says what it does; every help has examples."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
from tests.patients import write_patients

from kanonym.cli import main
from kanonym.cli.flags import RefusedQi

cli_main = sys.modules["kanonym.cli.main"]


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli_main._build_parser()
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(subparsers.choices)


def _checked() -> list[str]:
    return list(_commands())


def test_the_help_checks_cover_every_command_of_main() -> None:
    assert {
        "anonymize", "check", "apply", "demo", "risk", "qi-scan", "link", "disclosure",
        "release", "audit", "ledger",
    } <= set(_checked())  # fmt: skip


@pytest.mark.parametrize("command", _checked())
def test_issue10_p13_every_option_has_a_help_text(command: str) -> None:
    # A former spelling kept only to be refused with a hint (RefusedQi) stays hidden.
    parser = _commands()[command]
    missing = [
        action.option_strings[0] if action.option_strings else action.dest
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | RefusedQi)
        and (not action.help or action.help == argparse.SUPPRESS)
    ]
    assert not missing, f"kanonym {command}: no help text for {missing}"


@pytest.mark.parametrize("command", _checked())
def test_issue10_p13_every_help_ends_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    examples = out[out.index("Example") :]
    assert f"kanonym {command} " in examples
    # The layout of the examples is kept (one command a line), not refilled.
    assert all(len(line) <= 100 for line in examples.splitlines())


def test_issue10_p13_named_options_say_what_they_take(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["anonymize", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "0.04 or 4%" in text  # --max-suppression: fraction or percentage
    assert "removed from the release" in text  # --identifying
    assert main(["check", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "column names" in text and "not COL=HIERARCHY" in text


@pytest.mark.parametrize("limit", ["0.04", "4%", "4.0 %"])
def test_issue10_p13_max_suppression_as_fraction_or_percentage(
    tmp_path: Path, limit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_patients(tmp_path)
    argv = ["anonymize", str(tmp_path / "patients.csv"), "--qi", "zip=mask", "--k", "5"]
    argv += ["--identifying", "name", "ssn", "--keep-unlisted", "--quiet"]
    argv += ["--max-suppression", limit, "--output", str(tmp_path / "o.csv")]
    argv += ["--report", str(tmp_path / "r.json")]
    assert main(argv) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["suppression_limit"]["fraction"] == 0.04


def test_issue10_p13_max_suppression_out_of_range_names_both_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["anonymize", "t.csv", "--qi", "zip=mask", "--k", "5", "--max-suppression", "4"]
    assert main([*argv, "--output", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "0.04" in err and "4%" in err


def test_issue10_p13_max_suppression_percentage_in_a_job_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_patients(tmp_path)
    (tmp_path / "job.toml").write_text(
        'input = "patients.csv"\noutput = "o.csv"\nreport = "r.json"\nk = 5\n'
        'max-suppression = "4%"\nidentifying = ["name", "ssn"]\nkeep-unlisted = true\n'
        'qi = ["zip=mask"]\n'
    )
    assert main(["anonymize", "--config", str(tmp_path / "job.toml"), "--quiet"]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["suppression_limit"]["fraction"] == 0.04
