"""``kanonym ledger budget`` and differentially private ``kanonym release`` (issue 13).

Setting, listing and showing budgets; a release whose budget is exceeded exits
1, one without a budget exits 2, each with one line and nothing written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.dp_charge import DELTA, SEEDS, write_source

from kanonym.cli import main

RELEASE = ["release", "t.csv", "--ledger", "l.sqlite", "--qi", "zip=mask"]
RELEASE += ["--identifying", "name", "--k", "2", "--quiet"]
DP_RELEASE = [a for a in RELEASE if a not in ("--k", "2")]  # the model derives its k


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_source(tmp_path)
    return tmp_path


@pytest.fixture
def charged() -> Callable[[float, float], list[str]]:
    """``charged(epsilon, delta)``: the arguments of a differentially private ``kanonym
    release`` of t.csv charging (epsilon, delta), each with a seed of its own that draws a
    row (tests.dp_charge.SEEDS)."""
    seeds = iter(SEEDS)

    def charge(epsilon: float, delta: float) -> list[str]:
        model = f"differential-privacy:{epsilon!r}:{delta!r}"
        return [*DP_RELEASE, "--model", model, "--seed", str(next(seeds))]

    return charge


def _one_line(capsys: pytest.CaptureFixture[str], start: str, needle: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(start) and needle in err, err
    return err


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix != ".lock")


def test_budgets_are_set_listed_and_shown(
    folder: Path, charged: Callable[[float, float], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(folder / "t.csv")
    assert main(["ledger", "budget", "l.sqlite", "t.csv", "--epsilon", "1", "--delta", "1e-5"]) == 0
    assert capsys.readouterr().out == (
        f"budget set: {source}  epsilon 0 of 1 spent, 1 left  delta 0 of 1e-05 spent, "
        "1e-05 left  releases none\n"
    )
    release = [a for a in charged(0.25, 1e-6) if a != "--quiet"]
    assert main([*release, "--output", "r1.csv"]) == 0
    out = capsys.readouterr().out
    assert "recorded as release 1 in l.sqlite (seed " in out
    assert "; charged epsilon 0.25, delta 1e-06 to the privacy budget of its source" in out
    assert main(["ledger", "budget", "l.sqlite"]) == 0
    assert capsys.readouterr().out == (
        f"{source}  epsilon 0.25 of 1 spent, 0.75 left  delta 1e-06 of 1e-05 spent, "
        "9e-06 left  releases 1\n"
    )
    assert main(["ledger", "budget", "l.sqlite", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == [
        {
            "source": source,
            "epsilon_budget": 1.0,
            "delta_budget": 1e-5,
            "epsilon_spent": 0.25,
            "delta_spent": 1e-6,
            "epsilon_remaining": 0.75,
            "delta_remaining": listed[0]["delta_remaining"],
            "releases": [1],
        }
    ]
    assert listed[0]["delta_remaining"] == pytest.approx(9e-6)
    assert main(["ledger", "budget", "l.sqlite", "t.csv", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == listed[0]
    # Raised: what was spent stays spent.
    assert main(["ledger", "budget", "l.sqlite", source, "--epsilon", "2", "--delta", "1e-5"]) == 0
    assert "epsilon 0.25 of 2 spent, 1.75 left" in capsys.readouterr().out
    # The release lists show its charge.
    assert main(["ledger", "list", "l.sqlite"]) == 0
    assert "  epsilon=0.25 delta=1e-06" in capsys.readouterr().out
    assert main(["ledger", "list", "l.sqlite", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["charge"] == {"epsilon": 0.25, "delta": 1e-6}
    assert main(["ledger", "show", "l.sqlite", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["charge"] == {"epsilon": 0.25, "delta": 1e-6}


def test_a_ledger_without_budgets(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*RELEASE, "--output", "r1.csv"]) == 0  # not differentially private: no budget
    assert main(["ledger", "budget", "l.sqlite"]) == 0
    assert capsys.readouterr().out == "l.sqlite: no privacy budget set\n"
    assert main(["ledger", "budget", "l.sqlite", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["ledger", "list", "l.sqlite"]) == 0
    assert "epsilon" not in capsys.readouterr().out


def test_exceeding_the_budget_exits_1_and_writes_nothing(
    folder: Path, charged: Callable[[float, float], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    budget = ["ledger", "budget", "l.sqlite", "t.csv", "--epsilon", "0.5", "--delta", "1e-6"]
    assert main(budget) == 0
    assert main([*charged(0.4, DELTA), "--output", "r1.csv"]) == 0
    capsys.readouterr()  # its warnings: every drawn row of eight is suppressed
    assert main([*charged(0.2, DELTA), "--output", "r2.csv", "--report", "r2.json"]) == 1
    err = _one_line(capsys, "kanonym: privacy budget exceeded: ", "nothing written or recorded")
    assert (
        f"{folder / 't.csv'}: this release charges epsilon 0.2, delta 1e-09 but the privacy "
        "budget has epsilon 0.1, delta 9.99e-07 left (of epsilon 0.5, delta 1e-06; spent by "
        "release 1)" in err
    )
    assert _files(folder) == ["l.sqlite", "r1.csv", "t.csv"]
    assert main(["ledger", "list", "l.sqlite", "--json"]) == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out)] == [1]


def test_no_budget_and_bad_budgets_exit_2(
    folder: Path, charged: Callable[[float, float], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*charged(0.1, DELTA), "--output", "r1.csv"]) == 2
    _one_line(
        capsys,
        "kanonym: error: ",
        f"no privacy budget set for {folder / 't.csv'} in l.sqlite, and this release is "
        f"differentially private: set one with `kanonym ledger budget l.sqlite {folder / 't.csv'}",
    )
    assert _files(folder) == ["t.csv"]  # no release, no report, no ledger
    assert main(["ledger", "budget", "l.sqlite"]) == 2
    _one_line(capsys, "kanonym: error: ", "l.sqlite: ledger not found")
    for arguments, needle in (
        (["t.csv", "--epsilon", "1"], "a budget is set with SOURCE, --epsilon E and --delta D"),
        (["--epsilon", "1", "--delta", "0"], "a budget is set with SOURCE, --epsilon E"),
        (["t.csv", "--epsilon", "0", "--delta", "0"], "epsilon must be a finite number > 0"),
        (["t.csv", "--epsilon", "nan", "--delta", "0"], "epsilon must be a finite number > 0"),
        (["t.csv", "--epsilon", "1", "--delta", "1"], r"delta must be a number in [0, 1)"),
        (["t.csv", "--epsilon", "x", "--delta", "0"], "--epsilon: invalid float value: 'x'"),
    ):
        assert main(["ledger", "budget", "l.sqlite", *arguments]) == 2, arguments
        _one_line(capsys, "kanonym: error: ", needle)
    assert _files(folder) == ["t.csv"]
    assert main(["ledger", "budget", "l.sqlite", "t.csv", "--epsilon", "1", "--delta", "0"]) == 0
    # A budget of delta 0 admits no release of this model (its delta is above 0).
    assert main([*charged(0.1, DELTA), "--output", "r1.csv"]) == 1
    capsys.readouterr()
    budget = ["ledger", "budget", "l.sqlite", "t.csv", "--epsilon", "1", "--delta", "1e-6"]
    assert main(budget) == 0
    assert main([*charged(0.1, DELTA), "--output", "r1.csv"]) == 0
    capsys.readouterr()
    lowered = ["ledger", "budget", "l.sqlite", "t.csv", "--epsilon", "0.05", "--delta", "1e-6"]
    assert main(lowered) == 2
    _one_line(
        capsys,
        "kanonym: error: ",
        "a privacy budget of epsilon 0.05, delta 1e-06 is below what its releases spent "
        "(epsilon 0.1, delta 1e-09); the budget is unchanged",
    )
    assert main(["ledger", "budget", "l.sqlite", "other.csv"]) == 2
    _one_line(capsys, "kanonym: error: ", f"no privacy budget set for {folder / 'other.csv'}")
