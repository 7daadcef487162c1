"""Issue 12, points 2, 5 and 7: the ledger in PostgreSQL, and ledgers of database releases.

Against the session's real server: several processes releasing at once into one
ledger schema get the numbers 1..n, none lost or duplicated; a release killed
(``kill -9``) while its table is being created leaves no table and no entry,
in the ledger's own database (one transaction) and in another store (recorded
first, settled by the server's verdict on the transaction); a release to files
recorded in PostgreSQL is completed by any later write in its folder;
passwords reach no ledger row, report or message.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import psycopg
import pytest
from tests.patients import CONFIG, ROLES, patients, write_patients
from tests.postgres_server import PASSWORD, run_sql

from kanonym.config import AnonymizationConfig, SuppressionLimit
from kanonym.errors import InputError
from kanonym.io.write import recover
from kanonym.release.recorded import Ledger

Loader = Callable[[pl.DataFrame, str], str]


@pytest.fixture
def source(postgres_url: str, load_postgres_table: Loader) -> str:
    """60 patients as a table of the test's schema."""
    return f"{postgres_url}?table={load_postgres_table(patients(60), 'patients')}"


def _release(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kanonym", "release", *args, *ROLES],
        stderr=subprocess.PIPE,
        text=True,
    )


def _count(url: str, relation: str) -> int:
    return int(run_sql(url, f"SELECT count(*) FROM {relation}")[0][0])


def test_concurrent_releases_get_every_number_once(
    postgres_ledger: str, source: str, postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    """Three releases of a database table (to tables) and two of a file, all at once."""
    csv = write_patients(tmp_path, rows=60)
    processes = [
        _release(source, "--ledger", postgres_ledger, "--seed", str(seed), "--output",
                 f"{postgres_url}?table={postgres_schema}.r{seed}")
        for seed in (1, 2, 3)
    ] + [
        _release(str(csv), "--ledger", postgres_ledger, "--seed", str(seed), "--output",
                 str(tmp_path / f"f{seed}.csv"))
        for seed in (1, 2)
    ]  # fmt: skip
    codes = [p.wait() for p in processes]
    errors = [p.stderr.read() if p.stderr else "" for p in processes]
    assert codes == [0] * 5, errors
    entries = Ledger(postgres_ledger, create=False).entries()
    assert [e.id for e in entries] == [1, 2, 3, 4, 5]
    tables = [e for e in entries if e.source.startswith("postgresql://")]
    files = [e for e in entries if not e.source.startswith("postgresql://")]
    assert sorted(e.seed for e in tables) == [1, 2, 3] and sorted(e.seed for e in files) == [1, 2]
    # Each release of a source was planned after the earlier ones: complementary releases.
    assert sorted(bool(e.complementary) for e in tables) == [False, True, True]
    assert sorted(bool(e.complementary) for e in files) == [False, True]
    for entry in tables:
        assert _count(postgres_url, entry.output.rsplit("table=", 1)[1]) == entry.released_rows
    assert all(Path(e.output).exists() for e in files)


def _wait_for_lock(url: str, process: subprocess.Popen[str], statement: str) -> int:
    """The backend of ``process`` once it waits for a lock in ``statement``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        waiting = run_sql(
            url,
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s",
            [f"{statement}%"],
        )
        if waiting:
            return int(waiting[0][0])
    raise AssertionError(f"the release never waited in {statement}: {process.poll()}")


def _killed_while_publishing(url: str, target: str, args: list[str]) -> None:
    """Run a release that replaces ``target``, held locked by the test, and kill -9 it while
    its transaction waits; return once the server has ended that transaction."""
    holder = psycopg.connect(url)
    holder.execute(f"LOCK TABLE {target} IN ACCESS EXCLUSIVE MODE")
    process = _release(*args)
    try:
        backend = _wait_for_lock(url, process, "DROP TABLE")
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        holder.rollback()
        holder.close()
    deadline = time.monotonic() + 30
    while run_sql(url, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", [backend]):
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_a_release_killed_in_its_transaction_leaves_no_table_and_no_entry(
    postgres_ledger: str, source: str, postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    """The ledger in the table's database: the record and the table commit together."""
    ledger = Ledger(postgres_ledger)
    ledger.release(source, CONFIG, output=tmp_path / "first.csv")
    target = f"{postgres_schema}.kept"
    run_sql(postgres_url, f"CREATE TABLE {target} (old text)")
    args = [source, "--ledger", postgres_ledger, "--seed", "2", "--replace", "--report",
            str(tmp_path / "r.json"), "--output", f"{postgres_url}?table={target}"]  # fmt: skip
    _killed_while_publishing(postgres_url, target, args)
    assert run_sql(postgres_url, f"SELECT attname FROM pg_attribute WHERE attrelid = "
                   f"'{target}'::regclass AND attnum > 0") == [("old",)]  # fmt: skip
    schema = ledger.database.location.schema  # type: ignore[attr-defined]
    assert _count(postgres_url, f"{schema}.releases") == 1
    assert [e.id for e in Ledger(postgres_ledger).entries()] == [1]
    # The report was only prepared; the next write in its folder removes it.
    recover(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.csv"]
    # The number was not used up: the next release is 2.
    made = Ledger(postgres_ledger).release(
        source, dataclasses.replace(CONFIG, seed=2), output=f"{postgres_url}?table={target}",
        replace=True,
    )  # fmt: skip
    assert made.entry.id == 2 and _count(postgres_url, target) == made.entry.released_rows


def test_a_table_of_another_store_is_kept_only_if_it_committed(
    source: str, postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    """An SQLite ledger and a table output: recorded first, settled by the server's verdict."""
    path = tmp_path / "l.sqlite"
    Ledger(path).release(source, CONFIG, output=tmp_path / "first.csv")
    target = f"{postgres_schema}.other"
    run_sql(postgres_url, f"CREATE TABLE {target} (old text)")
    args = [source, "--ledger", str(path), "--seed", "2", "--replace",
            "--output", f"{postgres_url}?table={target}"]  # fmt: skip
    _killed_while_publishing(postgres_url, target, args)
    with sqlite3.connect(path) as connection:
        # Recorded before the table's commit, which never came: not listed ...
        assert connection.execute("SELECT count(*) FROM pending_tables").fetchone()[0] == 1
    assert [e.id for e in Ledger(path, create=False).entries()] == [1]
    # ... and removed by the ledger's next use, once the server says it aborted.
    assert [e.id for e in Ledger(path).entries()] == [1]
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT count(*) FROM releases").fetchone()[0] == 1
    assert _count(postgres_url, target) == 0
    # Killed right after the table committed: the record is kept.
    child = (
        "import os, sys\n"
        "from kanonym.ledger import postgres\n"
        "publish = postgres.TableOutput.publish\n"
        "def publish_then_die(self):\n"
        "    publish(self)\n"
        "    os._exit(9)\n"
        "postgres.TableOutput.publish = publish_then_die\n"
        "from kanonym.cli.main import run\n"
        "sys.argv = ['kanonym', 'release', *sys.argv[1:]]\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", child, *args, *ROLES], check=False)
    assert done.returncode == 9
    assert [e.id for e in Ledger(path, create=False).entries()] == [1]
    entries = Ledger(path).entries()
    assert [e.id for e in entries] == [1, 2] and entries[1].seed == 2
    assert _count(postgres_url, target) == entries[1].released_rows


def test_release_files_recorded_in_postgresql_are_completed_by_the_next_write(
    postgres_ledger: str, tmp_path: Path
) -> None:
    """Killed between the ledger's commit and the renames: a plain write in the folder asks
    the server, finds the release recorded, and puts its files in place."""
    csv = write_patients(tmp_path, rows=60)
    child = (
        "import os, sys\n"
        "import kanonym.ledger.storage as storage\n"
        "commit = storage._commit\n"
        "def commit_then_die(session):\n"
        "    commit(session)\n"
        "    os._exit(9)\n"
        "storage._commit = commit_then_die\n"
        "from kanonym.cli.main import run\n"
        "sys.argv = ['kanonym', 'release', *sys.argv[1:]]\n"
        "run()\n"
    )
    args = [str(csv), "--ledger", postgres_ledger, "--seed", "1", "--output",
            str(tmp_path / "out.csv"), "--report", str(tmp_path / "out.json")]  # fmt: skip
    assert subprocess.run([sys.executable, "-c", child, *args, *ROLES]).returncode == 9
    assert not (tmp_path / "out.csv").exists()
    recover(tmp_path)  # what any later kanonym write in the folder does first
    assert (tmp_path / "out.csv").exists() and (tmp_path / "out.json").exists()
    entries = Ledger(postgres_ledger).entries()
    assert [e.id for e in entries] == [1]
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["ledger"]["release_id"] == 1
    # Killed before the ledger's commit: the same write undoes the files.
    storage_kill = child.replace("    commit(session)\n", "")
    args[args.index("--seed") + 1] = "2"
    assert subprocess.run([sys.executable, "-c", storage_kill, *args, *ROLES]).returncode == 9
    recover(tmp_path)
    assert json.loads((tmp_path / "out.json").read_text())["seed"] == 1
    assert [e.id for e in Ledger(postgres_ledger).entries()] == [1]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_passwords_reach_no_ledger_row_report_or_message(
    postgres_ledger: str,
    source: str,
    postgres_url: str,
    postgres_schema: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def with_password(url: str) -> str:
        return url.replace("//kanonym@", f"//kanonym:{PASSWORD}@", 1)

    from kanonym.cli import main

    report = tmp_path / "r.json"
    roles = [r for r in ROLES if r != "--quiet"]
    for number, ledger in enumerate((postgres_ledger, str(tmp_path / "l.sqlite"))):
        target = f"{postgres_url}?table={postgres_schema}.t{number}"
        args = ["release", with_password(source), "--ledger", with_password(ledger),
                "--key", "ssn", "--seed", str(number + 1), "--output", with_password(target),
                "--report", str(report), *roles]  # fmt: skip
        assert main(args) == 0
        printed = capsys.readouterr()
        assert "recorded as release 1" in printed.out
        assert PASSWORD not in printed.out + printed.err and PASSWORD not in report.read_text()
    schema = f"{postgres_schema}_ledger"
    stored: list[Any] = []
    for (table,) in run_sql(postgres_url, "SELECT tablename FROM pg_tables WHERE schemaname = %s",
                            [schema]):  # fmt: skip
        stored += [
            v for row in run_sql(postgres_url, f"SELECT * FROM {schema}.{table}") for v in row
        ]
    with sqlite3.connect(tmp_path / "l.sqlite") as connection:
        names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        for (table,) in names.fetchall():
            stored += [v for row in connection.execute(f"SELECT * FROM {table}") for v in row]
    assert len(stored) > 100
    for value in stored:
        data = value if isinstance(value, bytes) else str(value).encode()
        assert PASSWORD.encode() not in data
    # A wrong password on the ledger: one line, the password not shown.
    wrong = postgres_ledger.replace("//kanonym@", "//kanonym:wr0ng-pw@", 1)
    assert main(["ledger", "list", wrong]) == 2
    err = capsys.readouterr().err
    assert "password authentication failed" in err and "wr0ng-pw" not in err
    assert err.count("\n") == 1


def test_what_is_not_a_postgresql_ledger(
    postgres_url: str, postgres_schema: str, postgres_ledger: str, load_postgres_table: Loader
) -> None:
    with pytest.raises(InputError, match=r"ledger not found"):
        Ledger(postgres_ledger, create=False)
    with pytest.raises(InputError, match=r"a ledger is a schema, not a table"):
        Ledger(f"{postgres_url}?table={postgres_schema}.x")
    load_postgres_table(pl.DataFrame({"a": ["1"]}), "other")
    with pytest.raises(InputError, match=r"holds tables, but not a kanonym ledger"):
        Ledger(f"{postgres_url}?schema={postgres_schema}")
    ledger = Ledger(postgres_ledger)
    assert ledger.entries() == () and not ledger.database.exists()
    ledger.record_keys(pl.Series(["a"]))  # creates it
    schema = ledger.database.location.schema  # type: ignore[attr-defined]
    run_sql(postgres_url, f"UPDATE {schema}.meta SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(InputError, match=r"schema version 99 is newer"):
        Ledger(postgres_ledger)
    with pytest.raises(InputError, match=r"cannot connect"):
        Ledger("postgresql://kanonym@127.0.0.1:1/kanonym")


def test_a_temporal_release_of_a_database_table(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader, tmp_path: Path
) -> None:
    """Seed 000's grown table, in the database, based on a release that blanked cells."""
    from tests import sweeney2002 as sweeney

    hierarchies = sweeney.write_hierarchies(tmp_path)
    config = AnonymizationConfig(
        quasi_identifiers=hierarchies, k=2, insensitive=("Problem",),
        suppression=SuppressionLimit(rows=6),
    )  # fmt: skip
    ledger = Ledger(tmp_path / "l.sqlite")
    pt = sweeney.write_table(tmp_path, "pt.csv", sweeney.keyed(sweeney.PT))
    first = ledger.release(
        pt, dataclasses.replace(config, seed=1, technique="AG_CS"), output=tmp_path / "1.csv",
        key="id",
    )  # fmt: skip
    blanked = first.result.table.filter(pl.col("ZIP") == "*").get_column("Problem").to_list()
    partners = [r for r in sweeney.PT if r[4] in blanked for _ in range(2)]
    grown = sweeney.keyed(sweeney.PT + [(*r[:4], f"new {i}") for i, r in enumerate(partners)])
    url = f"{postgres_url}?table={load_postgres_table(grown, 'grown')}"
    table = f"{postgres_url}?table={postgres_schema}.r2"
    # The table is published as the engine built it: keeping release 1's blanks is refused.
    with pytest.raises(InputError, match=r"cell\(s\) keep what release 1 published"):
        ledger.release(url, dataclasses.replace(config, seed=2), output=table, based_on=1)
    assert run_sql(postgres_url, "SELECT to_regclass(%s)", [f"{postgres_schema}.r2"]) == [(None,)]
    second = ledger.release(
        url, dataclasses.replace(config, seed=2), output=tmp_path / "2.csv", based_on=1
    )
    assert second.entry.source == url and second.entry.key == "id"
    kept = second.result.table.filter(
        pl.col("Problem").is_in(blanked) & (pl.col("Race") == "white")
    )
    assert kept.get_column("ZIP").to_list() == ["*", "*"]
    assert [e.id for e in ledger.entries()] == [1, 2]


def test_a_table_whose_commit_cannot_be_told_holds_back_the_next_record(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.release(write_patients(tmp_path, rows=60), CONFIG, output=tmp_path / "1.csv")
    with sqlite3.connect(tmp_path / "l.sqlite") as connection:
        connection.execute(
            "INSERT INTO pending_tables VALUES (1, 'postgresql://kanonym@127.0.0.1:1/x', '7')"
        )
    # Not listed while in doubt; opening the ledger does not fail on it ...
    assert Ledger(tmp_path / "l.sqlite").entries() == ()
    # ... but recording another release waits until the server can tell.
    with pytest.raises(InputError, match=r"release 1 was recorded while its table was being "
                       r"published, and whether that committed cannot be told now"):  # fmt: skip
        ledger.release(tmp_path / "patients.csv", dataclasses.replace(CONFIG, seed=2),
                       output=tmp_path / "2.csv")  # fmt: skip
    assert not (tmp_path / "2.csv").exists()
