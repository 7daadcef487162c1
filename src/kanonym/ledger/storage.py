"""The ledger's storage: what is recorded of a release, in which transaction, and recovery.

A ledger lives in one SQLite file (:mod:`kanonym.ledger.sqlite`) or in a
schema of a PostgreSQL database (:mod:`kanonym.ledger.postgres`), chosen by
the form of its name (a ``postgresql://`` URL); both hold the same tables
(:data:`~kanonym.ledger.database.SCHEMA`) and every decision below is made
here, once, for both. A release is computed and verified by the ordinary
pipeline, then written and recorded (:meth:`LedgerStore.write_and_record`) so
that it is at its destination only if the ledger records it:

* **files**: written beside their paths, then recorded in one transaction
  with their write journal, which is the commit point; the files are renamed
  into place after it, and a kill between the two is completed by the
  ledger's next use (:meth:`LedgerStore.recover`).
* **a table of the ledger's own database** (PostgreSQL): recorded in the
  transaction that creates the table, which commits both at once.
* **a table of another database**: recorded first, with the id of the
  transaction that will create the table (``pending_tables``), then the table
  is committed, then the record confirmed. Until confirmed the release is not
  listed; the ledger's next recorder asks that database whether the
  transaction committed (``pg_xact_status``) and keeps the record or removes
  it. The ledger's lock of recording (:meth:`LedgerDatabase.write_lock`) is
  held from choosing the release's number until it is confirmed, so the
  record removed is always the last one: numbers stay 1, 2, 3, ... with no gap.

Releases of one source are made one at a time (:meth:`LedgerStore.source_lock`),
so that each is planned against every earlier one (:mod:`kanonym.ledger.policy`).
A differentially private release is checked against its source's privacy
budget (:mod:`kanonym.ledger.budget`) before its search
(:meth:`LedgerStore.check_budget`) and again in the transaction that records
it, which one writer holds at a time: releases running side by side can never
spend more than the budget together.

Example (a ledger is created with its first record; until then it reads as empty):
    >>> import tempfile
    >>> store = LedgerStore(Path(tempfile.mkdtemp()) / "ledger.sqlite")
    >>> store.entries(), store.database.exists()
    ((), False)
    >>> hashed, sharing = store.record_keys(pl.Series(["a", "b"]))
    >>> hashed.height, sharing, store.database.exists()
    (2, set(), True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from kanonym.engine.postgres import is_postgres_url
from kanonym.errors import InputError, LedgerPendingError
from kanonym.hierarchy import Hierarchy
from kanonym.io import load
from kanonym.io.write import (
    finish,
    interrupts_held,
    prepare_write,
    recover,
)
from kanonym.ledger.budget import (
    BudgetStatus,
    PrivacyCharge,
    check_amounts,
    require_within,
    spend,
)
from kanonym.ledger.database import (
    LEDGER_SCHEMA_VERSION,
    RELEASE_TABLES,
    LedgerDatabase,
    Session,
)
from kanonym.ledger.fingerprints import KEY_HASH, hash_keys, row_fingerprints, table_fingerprint
from kanonym.ledger.policy import (
    DATAFRAME_SOURCE,
    ReleasePlan,
    budget_releases,
    budgets_spent,
    declared,
    link_releases,
    new_entry,
    resolve_hierarchies,
    same_source,
    source_name,
)
from kanonym.ledger.postgres import (
    PostgresDatabase,
    TableOutput,
    first_line,
    same_database,
    table_name,
    transaction_status,
    without_password,
)
from kanonym.ledger.records import HierarchyRecord, LedgerEntry, LedgerRelease
from kanonym.ledger.sqlite import SqliteDatabase
from kanonym.report import payloads as report_payloads

if TYPE_CHECKING:
    from kanonym.attacks.complementary import AuditResult
    from kanonym.result import Result

__all__ = ["LEDGER_SCHEMA_VERSION", "LedgerStore", "TableOutput"]

_CLASS = "__kanonym_class"


class LedgerStore:
    """A ledger: opened (created with its first record if absent and ``create``), checked,
    then read and written.

    ``path`` is an SQLite file, or a ``postgresql://USER@HOST:PORT/DB?schema=NAME`` URL
    (:mod:`kanonym.ledger.postgres`). :class:`kanonym.Ledger` adds the making of a
    release (:meth:`kanonym.Ledger.release`).

    Attributes:
        database: where the ledger lives (:class:`~kanonym.ledger.database.LedgerDatabase`).
        path: the ledger's file (None for a ledger in PostgreSQL).
        name: the ledger as messages name it (a URL without its password).

    Raises:
        InputError: the file is a directory, cannot be opened, is not an SQLite
            database, is a database of another application, or has a ledger
            schema newer than this kanonym's; the server cannot be reached, or
            the schema holds another application's tables; or (``create=False``)
            no ledger is there.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.database: LedgerDatabase = (
            PostgresDatabase(str(path), create=create)
            if is_postgres_url(path)
            else SqliteDatabase(Path(path), create=create)
        )
        self.path = self.database.file
        self.name = self.database.name
        self._read_only = not create
        if create:
            self.recover()

    def recover(self) -> list[int]:
        """Complete or undo what releases left when they were interrupted.

        A release to files is recorded (its transaction committed) before its
        files are renamed into place, with its write journal in
        ``pending_files``; a release killed between the two is completed here,
        on the ledger's next use, and interrupted writes of releases the
        ledger never recorded are undone in the folders of its releases. A
        release whose table another database was publishing when it was
        interrupted is kept if that committed and removed if not
        (:meth:`write_and_record`); when that database cannot tell now, it is
        left to the next release recorded. Returns the ids completed.
        """
        if self._read_only or not self.database.exists():
            return []
        with self.database.write_lock(wait=False) as held:
            if held:
                with contextlib.suppress(InputError):
                    self._settle_tables()
        with self.database.connect() as session:
            # Another machine's journals are its own to finish (a ledger in PostgreSQL).
            pending = session.execute(
                "SELECT release_id, journal FROM pending_files "
                "WHERE host IS NULL OR host = ? ORDER BY release_id",
                (socket.gethostname(),),
            ).fetchall()
            outputs = [r[0] for r in session.execute("SELECT output FROM releases").fetchall()]
        done = [int(i) for i, journal in pending if finish(Path(journal))]
        if done:
            with self.database.connect() as session:
                self.database.begin_write(session)
                for release_id in done:
                    session.execute("DELETE FROM pending_files WHERE release_id = ?", (release_id,))
                _commit(session)
        for folder in dict.fromkeys(Path(o).parent for o in outputs if not is_postgres_url(o)):
            recover(folder)
        return done

    def _settle_tables(self) -> None:
        """Settle every release recorded while its table was published in another database
        (:meth:`_settle_table`); called with the ledger's lock of recording held.

        Raises:
            InputError: that database cannot tell now whether a table committed.
        """
        if not self.database.exists():
            return
        with self.database.connect() as session:
            pending = session.execute(
                "SELECT release_id, destination, transaction_id FROM pending_tables "
                "ORDER BY release_id"
            ).fetchall()
        for release_id, destination, transaction in pending:
            self._settle_table(int(release_id), str(destination), str(transaction))

    def _settle_table(self, release_id: int, destination: str, transaction: str) -> bool:
        """Keep release ``release_id`` if the transaction publishing its table committed,
        remove every record of it if not; returns whether it is kept.

        Raises:
            InputError: the table's database cannot be reached or cannot tell.
        """
        try:
            status = transaction_status(destination, transaction)
        except InputError as error:
            status, reason = None, str(error)
        else:
            reason = f"transaction {transaction} is {status or 'too old to tell'}"
        if status not in ("committed", "aborted"):
            raise InputError(
                f"{self.name}: release {release_id} was recorded while its table was being "
                f"published, and whether that committed cannot be told now ({reason}); "
                "nothing written"
            )
        with self.database.connect() as session:
            self.database.begin_write(session)
            if status == "committed":
                session.execute("DELETE FROM pending_tables WHERE release_id = ?", (release_id,))
            else:
                for table in RELEASE_TABLES:
                    session.execute(f"DELETE FROM {table} WHERE release_id = ?", (release_id,))
                session.execute("DELETE FROM releases WHERE id = ?", (release_id,))
            _commit(session)
        return status == "committed"

    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every recorded release, oldest first."""
        if not self.database.exists():
            return ()
        with self.database.connect() as session:
            # A release whose table another database has not committed yet is not recorded yet.
            hidden = (
                " WHERE id NOT IN (SELECT release_id FROM pending_tables)"
                if self.database.has_table(session, "pending_tables")
                else ""
            )
            return self._read_entries(session, hidden)

    def _read_entries(
        self, session: Session, where: str = "", params: Sequence[object] = ()
    ) -> tuple[LedgerEntry, ...]:
        """The releases of the ``releases`` rows ``where`` selects (all of them, pending
        ones included, by default), oldest first."""
        cursor = session.execute(f"SELECT * FROM releases{where} ORDER BY id", params)
        names = [column[0] for column in cursor.description]
        rows = cursor.fetchall()
        return tuple(self._entry(dict(zip(names, row, strict=True))) for row in rows)

    def entry(self, release_id: int) -> LedgerEntry:
        """The release numbered ``release_id``; InputError if there is none."""
        for entry in self.entries():
            if entry.id == release_id:
                return entry
        raise InputError(f"{self.name}: no release {release_id} in the ledger")

    def published(self, release_id: int) -> pl.DataFrame:
        """What a keyed release published per record: ``key_hash`` and its quasi-identifiers.

        ``key_hash`` is the keyed BLAKE2b hash (RFC 7693, 32 bytes, keyed with
        the ledger's secret) of the record's key, so the ledger holds no key in
        clear; the other columns are the released quasi-identifier values.
        Records the release suppressed are absent. Empty for a release made
        without a key.
        """
        entry = self.entry(release_id)
        with self.database.connect() as session:
            rows = session.execute(
                "SELECT key_hash, qi_values FROM published JOIN published_classes "
                "USING (release_id, class) WHERE release_id = ? ORDER BY key_hash",
                (release_id,),
            ).fetchall()
        schema = pl.Struct(dict.fromkeys(entry.quasi_identifiers, pl.String))
        return (
            pl.DataFrame(
                {KEY_HASH: [r[0] for r in rows], "values": [r[1] for r in rows]},
                schema={KEY_HASH: pl.Binary, "values": pl.String},
            )
            .with_columns(pl.col("values").str.json_decode(schema))
            .unnest("values")
        )

    def release_table(self, release_id: int) -> pl.DataFrame:
        """The table release ``release_id`` published, as the ledger recorded it.

        Releases recorded by a version 1 ledger are read back from their output
        file, which must still be the release (same content fingerprint).

        Raises:
            InputError: no such release, or (version 1) its file is gone or changed.
        """
        entry = self.entry(release_id)
        with self.database.connect() as session:
            found = None
            if self.database.has_table(session, "release_content"):
                found = session.execute(
                    "SELECT release_table FROM release_content WHERE release_id = ?",
                    (release_id,),
                ).fetchone()
        if found is not None:
            return pl.read_parquet(io.BytesIO(found[0]))
        try:
            frame = load(entry.output).frame
        except InputError as error:
            raise InputError(
                f"release {release_id} (recorded before the ledger kept release tables) "
                f"cannot be read back: {error}"
            ) from None
        if table_fingerprint(frame) != entry.release_sha256:
            raise InputError(
                f"{entry.output}: no longer the file release {release_id} wrote (its content "
                "fingerprint differs), and the ledger predates keeping release tables"
            )
        return frame

    def release_hierarchies(self, release_id: int) -> dict[str, Hierarchy]:
        """The hierarchies release ``release_id`` resolved, per quasi-identifier.

        Empty for a release recorded by a version 1 ledger, which kept only
        each hierarchy's spec (:attr:`LedgerEntry.quasi_identifiers`).
        """
        entry = self.entry(release_id)
        with self.database.connect() as session:
            found = None
            if self.database.has_table(session, "release_content"):
                found = session.execute(
                    "SELECT hierarchies FROM release_content WHERE release_id = ?", (release_id,)
                ).fetchone()
        if found is None:
            return {}
        levels = json.loads(found[0])
        return {
            name: Hierarchy(
                name=record.source,
                levels=tuple(tuple(level) for level in levels[name]),
            )
            for name, record in entry.quasi_identifiers.items()
        }

    def audit(self, release_ids: Sequence[int], *, k: int | None = None) -> AuditResult:
        """Link recorded releases as an attacker would and check k (:func:`kanonym.audit`).

        The releases' tables and hierarchies come from the ledger, so nothing
        needs to be given again: the quasi-identifier is every column any of
        them generalized, each with the hierarchies the releases used; they
        are joined on the columns they share that every one of them published
        exactly. ``k`` defaults to the largest k any of them was made with.
        :func:`~kanonym.ledger.policy.check_links` runs this check before a
        release is recorded.

        Raises:
            InputError: fewer than two releases, an unknown release, or
                releases that share no column they all publish exactly (they
                cannot be linked record by record).
        """
        if len(release_ids) < 2:
            raise InputError(f"an audit links at least two releases, got {len(release_ids)}")
        entries = [self.entry(i) for i in release_ids]
        tables = [self.release_table(e.id) for e in entries]
        hierarchies = [
            resolve_hierarchies(e, self.release_hierarchies(e.id), tables) for e in entries
        ]
        strictest = max(e.k for e in entries) if k is None else k
        result = link_releases(
            tables,
            [f"release {e.id}" for e in entries],
            hierarchies,
            strictest,
            declared=declared(entries),
        )
        if result is None:
            raise InputError(
                f"releases {', '.join(str(i) for i in release_ids)} share no column that all of "
                "them publish exactly: they cannot be linked record by record"
            )
        return result

    def _entry(self, row: Mapping[str, object]) -> LedgerEntry:
        try:
            hierarchies = json.loads(str(row["hierarchies"]))
            return LedgerEntry(
                id=int(str(row["id"])),
                created=str(row["created"]),
                kanonym_version=str(row["kanonym_version"]),
                source=str(row["source"]),
                source_sha256=str(row["source_sha256"]),
                source_rows=int(str(row["source_rows"])),
                # The quasi-identifiers' order is the list's; their records, the hierarchies'.
                quasi_identifiers={
                    name: HierarchyRecord(**hierarchies[name])
                    for name in json.loads(str(row["quasi_identifiers"]))
                },
                models=tuple(json.loads(str(row["models"]))),
                transformation=_json_or_none(row["transformation"]),
                recoding=_json_or_none(row["recoding"]),
                seed=int(str(row["seed"])),
                released_columns=tuple(json.loads(str(row["released_columns"]))),
                released_rows=int(str(row["released_rows"])),
                release_sha256=str(row["release_sha256"]),
                key=None if row["key_column"] is None else str(row["key_column"]),
                based_on=None if row["based_on"] is None else int(str(row["based_on"])),
                replay_of=None if row["replay_of"] is None else int(str(row["replay_of"])),
                complementary=tuple(json.loads(str(row["complementary"]))),
                output=str(row["output"]),
                report=None if row["report"] is None else str(row["report"]),
                # A ledger older than version 4, read without being upgraded, has no charges.
                charge=None
                if row.get("dp_epsilon") is None
                else PrivacyCharge(float(str(row["dp_epsilon"])), float(str(row["dp_delta"]))),
            )
        except (KeyError, ValueError, TypeError, AttributeError) as error:
            raise InputError(f"{self.name}: release {row.get('id')} is damaged ({error})") from None

    def _secret(self, session: Session) -> bytes:
        found = session.execute("SELECT value FROM meta WHERE name = 'key_secret'").fetchone()
        if found is None or not isinstance(found[0], bytes):
            raise InputError(f"{self.name}: damaged kanonym ledger (no key secret)")
        return found[0]

    def record_keys(self, keys: pl.Series) -> tuple[pl.DataFrame, set[int]]:
        """Each key with its hash (:func:`~kanonym.ledger.fingerprints.hash_keys`), and the
        recorded releases that published one of these records.

        Hashing needs the ledger's secret, so it creates the ledger if absent.
        """
        with self.database.connect() as session:
            hashed = hash_keys(self._secret(session), keys)
            # One read transaction (a statement each would be many times slower).
            session.execute("BEGIN")
            session.execute("CREATE TEMP TABLE candidate (key_hash BLOB PRIMARY KEY)")
            session.insert(
                "candidate", [(h,) for h in hashed.get_column(KEY_HASH).unique().to_list()]
            )
            sharing = session.execute(
                "SELECT DISTINCT release_id FROM published JOIN candidate USING (key_hash)"
            ).fetchall()
            session.execute("ROLLBACK")
        return hashed, {int(row[0]) for row in sharing}

    def set_budget(self, source: str | Path, *, epsilon: float, delta: float) -> BudgetStatus:
        """Set the differential-privacy budget of ``source``, or change it; returns its status.

        ``source`` is named as the ledger records a release's source
        (:func:`~kanonym.ledger.policy.source_name`: a file's absolute path, a
        database table's URL without password; ``<DataFrame>`` is the one budget
        of every data frame). Every later release of it that charges a budget
        (:mod:`kanonym.ledger.budget`) must fit in what is left. The budget may
        be raised, or lowered down to what the recorded releases of the source
        spent (:func:`~kanonym.ledger.policy.budget_releases`), never below. The
        ledger is created if absent. Example: ``ledger.set_budget("t.csv",
        epsilon=1.0, delta=1e-5)``.

        Raises:
            InputError: ``epsilon`` or ``delta`` is not a privacy loss (finite,
                epsilon > 0, 0 <= delta < 1), or is below what was spent.
        """
        name = _budget_name(source)
        check_amounts(epsilon, delta, f"privacy budget of {name}")
        epsilon, delta = float(epsilon), float(delta)
        with self.database.connect() as session:
            # One writer at a time, as when a release is recorded: the spend read here is
            # the one the new budget is set against.
            self.database.begin_write(session)
            try:
                status = spend(
                    name, (epsilon, delta), _charges(self._read_entries(session), name, None)
                )
                if not status.covers_spent(epsilon, delta):
                    raise InputError(
                        f"{name}: a privacy budget of epsilon {epsilon:g}, delta {delta:g} is "
                        f"below what its releases spent (epsilon {status.epsilon_spent:g}, "
                        f"delta {status.delta_spent:g}); the budget is unchanged"
                    )
                session.execute(
                    "INSERT INTO budgets VALUES (?, ?, ?, ?) ON CONFLICT (source) DO UPDATE "
                    "SET epsilon = excluded.epsilon, delta = excluded.delta, "
                    "set_at = excluded.set_at",
                    (name, epsilon, delta, datetime.now(UTC).isoformat(timespec="seconds")),
                )
                _commit(session)
            except BaseException:
                with contextlib.suppress(*self.database.errors):
                    session.execute("ROLLBACK")
                raise
        return status

    def budget(self, source: str | Path) -> BudgetStatus:
        """The privacy budget of ``source`` (named as for :meth:`set_budget`), what its
        recorded releases spent and which ones.

        Raises:
            InputError: no budget is set for ``source``.
        """
        name = _budget_name(source)
        for status in self.budgets():
            if status.source == name:
                return status
        raise InputError(f"no privacy budget set for {name} in {self.name}")

    def budgets(self) -> list[BudgetStatus]:
        """Every source with a privacy budget, by name: its budget, spend and releases.

        A release recorded while its table was being published in another
        database counts until it is settled (:meth:`recover`)."""
        if not self.database.exists():
            return []
        with self.database.connect() as session:
            limits = self._limits(session)
            entries = self._read_entries(session) if limits else ()
        return [
            spend(name, limit, _charges(entries, name, None))
            for name, limit in sorted(limits.items())
        ]

    def check_budget(self, source: str, fingerprint: str, charge: PrivacyCharge) -> None:
        """Refuse a release of ``source`` (content ``fingerprint``) charging ``charge`` that
        its budget, or the budget of another source it spends
        (:func:`~kanonym.ledger.policy.budgets_spent`), does not admit; checked before a
        release's search, and again when it is recorded.

        Raises:
            InputError: no budget is set for ``source``.
            BudgetExceededError: spent plus ``charge`` exceeds a budget.
        """
        if not self.database.exists():
            raise InputError(self._no_budget(source))
        with self.database.connect() as session:
            self._within_budgets(session, source, fingerprint, charge)

    def _within_budgets(
        self, session: Session, source: str, fingerprint: str, charge: PrivacyCharge
    ) -> None:
        """:meth:`check_budget` on what ``session`` reads (every release row, pending ones
        included: they may still be kept)."""
        limits = self._limits(session)
        if source not in limits:
            raise InputError(self._no_budget(source))
        entries = self._read_entries(session)
        for name in budgets_spent(entries, limits, source, fingerprint):
            require_within(spend(name, limits[name], _charges(entries, name, fingerprint)), charge)

    def _limits(self, session: Session) -> dict[str, tuple[float, float]]:
        """Each source's budget (epsilon, delta); none in a ledger older than version 4."""
        if not self.database.has_table(session, "budgets"):
            return {}
        rows = session.execute("SELECT source, epsilon, delta FROM budgets").fetchall()
        return {str(s): (float(e), float(d)) for s, e, d in rows}

    def _no_budget(self, source: str) -> str:
        """Why a differentially private release of ``source`` is refused without a budget."""
        return (
            f"no privacy budget set for {source} in {self.name}, and this release is "
            f"differentially private: set one with `kanonym ledger budget {self.name} "
            f"{source} ...` (Ledger.set_budget in Python); nothing written"
        )

    def source_lock(self, names: Sequence[str]) -> contextlib.AbstractContextManager[None]:
        """Hold the ledger's lock of each source name (its path, its fingerprint), waiting:
        releases of one source wait for each other, releases of other sources do not
        (:meth:`LedgerDatabase.source_lock`)."""
        return self.database.source_lock(names)

    def write_and_record(
        self,
        plan: ReleasePlan,
        result: Result,
        published: pl.DataFrame | None,
        *,
        output: Path | TableOutput,
        report: Path | None,
        report_html: Path | None,
        kept_cells: int,
        source: str,
        fingerprint: str,
        release_sha256: str,
        key_hashes: pl.DataFrame | None,
    ) -> LedgerRelease:
        """Write the release (files, or a database table) and its reports, and record it.

        Files are written beside their destinations first; the ledger's
        transaction, which also records their write journal, is their commit
        point (:mod:`kanonym.io.write`): a failure or kill before it leaves
        every destination untouched and the release unrecorded; a kill after
        it is completed by the ledger's next use (:meth:`recover`). A table
        output is published as the module docstring says: in the ledger's
        transaction when it is in the ledger's database, else recorded first
        and confirmed once committed (its reports then put in place after
        that). Nothing that existed before is ever removed.

        Releases of other sources recorded meanwhile only move this one's
        number: its files are made again with the next free number. A release
        of the same source recorded meanwhile (one sharing record keys; the
        source lock keeps out the others) refuses this one, whose policies did
        not see it.
        """
        table = output if isinstance(output, TableOutput) else None
        # The ledger records a table by its URL without a password, a file by its path.
        shown: str | Path = output.destination if isinstance(output, TableOutput) else output
        recorded = (
            table_name(output.destination)
            if isinstance(output, TableOutput)
            else str(output.resolve())
        )
        # The ledger's row in pending_files commits the files, unless the release is a
        # table of another database: its reports then go in place once that committed.
        decided = table is None or self._records_with(table) is not None
        number = plan.last_id + 1
        with self.database.write_lock():
            self._settle_tables()
            while True:
                entry = new_entry(
                    number,
                    plan,
                    result,
                    source=source,
                    fingerprint=fingerprint,
                    release_sha256=release_sha256,
                    output=recorded,
                    report=report,
                )
                payloads = report_payloads(
                    result,
                    shown,
                    report=report,
                    report_html=report_html,
                    report_extra={"ledger": self._report_section(entry, kept_cells)},
                    published=table is not None,
                )
                for folder in dict.fromkeys(path.parent for path, _ in payloads):
                    recover(folder)
                prepared = (
                    prepare_write(
                        payloads, decided_by=self.database.decided_by if decided else None
                    )
                    if payloads
                    else None
                )
                # Ctrl-C waits from the transaction until the files are in place: a release
                # is then either not recorded (and not written) or recorded and written.
                with interrupts_held():
                    try:
                        moved = self._record(
                            entry,
                            result,
                            published,
                            prepared.journal if prepared is not None and decided else None,
                            since=plan.last_id,
                            of_source=lambda e, c: (
                                same_source(e, source, fingerprint)
                                or _shares_keys(c, e.id, key_hashes)
                            ),
                            table=table,
                        )
                    except BaseException:
                        if prepared is not None:
                            prepared.abort()
                        raise
                    if moved is None and prepared is not None:
                        # Recorded: from here on the release is completed, now or on the next use.
                        try:
                            prepared.commit()
                        except InputError as error:
                            raise LedgerPendingError(
                                f"recorded as release {entry.id} in {self.name}, but {error}; "
                                "the ledger's next use completes it"
                            ) from None
                if moved is None:
                    break
                if prepared is not None:
                    prepared.abort()
                number = moved
        if prepared is not None and decided:
            with (
                contextlib.suppress(InputError, *self.database.errors),
                self.database.connect() as session,
            ):
                # Confirmed; if this fails, the next use finds the files complete.
                session.execute("DELETE FROM pending_files WHERE release_id = ?", (entry.id,))
        return LedgerRelease(entry=entry, result=result)

    def _records_with(self, table: TableOutput) -> PostgresDatabase | None:
        """The ledger's database when ``table`` is in it (recorded in the transaction that
        creates the table), else None."""
        database = self.database
        if isinstance(database, PostgresDatabase) and same_database(
            table.database, database.location.conninfo
        ):
            return database
        return None

    def _record(
        self,
        entry: LedgerEntry,
        result: Result,
        published: pl.DataFrame | None,
        journal: Path | None,
        *,
        since: int,
        of_source: Callable[[LedgerEntry, Session], bool],
        table: TableOutput | None,
    ) -> int | None:
        """Record the release in one transaction (and publish its table); the next free
        number instead if it moved.

        ``journal`` is the write journal the ledger's transaction commits (None when
        the group commits by its own rename). Returns None once recorded, or the
        number to make the release with again when releases of other sources took
        ``entry.id`` meanwhile.
        """

        def write(session: Session) -> int | None:
            """The release's records, in ``session``'s transaction; or the next free number."""
            moved = self._moved(session, entry, since, of_source)
            if moved is None:
                if entry.charge is not None:
                    # In the transaction that inserts the release, one writer at a time: no
                    # release recorded meanwhile can have spent the budget this one reads.
                    self._within_budgets(session, entry.source, entry.source_sha256, entry.charge)
                self._insert_release(session, entry, result, published, journal)
            return moved

        home = None if table is None else self._records_with(table)
        if table is not None and home is not None:
            return self._record_with_table(home, table, write)
        transaction = None if table is None else table.transaction_id()
        with self.database.connect() as session:
            with self._recording():
                self.database.begin_write(session)
            try:
                moved = write(session)
                if moved is not None:
                    session.execute("ROLLBACK")
                    return moved
                if table is not None:
                    session.execute(
                        "INSERT INTO pending_tables VALUES (?, ?, ?)",
                        (entry.id, without_password(table.database), transaction),
                    )
                _commit(session)
            except BaseException:
                # Closing the session discards the transaction even if this fails.
                with contextlib.suppress(*self.database.errors):
                    session.execute("ROLLBACK")
                with self._recording():
                    raise
        if table is not None and transaction is not None:
            self._publish_recorded(entry.id, table, transaction)
        return None

    def _record_with_table(
        self,
        database: PostgresDatabase,
        table: TableOutput,
        write: Callable[[Session], int | None],
    ) -> int | None:
        """Record the release in the engine's transaction that creates its table, in the
        ledger's own database: the commit that publishes the table records it."""
        with database.connect():
            pass  # the ledger's tables, created with its first record
        session = database.session_on(table.connection)
        try:
            with self._recording():
                session.execute("SAVEPOINT kanonym_ledger")
                database.begin_write(session)
                moved = write(session)
                if moved is not None:
                    # Only the ledger's part: the verified release stays for the next try.
                    session.execute("ROLLBACK TO SAVEPOINT kanonym_ledger")
                    return moved
            table.publish()
        except BaseException:
            with contextlib.suppress(*database.errors):
                table.connection.rollback()
            raise
        return None

    def _publish_recorded(self, release_id: int, table: TableOutput, transaction: str) -> None:
        """Commit the recorded release's table in its database, then confirm the record.

        Published or not, that database knows: on a failure the record stays
        only if the table committed (if the database cannot tell now, the next
        release recorded settles it).
        """
        try:
            table.publish()
        except BaseException:
            with contextlib.suppress(InputError):
                if self._settle_table(release_id, without_password(table.database), transaction):
                    return
            raise
        with (
            contextlib.suppress(InputError, *self.database.errors),
            self.database.connect() as session,
        ):
            # Confirmed; if this fails, the next release recorded confirms it.
            session.execute("DELETE FROM pending_tables WHERE release_id = ?", (release_id,))

    @contextlib.contextmanager
    def _recording(self) -> Iterator[None]:
        """A database error while recording, as one line: nothing was written."""
        try:
            yield
        except self.database.errors as error:
            raise InputError(
                f"{self.name}: cannot record the release ({first_line(str(error))}); "
                "nothing written"
            ) from None

    def _moved(
        self,
        session: Session,
        entry: LedgerEntry,
        since: int,
        of_source: Callable[[LedgerEntry, Session], bool],
    ) -> int | None:
        """None if ``entry.id`` is the next number; else the next free number, unless a
        release of the same source was recorded since ``since`` (then InputError)."""
        last = session.execute("SELECT coalesce(max(id), 0) FROM releases").fetchone()[0]
        if last == entry.id - 1:
            return None
        newer = self._read_entries(session, " WHERE id > ?", (since,))
        if any(of_source(e, session) for e in newer):
            raise InputError(
                f"{self.name}: another release of this source was recorded while "
                "this one ran, and this one was planned without it; run it again"
            )
        return int(last) + 1

    def _insert_release(
        self,
        session: Session,
        entry: LedgerEntry,
        result: Result,
        published: pl.DataFrame | None,
        journal: Path | None,
    ) -> None:
        """Every record of one release: its entry, row fingerprints, what it published
        per record, its table and hierarchies, and the journal that completes its files."""
        _insert(session, entry)
        rows = row_fingerprints(result.table)
        session.insert(
            "released_rows",
            _of_release(
                entry.id,
                rows.get_column("row_sha256").to_list(),
                rows.get_column("occurrences").to_list(),
            ),
        )
        if published is not None:
            _insert_published(session, entry.id, published)
        _insert_content(session, entry.id, result)
        if journal is not None:
            session.execute(
                "INSERT INTO pending_files (release_id, journal, host) VALUES (?, ?, ?)",
                (entry.id, str(journal.absolute()), socket.gethostname()),
            )

    def _report_section(self, entry: LedgerEntry, kept_cells: int) -> dict[str, object]:
        return {
            "path": str(self.path.resolve()) if self.path is not None else self.name,
            "release_id": entry.id,
            "source_sha256": entry.source_sha256,
            "release_sha256": entry.release_sha256,
            "key": entry.key,
            "based_on": entry.based_on,
            "replay_of": entry.replay_of,
            "complementary": list(entry.complementary),
            "kept_from_base_cells": kept_cells,
            "charge": None if entry.charge is None else dataclasses.asdict(entry.charge),
        }


def _budget_name(source: str | Path) -> str:
    """``source`` as the ledger names a release's source (``<DataFrame>`` kept as it is)."""
    return source if source == DATAFRAME_SOURCE else source_name(source)


def _charges(
    entries: Sequence[LedgerEntry], name: str, fingerprint: str | None
) -> list[tuple[int, PrivacyCharge]]:
    """The charges of the releases that spend ``name``'s budget, by release id."""
    return [
        (e.id, e.charge)
        for e in budget_releases(entries, name, fingerprint)
        if e.charge is not None
    ]


def _commit(session: Session) -> None:
    """End the transaction: the release is recorded from here on."""
    session.execute("COMMIT")


def _json_or_none(value: object) -> Any:
    return None if value is None else json.loads(str(value))


def _insert(session: Session, entry: LedgerEntry) -> None:
    values: dict[str, object] = {
        "id": entry.id,
        "created": entry.created,
        "kanonym_version": entry.kanonym_version,
        "source": entry.source,
        "source_sha256": entry.source_sha256,
        "source_rows": entry.source_rows,
        "quasi_identifiers": json.dumps(list(entry.quasi_identifiers)),
        "hierarchies": json.dumps(
            {name: dataclasses.asdict(record) for name, record in entry.quasi_identifiers.items()}
        ),
        "models": json.dumps([dict(model) for model in entry.models]),
        "transformation": None
        if entry.transformation is None
        else json.dumps(dict(entry.transformation)),
        "recoding": None if entry.recoding is None else json.dumps(dict(entry.recoding)),
        "seed": entry.seed,
        "released_columns": json.dumps(list(entry.released_columns)),
        "released_rows": entry.released_rows,
        "release_sha256": entry.release_sha256,
        "key_column": entry.key,
        "based_on": entry.based_on,
        "replay_of": entry.replay_of,
        "complementary": json.dumps(list(entry.complementary)),
        "output": entry.output,
        "report": entry.report,
        "dp_epsilon": None if entry.charge is None else entry.charge.epsilon,
        "dp_delta": None if entry.charge is None else entry.charge.delta,
    }
    session.execute(
        f"INSERT INTO releases ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )


def _insert_content(session: Session, release_id: int, result: Result) -> None:
    """Keep the released table (Parquet, zstd) and the resolved hierarchies' levels."""
    buffer = io.BytesIO()
    result.table.write_parquet(buffer, compression="zstd")
    levels = {name: [list(level) for level in h.levels] for name, h in result.hierarchies.items()}
    session.execute(
        "INSERT INTO release_content VALUES (?, ?, ?)",
        (release_id, buffer.getvalue(), json.dumps(levels)),
    )


def _insert_published(session: Session, release_id: int, published: pl.DataFrame) -> None:
    names = [c for c in published.columns if c != KEY_HASH]
    classes = (
        published.select(names)
        .unique(maintain_order=True)
        .with_row_index(_CLASS)
        .with_columns(pl.col(_CLASS).cast(pl.Int64))
    )
    records = published.join(classes, on=names, how="left", nulls_equal=True)
    session.insert(
        "published_classes",
        _of_release(
            release_id,
            classes.get_column(_CLASS).to_list(),
            classes.select(pl.struct(names).struct.json_encode()).to_series().to_list(),
        ),
    )
    session.insert(
        "published",
        _of_release(
            release_id, records.get_column(KEY_HASH).to_list(), records.get_column(_CLASS).to_list()
        ),
    )


def _of_release(release_id: int, *columns: Sequence[object]) -> list[tuple[object, ...]]:
    """Rows of one release's records: its id, then a value of each column."""
    return list(zip([release_id] * len(columns[0]), *columns, strict=True))


def _shares_keys(session: Session, release_id: int, key_hashes: pl.DataFrame | None) -> bool:
    """Whether release ``release_id`` published one of these record keys (keyed hashes)."""
    if key_hashes is None:
        return False
    session.execute("CREATE TEMP TABLE IF NOT EXISTS mine (key_hash BLOB PRIMARY KEY)")
    session.execute("DELETE FROM mine")
    session.insert("mine", [(h,) for h in key_hashes.get_column(KEY_HASH).unique().to_list()])
    found = session.execute(
        "SELECT 1 FROM published JOIN mine USING (key_hash) WHERE release_id = ? LIMIT 1",
        (release_id,),
    ).fetchone()
    return found is not None
