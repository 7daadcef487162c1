"""Issue 13: per-source differential-privacy budgets in the ledger.

A release charging (epsilon, delta) is recorded only within what is left of
its source's budget (sequential composition: charges add up), checked before
the search and again in the transaction that records it; a refused release
writes nothing. The tests taking ``store`` run with the ledger in an SQLite
file and in a PostgreSQL schema (the session's server).
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.dp_charge import (
    DELTA,
    REFUSED,
    SEEDS,
    ZIPS,
    config,
    release_in_child,
    write_source,
)
from tests.postgres_server import run_sql

import kanonym
from kanonym.errors import BudgetExceededError, InputError
from kanonym.ledger import LEDGER_SCHEMA_VERSION, BudgetStatus, PrivacyCharge, privacy_charge
from kanonym.ledger.budget import TOLERANCE, charge_of, require_within, spend
from kanonym.ledger.database import SCHEMA, V4_SCHEMA
from kanonym.ledger.storage import LedgerStore
from kanonym.release import recorded
from kanonym.release.recorded import Ledger

EPSILONS = st.floats(min_value=1e-3, max_value=2.0)
DELTAS = st.sampled_from([0.0, 0.0, 1e-7, 1e-6, 5e-6])


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ledger's location: an SQLite file, then a schema of the session's PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "l.sqlite")
    ledger: str = request.getfixturevalue("postgres_ledger")
    return ledger


def _visible(folder: Path) -> list[str]:
    """What releases left in ``folder`` (temporaries included): all but the ledger, its lock
    and the folder of sources."""
    return sorted(p.name for p in folder.iterdir() if p.suffix not in (".sqlite", ".lock", ""))


def _sources(folder: Path) -> Path:
    """A folder for the sources, apart from the outputs."""
    (folder / "in").mkdir(exist_ok=True)
    return folder / "in"


def _no_search(*args: object, **kwargs: object) -> None:
    raise AssertionError("the search ran")


# The arithmetic.


def test_a_charge_is_a_privacy_loss() -> None:
    assert PrivacyCharge(1, 0) == PrivacyCharge(1.0, 0.0)
    for epsilon, delta, match in (
        (0.0, 0.0, "epsilon must be a finite number > 0"),
        (-1.0, 0.0, "epsilon must be a finite number > 0"),
        (float("inf"), 0.0, "epsilon must be a finite number > 0"),
        (float("nan"), 0.0, "epsilon must be a finite number > 0"),
        (1.0, -1e-9, r"delta must be a number in \[0, 1\)"),
        (1.0, 1.0, r"delta must be a number in \[0, 1\)"),
        (1.0, float("nan"), r"delta must be a number in \[0, 1\)"),
        (True, 0.0, "epsilon must be a number, got True"),
    ):
        with pytest.raises(InputError, match=match):
            PrivacyCharge(epsilon, delta)


@dataclasses.dataclass(frozen=True)
class Charging:
    """Any model whose description says it is differentially private: the ledger reads its
    epsilon and delta (values kanonym.DifferentialPrivacy refuses itself are refused here)."""

    epsilon: float
    delta: float = 0.0
    name: str = "differential-privacy"

    def describe(self) -> dict[str, object]:
        return {"model": "differential-privacy", "epsilon": self.epsilon, "delta": self.delta}


def test_the_charge_of_a_release_is_the_sum_of_its_differentially_private_models() -> None:
    assert charge_of([]) is None
    assert charge_of([kanonym.DifferentialPrivacy(0.5, 1e-6)]) == PrivacyCharge(0.5, 1e-6)
    two = [kanonym.DifferentialPrivacy(0.1, 1e-7), kanonym.DifferentialPrivacy(0.2, 1e-6)]
    assert charge_of(two) == PrivacyCharge(0.30000000000000004, math.fsum([1e-7, 1e-6]))
    assert charge_of([Charging(0.1), Charging(0.2, 1e-6)]) == PrivacyCharge(
        0.30000000000000004, 1e-6
    )

    @dataclasses.dataclass(frozen=True)
    class Other:
        """Has an epsilon, but is not differential privacy (its describe says so)."""

        epsilon: float = 1.0
        delta: float = 0.0

        def describe(self) -> dict[str, object]:
            return {"model": "epsilon-something"}

    assert charge_of([Other()]) is None
    assert charge_of([Charging(1.0, name="x")]) == PrivacyCharge(1.0, 0.0)
    with pytest.raises(InputError, match="epsilon must be a finite number > 0"):
        charge_of([Charging(0.0)])
    # A model that says it is differentially private is never released without its charge.
    with pytest.raises(InputError, match="epsilon must be a number, got None"):
        charge_of([Charging(None)])  # type: ignore[arg-type]

    @dataclasses.dataclass(frozen=True)
    class Unpriced:
        """Differentially private by its description, without an epsilon."""

        delta: float = 0.0

        def describe(self) -> dict[str, object]:
            return {"model": "differential-privacy"}

    with pytest.raises(InputError, match="Unpriced: a differentially private model needs an"):
        charge_of([Unpriced()])


def test_a_result_is_charged_through_its_jobs_models(tmp_path: Path) -> None:
    source = write_source(tmp_path)
    made = Ledger(tmp_path / "l.sqlite").release(
        source, config(None, seed=1), output=tmp_path / "r.csv"
    )
    assert privacy_charge(made.result) is None
    charged = dataclasses.replace(made.result, config=config(0.25, 1e-6))
    assert privacy_charge(charged) == PrivacyCharge(0.25, 1e-6)


def test_what_is_left_and_the_one_line_refusal() -> None:
    status = spend(
        "/t.csv", (1.0, 1e-5), [(1, PrivacyCharge(0.75, 1e-6)), (3, PrivacyCharge(0.2, 0))]
    )
    assert status == BudgetStatus("/t.csv", 1.0, 1e-5, 0.95, 1e-6, (1, 3))
    assert status.epsilon_remaining == pytest.approx(0.05)
    assert status.delta_remaining == pytest.approx(9e-6)
    assert status.admits(PrivacyCharge(0.05, 9e-6)) and not status.admits(PrivacyCharge(0.06, 0))
    assert not status.admits(PrivacyCharge(0.01, 1e-5))
    with pytest.raises(BudgetExceededError) as refused:
        require_within(status, PrivacyCharge(0.06, 0))
    assert str(refused.value) == (
        "/t.csv: this release charges epsilon 0.06, delta 0 but the privacy budget has epsilon "
        "0.05, delta 9e-06 left (of epsilon 1, delta 1e-05; spent by releases 1, 3); nothing "
        "written or recorded"
    )
    assert "\n" not in str(refused.value)
    overspent = spend("/t.csv", (0.5, 0.0), [(1, PrivacyCharge(0.75, 0))])
    assert overspent.epsilon_remaining == 0.0  # a budget lowered by hand never shows below 0


def test_charges_that_fill_the_budget_exactly_are_admitted() -> None:
    tenth = PrivacyCharge(0.1, 0)
    assert 0.1 + 0.1 + 0.1 > 0.3  # in binary
    status = spend("/t.csv", (0.3, 0.0), [(1, tenth), (2, tenth)])
    assert status.admits(tenth) and status.epsilon_remaining == pytest.approx(0.1)
    assert not status.admits(PrivacyCharge(0.1 + 1e-9, 0))
    filled = spend("/t.csv", (0.3, 0.0), [(1, tenth), (2, tenth), (3, tenth)])
    assert filled.epsilon_spent > 0.3 and filled.epsilon_remaining == 0.0


@given(
    budget=st.tuples(st.floats(0.01, 5.0), st.sampled_from([0.0, 1e-6, 1e-5])),
    charges=st.lists(st.tuples(EPSILONS, DELTAS), max_size=30),
)
def test_sequential_composition_never_overspends(
    budget: tuple[float, float], charges: list[tuple[float, float]]
) -> None:
    """Charges admitted one by one never sum beyond the budget; a refused one would have."""
    admitted: list[tuple[int, PrivacyCharge]] = []
    for number, (epsilon, delta) in enumerate(charges, 1):
        charge = PrivacyCharge(epsilon, delta)
        status = spend("/t.csv", budget, admitted)
        exact = [
            sum((Fraction(c.epsilon) for _, c in admitted), Fraction(epsilon)),
            sum((Fraction(c.delta) for _, c in admitted), Fraction(delta)),
        ]
        if status.admits(charge):
            admitted.append((number, charge))
            for total, limit in zip(exact, budget, strict=True):
                assert total <= Fraction(limit) * (1 + Fraction(2 * TOLERANCE))
        else:
            assert any(t > Fraction(limit) for t, limit in zip(exact, budget, strict=True))


# Enforcement by the ledger.


@settings(max_examples=12, deadline=None)
@given(
    budget=st.tuples(st.floats(0.05, 1.0), st.sampled_from([1e-7, 1e-6])),
    charges=st.lists(
        st.tuples(st.floats(0.01, 0.6), st.sampled_from([DELTA, 1e-7, 1e-6, 5e-6])),
        min_size=1,
        max_size=5,
    ),
)
def test_the_ledger_records_a_charge_exactly_when_it_fits(
    budget: tuple[float, float], charges: list[tuple[float, float]]
) -> None:
    """The same property through the ledger: what it records never exceeds the budget, and it
    refuses exactly the charges that would, writing nothing for them."""
    folder = Path(tempfile.mkdtemp())
    try:
        source = write_source(_sources(folder))
        ledger = Ledger(folder / "l.sqlite")
        ledger.set_budget(source, epsilon=budget[0], delta=budget[1])
        recorded: list[PrivacyCharge] = []
        for number, (epsilon, delta) in enumerate(charges):
            charge = PrivacyCharge(epsilon, delta)
            fits = spend("", budget, list(enumerate(recorded))).admits(charge)
            output = folder / f"r{number}.csv"
            try:
                made = ledger.release(source, config(epsilon, delta), output=output)
            except BudgetExceededError:
                assert not fits and not output.exists()
                continue
            assert fits and made.entry.charge == charge
            recorded.append(charge)
        status = ledger.budget(source)
        assert status.releases == tuple(e.id for e in ledger.entries())
        assert len(status.releases) == len(recorded)
        assert status.epsilon_spent <= budget[0] * (1 + TOLERANCE)
        assert status.delta_spent <= budget[1] * (1 + TOLERANCE)
    finally:
        shutil.rmtree(folder)


def test_a_charged_release_is_recorded_and_listed(store: str, tmp_path: Path) -> None:
    source = write_source(_sources(tmp_path))
    ledger = Ledger(store)
    assert ledger.set_budget(source, epsilon=1.0, delta=1e-5) == BudgetStatus(
        str(source.resolve()), 1.0, 1e-5, 0.0, 0.0, ()
    )
    first = ledger.release(
        source, config(0.1, 1e-6), output=tmp_path / "r1.csv", report=tmp_path / "r1.json"
    )
    ledger.release(source, config(None), output=tmp_path / "r2.csv")  # charges nothing
    third = ledger.release(source, config(0.2, 1e-6), output=tmp_path / "r3.csv")
    last = ledger.release(source, config(0.7, 8e-6), output=tmp_path / "r4.csv")
    assert first.entry.charge == PrivacyCharge(0.1, 1e-6)
    report = json.loads((tmp_path / "r1.json").read_text())
    assert report["ledger"]["charge"] == {"epsilon": 0.1, "delta": 1e-6}
    assert any(
        m["model"] == "differential-privacy" and (m["epsilon"], m["delta"]) == (0.1, 1e-6)
        for m in first.entry.models
    )
    status = ledger.budget(source)
    assert status.releases == (1, 3, 4) and (third.entry.id, last.entry.id) == (3, 4)
    # 0.1 + 0.2 + 0.7 fills the budget exactly: stored as double precision in both stores.
    assert status.epsilon_spent == pytest.approx(1.0, rel=1e-15)
    assert status.delta_spent == pytest.approx(1e-5, rel=1e-15)
    assert [e.charge for e in Ledger(store, create=False).entries()] == [
        PrivacyCharge(0.1, 1e-6), None, PrivacyCharge(0.2, 1e-6), PrivacyCharge(0.7, 8e-6),
    ]  # fmt: skip
    assert ledger.entry(1).as_dict()["charge"] == {"epsilon": 0.1, "delta": 1e-6}
    assert ledger.budgets() == [status]
    # Anything more is refused, in epsilon or in delta alone.
    for charge in ((0.01, DELTA), (0.0001 + 0.01, 1e-7)):
        with pytest.raises(BudgetExceededError, match="epsilon 0, delta 0 left"):
            ledger.release(source, config(*charge), output=tmp_path / "r5.csv")
    assert not (tmp_path / "r5.csv").exists() and [e.id for e in ledger.entries()] == [1, 2, 3, 4]


def test_no_budget_refuses_before_the_search_and_creates_no_ledger(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source(_sources(tmp_path))
    ledger = Ledger(store)
    monkeypatch.setattr(recorded, "anonymize_table", _no_search)
    with pytest.raises(InputError) as refused:
        ledger.release(source, config(0.5), output=tmp_path / "r.csv")
    assert str(refused.value) == (
        f"no privacy budget set for {source.resolve()} in {ledger.name}, and this release is "
        f"differentially private: set one with `kanonym ledger budget {ledger.name} "
        f"{source.resolve()} ...` (Ledger.set_budget in Python); nothing written"
    )
    assert not ledger.database.exists() and _visible(tmp_path) == []
    # A budget of another source does not count.
    ledger.set_budget(tmp_path / "other.csv", epsilon=5, delta=0)
    with pytest.raises(InputError, match="no privacy budget set for"):
        ledger.release(source, config(0.5), output=tmp_path / "r.csv")
    assert ledger.entries() == () and _visible(tmp_path) == []


def test_exceeding_the_budget_refuses_before_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source(_sources(tmp_path))
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_budget(source, epsilon=0.5, delta=1e-6)
    ledger.release(source, config(0.4), output=tmp_path / "r1.csv")
    monkeypatch.setattr(recorded, "anonymize_table", _no_search)
    with pytest.raises(BudgetExceededError, match=r"epsilon 0\.1, delta 9\.99e-07 left"):
        ledger.release(source, config(0.2), output=tmp_path / "r2.csv")
    assert _visible(tmp_path) == ["r1.csv"]


def test_refused_at_recording_nothing_is_written(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check in the recording transaction alone (as when another process spent the budget
    after this release's check before the search): no file, no report, no record."""
    source = write_source(_sources(tmp_path))
    ledger = Ledger(store)
    ledger.set_budget(source, epsilon=1.0, delta=1e-6)
    monkeypatch.setattr(LedgerStore, "check_budget", lambda *args: None)
    ledger.release(source, config(0.6), output=tmp_path / "r1.csv")
    with pytest.raises(BudgetExceededError, match=r"epsilon 0\.4, delta 9\.99e-07 left"):
        ledger.release(source, config(0.5), output=tmp_path / "r2.csv", report=tmp_path / "r2.json")
    # A release without a budget set is refused there too.
    other = write_source(tmp_path / "in", "u.csv")
    with pytest.raises(InputError, match=f"no privacy budget set for {re.escape(str(other))}"):
        ledger.release(other, config(0.1), output=tmp_path / "r3.csv")
    assert _visible(tmp_path) == ["r1.csv"]  # no release, report or temporary
    assert [e.id for e in Ledger(store).entries()] == [1]
    assert ledger.budget(source).releases == (1,)


def test_a_refused_table_output_is_not_published(
    postgres_url: str,
    postgres_schema: str,
    postgres_ledger: str,
    load_postgres_table: Callable[[pl.DataFrame, str], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A differentially private release of a database table, its budget check before the
    search skipped: differential privacy is served in memory only (issue 13), so it is
    refused in one line before the search, and no table is published, in the ledger's own
    database and with the ledger in another store."""
    frame = pl.DataFrame({"name": [f"p{i}" for i in range(len(ZIPS))], "zip": list(ZIPS)})
    source = f"{postgres_url}?table={load_postgres_table(frame, 't')}"
    monkeypatch.setattr(LedgerStore, "check_budget", lambda *args: None)
    for number, where in enumerate((postgres_ledger, str(tmp_path / "l.sqlite"))):
        ledger = Ledger(where)
        ledger.set_budget(source, epsilon=0.3, delta=1e-6)
        target = f"{postgres_schema}.r{number}"
        with pytest.raises(InputError, match="served by the embedded engine only") as refused:
            ledger.release(source, config(0.5), output=f"{postgres_url}?table={target}")
        assert "\n" not in str(refused.value)
        assert run_sql(postgres_url, "SELECT to_regclass(%s)", [target]) == [(None,)]
        assert ledger.entries() == ()


def test_a_copy_spends_the_budget_of_what_it_copies(tmp_path: Path) -> None:
    """A source is its path or its content: a copy under another name needs a budget of its
    own, and its releases spend the original's budget too (and count in its spend)."""
    source = write_source(_sources(tmp_path))
    copy = tmp_path / "in" / "copy.csv"
    shutil.copy(source, copy)
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_budget(source, epsilon=1.0, delta=1e-6)
    ledger.release(source, config(0.6), output=tmp_path / "r1.csv")
    with pytest.raises(InputError, match=f"no privacy budget set for {re.escape(str(copy))}"):
        ledger.release(copy, config(0.1), output=tmp_path / "r2.csv")
    # Nothing was released under the copy's name yet: the ledger cannot know its content.
    assert ledger.set_budget(copy, epsilon=0.5, delta=1e-6).epsilon_spent == 0.0
    # Released, it is the original's content: release 1 spent the copy's budget too.
    with pytest.raises(
        BudgetExceededError, match=f"^{re.escape(str(copy))}: .*epsilon 0, delta 9.99e-07 left"
    ):
        ledger.release(copy, config(0.1), output=tmp_path / "r2.csv")
    ledger.set_budget(copy, epsilon=10.0, delta=1e-6)
    # The copy's own budget is generous now; the original's is not.
    with pytest.raises(
        BudgetExceededError,
        match=f"^{re.escape(str(source))}: .* epsilon 0.4, delta 9.99e-07 left",
    ):
        ledger.release(copy, config(0.5), output=tmp_path / "r2.csv")
    ledger.release(copy, config(0.4), output=tmp_path / "r2.csv")
    assert ledger.budget(source).releases == (1, 2) and ledger.budget(copy).releases == (1, 2)
    with pytest.raises(InputError, match=r"below what its releases spent \(epsilon 1"):
        ledger.set_budget(copy, epsilon=0.5, delta=1e-6)
    # The original grows (new content): its earlier content's releases still count.
    write_source(tmp_path / "in", zips=(*ZIPS, "02138", "02139"))
    with pytest.raises(BudgetExceededError, match=r"epsilon 0, delta 9\.98e-07 left"):
        ledger.release(source, config(0.01), output=tmp_path / "r3.csv")
    assert [s.source for s in ledger.budgets()] == sorted([str(source), str(copy)])
    assert _visible(tmp_path) == ["r1.csv", "r2.csv"]


def test_a_budget_is_raised_or_lowered_but_never_below_the_spend(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source(_sources(tmp_path))
    ledger = Ledger(store)
    with pytest.raises(InputError, match="no privacy budget set for"):
        ledger.budget(source)
    ledger.set_budget(source, epsilon=1.0, delta=1e-6)
    ledger.release(source, config(0.1), output=tmp_path / "r1.csv")
    ledger.release(source, config(0.2, 1e-7), output=tmp_path / "r2.csv")
    # Exactly what was spent, in floating point (0.1 + 0.2), is not below it.
    spent = ledger.budget(source).delta_spent
    assert spent == math.fsum([DELTA, 1e-7])
    assert ledger.set_budget(source, epsilon=0.3, delta=spent).epsilon_remaining == 0.0
    with pytest.raises(InputError, match=r"delta 0 is below what its releases spent"):
        ledger.set_budget(source, epsilon=5.0, delta=0.0)
    with pytest.raises(InputError, match=r"epsilon 0\.29, .* is below what"):
        ledger.set_budget(source, epsilon=0.29, delta=1e-6)
    assert ledger.budget(source).epsilon_budget == 0.3  # unchanged by the refusals
    raised = ledger.set_budget(source, epsilon=2.0, delta=1e-6)
    assert raised.epsilon_remaining == pytest.approx(1.7) and raised.releases == (1, 2)
    for epsilon, delta in ((0, 0), (float("inf"), 0), (1, 1), (1, -0.5)):
        with pytest.raises(InputError, match="privacy budget of"):
            ledger.set_budget(source, epsilon=epsilon, delta=delta)
    # A source is named as a release names it: a relative path from the working folder.
    monkeypatch.chdir(tmp_path)
    assert ledger.budget("in/t.csv") == ledger.budget(source)


def test_data_frames_share_one_budget(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.set_budget("<DataFrame>", epsilon=1.0, delta=1e-6)
    first = pl.DataFrame({"name": list("abcd"), "zip": list(ZIPS[:4])})
    other = pl.DataFrame({"name": list("efgh"), "zip": list(ZIPS[4:])[::-1]})
    ledger.release(first, config(0.7), output=tmp_path / "r1.csv")
    with pytest.raises(BudgetExceededError, match=r"^<DataFrame>: .*epsilon 0\.3"):
        ledger.release(other, config(0.5), output=tmp_path / "r2.csv")
    assert ledger.budget("<DataFrame>").releases == (1,)


# Schema version 4: a version 3 ledger is upgraded in place.


def _version_3_ledger(path: Path, like: Path) -> None:
    """A ledger file created with the version 3 schema (every statement of SCHEMA but those
    version 4 added), holding the records of the ledger ``like``."""
    with sqlite3.connect(like) as newer:
        application = newer.execute("PRAGMA application_id").fetchone()[0]
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in SCHEMA:
            if statement not in V4_SCHEMA:
                connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {application}")
        connection.execute("PRAGMA user_version = 3")
        connection.execute("ATTACH ? AS newer", (str(like),))
        tables = connection.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")
        for (table,) in tables.fetchall():
            columns = ", ".join(
                r[1] for r in connection.execute(f"PRAGMA main.table_info({table})")
            )
            connection.execute(f"INSERT INTO main.{table} SELECT {columns} FROM newer.{table}")
        connection.execute("DETACH newer")
    finally:
        connection.close()


def test_a_version_3_ledger_file_is_upgraded_in_place(tmp_path: Path) -> None:
    source = write_source(_sources(tmp_path))
    made = Ledger(tmp_path / "made.sqlite").release(
        source, config(None, seed=1), output=tmp_path / "r1.csv"
    )
    path = tmp_path / "l.sqlite"
    _version_3_ledger(path, tmp_path / "made.sqlite")
    with sqlite3.connect(path) as connection:
        columns = [r[1] for r in connection.execute("PRAGMA table_info(releases)")]
        assert "dp_epsilon" not in columns and connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'budgets'"
        ).fetchone() == (0,)
    # Read without being upgraded: the releases, no budget.
    read = Ledger(path, create=False)
    assert read.entries() == (made.entry,) and read.budgets() == []
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (3,)
    ledger = Ledger(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (LEDGER_SCHEMA_VERSION,)
        columns = [r[1] for r in connection.execute("PRAGMA table_info(releases)")]
        assert columns[-2:] == ["dp_epsilon", "dp_delta"]
    assert ledger.entries() == (made.entry,) and ledger.entry(1).charge is None
    ledger.set_budget(source, epsilon=1.0, delta=1e-6)
    second = ledger.release(source, config(0.25), output=tmp_path / "r2.csv")
    assert second.entry.id == 2 and ledger.budget(source).releases == (2,)
    assert ledger.budget(source).epsilon_spent == 0.25


def test_a_version_3_ledger_in_postgresql_is_upgraded_in_place(
    postgres_ledger: str, postgres_url: str, tmp_path: Path
) -> None:
    source = write_source(_sources(tmp_path))
    ledger = Ledger(postgres_ledger)
    made = ledger.release(source, config(None, seed=1), output=tmp_path / "r1.csv")
    schema = ledger.database.location.schema  # type: ignore[attr-defined]
    # What version 3 had: no budgets, no charges.
    run_sql(postgres_url, f"DROP TABLE {schema}.budgets")
    run_sql(
        postgres_url, f"ALTER TABLE {schema}.releases DROP COLUMN dp_epsilon, DROP COLUMN dp_delta"
    )
    run_sql(postgres_url, f"UPDATE {schema}.meta SET value = '3' WHERE name = 'schema_version'")
    read = Ledger(postgres_ledger, create=False)
    assert read.entries() == (made.entry,) and read.budgets() == []
    upgraded = Ledger(postgres_ledger)
    assert run_sql(
        postgres_url, f"SELECT value FROM {schema}.meta WHERE name = 'schema_version'"
    ) == [(str(LEDGER_SCHEMA_VERSION).encode(),)]
    types = dict(
        run_sql(
            postgres_url,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = 'releases'",
            [schema],
        )
    )
    assert types["dp_epsilon"] == types["dp_delta"] == "double precision"
    assert upgraded.entries() == (made.entry,)
    upgraded.set_budget(source, epsilon=1.0, delta=1e-6)
    upgraded.release(source, config(0.1), output=tmp_path / "r2.csv")
    assert upgraded.budget(source).releases == (2,)


# Concurrent releases never overspend.


def test_concurrent_releases_never_overspend(store: str, tmp_path: Path) -> None:
    """Six processes at once: three release a source that grew since its first release, three
    a copy of that first version under another name, each charging 0.3. Both kinds spend the
    source's budget (1.0, 0.1 spent), under two different source locks, so only the check
    in the recording transaction keeps them within it: exactly three are recorded."""
    source = write_source(_sources(tmp_path))
    copy = tmp_path / "in" / "copy.csv"
    shutil.copy(source, copy)
    ledger = Ledger(store)
    ledger.set_budget(source, epsilon=1.0, delta=1e-5)
    ledger.set_budget(copy, epsilon=10.0, delta=1e-5)
    # A seed none of the six takes (they take the last six): the cycle of config()'s seeds
    # depends on how many jobs the tests before this one made.
    ledger.release(source, config(0.1, seed=SEEDS[0]), output=tmp_path / "first.csv")
    write_source(tmp_path / "in", zips=(*ZIPS, "02141", "02142"))  # grown: a new content
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(6)
    processes = [
        context.Process(
            target=release_in_child,
            args=(
                store,
                str(path),
                str(tmp_path / f"r{number}.csv"),
                0.3,
                1e-6,
                start,
                SEEDS[-1 - number],
            ),
        )
        for number, path in enumerate([source] * 3 + [copy] * 3)
    ]
    for process in processes:
        process.start()
    codes: list[int] = []
    for process in processes:
        process.join(timeout=300)
        assert process.exitcode is not None, "a release never ended"
        codes.append(process.exitcode)
    assert sorted(codes) == [0, 0, 0, REFUSED, REFUSED, REFUSED], codes
    status = Ledger(store).budget(source)
    assert len(status.releases) == 4
    assert status.epsilon_spent <= 1.0 * (1 + TOLERANCE)
    assert status.delta_spent == pytest.approx(3e-6 + DELTA)
    entries = Ledger(store).entries()
    assert [e.id for e in entries] == [1, 2, 3, 4]
    written = {Path(e.output).name for e in entries}
    for number, code in enumerate(codes):
        assert (
            (tmp_path / f"r{number}.csv").exists() == (code == 0) == (f"r{number}.csv" in written)
        )
    assert _visible(tmp_path) == sorted(["first.csv", *written - {"first.csv"}])
