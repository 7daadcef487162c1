"""The option names are typed: a type checker rejects a misspelt one, and the types
list exactly the names the library accepts at run time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from kanonym.metrics import METRICS
from kanonym.options import AlgorithmName, MetricName, PolicyName, TechniqueName
from kanonym.recoding import RECODINGS
from kanonym.search import ALGORITHMS, DEFAULT_ALGORITHM, DEFAULT_POLICY, POLICIES
from kanonym.technique import TECHNIQUES

CALLER = """\
import polars as pl

import kanonym

table = pl.DataFrame({{"zip": ["02138", "02139"]}})
kanonym.anonymize(table, quasi_identifiers={{"zip": "mask"}}, k=2, algorithm={algorithm!r})
kanonym.anonymize(table, quasi_identifiers={{"zip": "mask"}}, k=2,
                  models=[kanonym.DistinctLDiversity(attribute="zip", l=2)])
"""


def _mypy(tmp_path: Path, algorithm: str) -> subprocess.CompletedProcess[str]:
    caller = tmp_path / "caller.py"
    caller.write_text(CALLER.format(algorithm=algorithm))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(caller),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_mypy_rejects_a_misspelt_algorithm_and_accepts_the_right_one(tmp_path: Path) -> None:
    wrong = _mypy(tmp_path, "optimla")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert 'Argument "algorithm" to "anonymize" has incompatible type' in wrong.stdout
    assert "'optimla'" in wrong.stdout and "caller.py:6" in wrong.stdout
    right = _mypy(tmp_path, "optimal")
    assert right.returncode == 0, right.stdout + right.stderr


@pytest.mark.parametrize(
    ("alias", "names"),
    [
        (AlgorithmName, [*ALGORITHMS, *RECODINGS]),
        (MetricName, list(METRICS)),
        (PolicyName, list(POLICIES)),
        (TechniqueName, list(TECHNIQUES)),
    ],
)
def test_each_literal_lists_exactly_the_runtime_names(alias: object, names: list[str]) -> None:
    assert sorted(get_args(alias)) == sorted(names)


def test_defaults_are_among_the_literals() -> None:
    assert DEFAULT_ALGORITHM in get_args(AlgorithmName)
    assert DEFAULT_POLICY in get_args(PolicyName)
