"""Issue 15, point 3: the ledger is private, a release gets the documented mode.

The ledger holds the secret its record keys are hashed with: it is created
0600 whatever the umask. A release (and its reports) is created like any new
file, 0666 minus the umask; a destination that exists keeps its mode.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.patients import write_patients

from kanonym.cli import main

ROLES = [
    "--qi", "birth_date=date", "sex=suppress", "zip=mask",
    "--identifying", "name",
    "--insensitive", "diagnosis", "admission_date", "length_of_stay",
    "--k", "3", "--max-suppression", "10%", "--quiet",
]  # fmt: skip


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_issue15_p3_the_ledger_is_private(tmp_path: Path, umask_022: None) -> None:
    source = write_patients(tmp_path, rows=60)
    ledger, output, report = tmp_path / "ledger.db", tmp_path / "r1.csv", tmp_path / "r1.json"
    argv = [
        "release", str(source), *ROLES, "--key", "ssn", "--ledger", str(ledger),
        "--output", str(output), "--report", str(report), "--seed", "1",
    ]  # fmt: skip
    assert main(argv) == 0
    assert _mode(ledger) == 0o600
    # New release files: 0666 minus the umask, like any file the user creates.
    assert _mode(output) == 0o644 and _mode(report) == 0o644
    # An existing destination keeps its mode when it is written again.
    output.chmod(0o640)
    report.chmod(0o600)
    assert main([*argv[:-2], "--replay", "1"]) == 0
    assert _mode(output) == 0o640 and _mode(report) == 0o600
    assert _mode(ledger) == 0o600


def test_issue15_p3_a_new_release_follows_the_umask(tmp_path: Path) -> None:
    source = write_patients(tmp_path, rows=60)
    output = tmp_path / "out.csv"
    previous = os.umask(0o077)
    try:
        assert main(["anonymize", str(source), *ROLES, "--identifying", "ssn",
                     "--output", str(output)]) == 0  # fmt: skip
    finally:
        os.umask(previous)
    assert _mode(output) == 0o600
