"""The ledger's storage: one SQLite file, its schema, locks, transactions and recovery.

The ledger is one SQLite file (schema below, version :data:`LEDGER_SCHEMA_VERSION`,
recorded in ``PRAGMA user_version``; ``PRAGMA application_id`` marks the file as
a kanonym ledger). A release is computed and verified by the ordinary pipeline,
written atomically, and recorded in one transaction (:meth:`LedgerStore.write_and_record`):
if writing fails nothing is recorded, and if recording fails the written files
are removed. Releases of one source are made one at a time
(:meth:`LedgerStore.source_lock`), so that each is planned against every
earlier one (:mod:`kanonym.ledger.policy`).

Example (a ledger is created with its first record; until then it reads as empty):
    >>> import tempfile
    >>> store = LedgerStore(Path(tempfile.mkdtemp()) / "ledger.sqlite")
    >>> store.entries(), store.path.exists()
    ((), False)
    >>> hashed, sharing = store.record_keys(pl.Series(["a", "b"]))
    >>> hashed.height, sharing, store.path.exists()
    (2, set(), True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import io
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from kanonym.errors import InputError, LedgerPendingError
from kanonym.hierarchy import Hierarchy
from kanonym.io import load
from kanonym.io.write import (
    PreparedWrite,
    finish,
    interrupts_held,
    prepare_write,
    recover,
    sync_directory,
)
from kanonym.ledger.fingerprints import KEY_HASH, hash_keys, row_fingerprints, table_fingerprint
from kanonym.ledger.policy import (
    ReleasePlan,
    declared,
    link_releases,
    new_entry,
    resolve_hierarchies,
    same_source,
)
from kanonym.ledger.records import HierarchyRecord, LedgerEntry, LedgerRelease
from kanonym.report import payloads as report_payloads

if TYPE_CHECKING:
    from kanonym.attacks.complementary import AuditResult
    from kanonym.result import Result

LEDGER_SCHEMA_VERSION = 2
"""Version of the ledger's tables; a ledger of a newer version is refused.

Version 2 added ``release_content`` (each release's table and resolved
hierarchies, so that the ledger can audit its releases without the files)
and ``pending_files`` (releases recorded whose files may not all be in place
yet). A version 1 ledger is upgraded when opened for writing; its earlier
releases are then read back from their files (checked by fingerprint).
"""

BUSY_TIMEOUT_SECONDS = 30.0
"""How long a release waits for another process's ledger transaction to end."""

_APPLICATION_ID = 0x6B616E6C  # "kanl": marks the SQLite file as a kanonym ledger
_CLASS = "__kanonym_class"

_V2_SCHEMA = (
    # What each release published, as Parquet, and the hierarchies it resolved
    # (JSON: column -> levels), so an audit needs neither the files nor the specs.
    """CREATE TABLE release_content (
        release_id INTEGER PRIMARY KEY REFERENCES releases (id),
        release_table BLOB NOT NULL,
        hierarchies TEXT NOT NULL
    )""",
    # A release recorded before its files were renamed into place: the journal
    # (kanonym.io.write) that completes them, until they are confirmed.
    """CREATE TABLE pending_files (
        release_id INTEGER PRIMARY KEY REFERENCES releases (id),
        journal TEXT NOT NULL
    )""",
)

_SCHEMA = (
    # The secret of the keyed hash of record keys (see Ledger.published).
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID",
    """CREATE TABLE releases (
        id INTEGER PRIMARY KEY,
        created TEXT NOT NULL,
        kanonym_version TEXT NOT NULL,
        source TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        source_rows INTEGER NOT NULL,
        quasi_identifiers TEXT NOT NULL,
        hierarchies TEXT NOT NULL,
        models TEXT NOT NULL,
        transformation TEXT,
        recoding TEXT,
        seed INTEGER NOT NULL CHECK (seed >= 0),
        released_columns TEXT NOT NULL,
        released_rows INTEGER NOT NULL,
        release_sha256 TEXT NOT NULL,
        key_column TEXT,
        based_on INTEGER REFERENCES releases (id) CHECK (based_on < id),
        replay_of INTEGER REFERENCES releases (id) CHECK (replay_of < id),
        complementary TEXT NOT NULL,
        output TEXT NOT NULL,
        report TEXT
    )""",
    # A release's distinct released quasi-identifier tuples (its classes), once each.
    """CREATE TABLE published_classes (
        release_id INTEGER NOT NULL REFERENCES releases (id),
        class INTEGER NOT NULL,
        qi_values TEXT NOT NULL,
        PRIMARY KEY (release_id, class)
    ) WITHOUT ROWID""",
    # Per released record: the keyed hash of its key and its class.
    """CREATE TABLE published (
        release_id INTEGER NOT NULL,
        key_hash BLOB NOT NULL,
        class INTEGER NOT NULL,
        PRIMARY KEY (release_id, key_hash),
        FOREIGN KEY (release_id, class) REFERENCES published_classes (release_id, class)
    ) WITHOUT ROWID""",
    # Every release, keyed or not: the SHA-256 of each distinct released row
    # (its values in column order, see fingerprints.row_fingerprints) and how often it occurs.
    """CREATE TABLE released_rows (
        release_id INTEGER NOT NULL REFERENCES releases (id),
        row_sha256 BLOB NOT NULL,
        occurrences INTEGER NOT NULL CHECK (occurrences > 0),
        PRIMARY KEY (release_id, row_sha256)
    ) WITHOUT ROWID""",
    *(
        # Version 2 (see LEDGER_SCHEMA_VERSION).
        _V2_SCHEMA
    ),
    "CREATE INDEX releases_source ON releases (source)",
    # The seed rule, enforced by the database too (a replay re-uses its original's seed).
    "CREATE UNIQUE INDEX releases_seed ON releases (source_sha256, seed) WHERE replay_of IS NULL",
)


class LedgerStore:
    """A ledger file: opened (created if absent and ``create``), checked, then read and written.

    :class:`kanonym.Ledger` adds to it the making of a release
    (:meth:`kanonym.Ledger.release`).

    Raises:
        InputError: the path is a directory, cannot be opened, is not an SQLite
            database, is a database of another application, or has a ledger
            schema newer than this kanonym's; or (``create=False``) does not exist.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError(f"{self.path}: is a directory, not a ledger file")
        if not create and not self.path.exists():
            raise InputError(f"{self.path}: ledger not found")
        self._read_only = not create
        if not self.path.exists():
            if not self.path.parent.is_dir():
                raise InputError(
                    f"{self.path}: cannot open ledger (directory {self.path.parent} does not exist)"
                )
            # Created (atomically) when the first release is recorded, never before:
            # a release that fails leaves no ledger, and none is ever removed.
            return
        with self._connect() as connection:
            try:
                app_id = connection.execute("PRAGMA application_id").fetchone()[0]
                version = connection.execute("PRAGMA user_version").fetchone()[0]
                objects = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            except sqlite3.DatabaseError:
                raise InputError(
                    f"{self.path}: not a kanonym ledger (not an SQLite database)"
                ) from None
            if (app_id, version, objects) == (0, 0, 0):
                if not create:
                    raise InputError(f"{self.path}: an empty database, not a kanonym ledger")
                self._create(connection)
            elif app_id != _APPLICATION_ID:
                raise InputError(
                    f"{self.path}: not a kanonym ledger (an SQLite database of another application)"
                )
            elif version > LEDGER_SCHEMA_VERSION:
                raise InputError(
                    f"{self.path}: ledger schema version {version} is newer than this kanonym "
                    f"supports ({LEDGER_SCHEMA_VERSION}); upgrade kanonym"
                )
            elif version < 1:
                raise InputError(f"{self.path}: damaged kanonym ledger (schema version {version})")
            elif version < LEDGER_SCHEMA_VERSION and create:
                self._upgrade(connection)
        if create:
            self.recover()

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode: every transaction is an explicit BEGIN."""
        try:
            if self._read_only:
                connection = sqlite3.connect(
                    f"{self.path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None
                )
            else:
                if not self.path.exists():
                    self._create_file()
                connection = sqlite3.connect(
                    self.path, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS
                )
        except sqlite3.Error as error:
            raise InputError(f"{self.path}: cannot open ledger ({error})") from None
        try:
            connection.execute("PRAGMA foreign_keys = ON")
            yield connection
        except sqlite3.DatabaseError as error:
            raise InputError(f"{self.path}: ledger error ({error})") from None
        finally:
            connection.close()

    def _create_file(self) -> None:
        """Create the ledger whole or not at all: built beside it, then linked into place.

        A full disk or a kill leaves at most the hidden temporary, never a
        partial ledger; of several processes creating it at once, the first
        link wins and the others use that ledger. The file is private (0600):
        it holds the secret of the record keys' hashes.
        """
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.new")
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            connection = sqlite3.connect(temporary, isolation_level=None)
            try:
                self._create(connection)
            finally:
                connection.close()
            descriptor = os.open(temporary, os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            with contextlib.suppress(FileExistsError):
                os.link(temporary, self.path)
            sync_directory(self.path.parent)
        except (OSError, sqlite3.Error) as error:
            reason = error.strerror if isinstance(error, OSError) else str(error)
            raise InputError(f"{self.path}: cannot create the ledger ({reason})") from None
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()

    def recover(self) -> list[int]:
        """Finish the files of releases recorded while their writing was interrupted.

        A release is recorded (its transaction committed) before its files
        are renamed into place, with its write journal in ``pending_files``;
        a release killed between the two is completed here, on the ledger's
        next use, and interrupted writes of releases the ledger never recorded
        are undone in the folders of its releases. Returns the ids completed.
        """
        if self._read_only or not self.path.exists():
            return []
        with self._connect() as connection:
            if not _has_table(connection, "pending_files"):
                return []
            pending = connection.execute(
                "SELECT release_id, journal FROM pending_files ORDER BY release_id"
            ).fetchall()
            outputs = [r[0] for r in connection.execute("SELECT output FROM releases").fetchall()]
        done = [int(i) for i, journal in pending if finish(Path(journal))]
        if done:
            with self._connect() as connection:
                connection.execute("BEGIN IMMEDIATE")
                connection.executemany(
                    "DELETE FROM pending_files WHERE release_id = ?", [(i,) for i in done]
                )
                _commit(connection)
        for folder in dict.fromkeys(Path(output).parent for output in outputs):
            recover(folder)
        return done

    def _create(self, connection: sqlite3.Connection) -> None:
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have created it between our check and the lock.
            if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                for statement in _SCHEMA:
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO meta VALUES ('key_secret', ?)", (secrets.token_bytes(32),)
                )
                connection.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                connection.execute(f"PRAGMA user_version = {LEDGER_SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise

    def _upgrade(self, connection: sqlite3.Connection) -> None:
        """Version 1 -> 2: add the tables version 2 introduced (nothing else changed)."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            if connection.execute("PRAGMA user_version").fetchone()[0] == 1:
                for statement in _V2_SCHEMA:
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {LEDGER_SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise

    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every recorded release, oldest first."""
        if not self.path.exists():
            return ()
        with self._connect() as connection:
            cursor = connection.execute("SELECT * FROM releases ORDER BY id")
            names = [column[0] for column in cursor.description]
            rows = cursor.fetchall()
        return tuple(self._entry(dict(zip(names, row, strict=True))) for row in rows)

    def entry(self, release_id: int) -> LedgerEntry:
        """The release numbered ``release_id``; InputError if there is none."""
        for entry in self.entries():
            if entry.id == release_id:
                return entry
        raise InputError(f"{self.path}: no release {release_id} in the ledger")

    def published(self, release_id: int) -> pl.DataFrame:
        """What a keyed release published per record: ``key_hash`` and its quasi-identifiers.

        ``key_hash`` is the keyed BLAKE2b hash (RFC 7693, 32 bytes, keyed with
        the ledger's secret) of the record's key, so the ledger holds no key in
        clear; the other columns are the released quasi-identifier values.
        Records the release suppressed are absent. Empty for a release made
        without a key.
        """
        entry = self.entry(release_id)
        with self._connect() as connection:
            rows = connection.execute(
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
        with self._connect() as connection:
            found = None
            if _has_table(connection, "release_content"):
                found = connection.execute(
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
        with self._connect() as connection:
            found = None
            if _has_table(connection, "release_content"):
                found = connection.execute(
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
            )
        except (KeyError, ValueError, TypeError, AttributeError) as error:
            raise InputError(f"{self.path}: release {row.get('id')} is damaged ({error})") from None

    def _secret(self, connection: sqlite3.Connection) -> bytes:
        found = connection.execute("SELECT value FROM meta WHERE name = 'key_secret'").fetchone()
        if found is None or not isinstance(found[0], bytes):
            raise InputError(f"{self.path}: damaged kanonym ledger (no key secret)")
        return found[0]

    def record_keys(self, keys: pl.Series) -> tuple[pl.DataFrame, set[int]]:
        """Each key with its hash (:func:`~kanonym.ledger.fingerprints.hash_keys`), and the
        recorded releases that published one of these records.

        Hashing needs the ledger's secret, so it creates the ledger if absent.
        """
        with self._connect() as connection:
            hashed = hash_keys(self._secret(connection), keys)
            # One read transaction (a statement each would be many times slower).
            connection.execute("BEGIN")
            connection.execute("CREATE TEMP TABLE candidate (key_hash BLOB PRIMARY KEY)")
            connection.executemany(
                "INSERT OR IGNORE INTO candidate VALUES (?)",
                ((h,) for h in hashed.get_column(KEY_HASH).to_list()),
            )
            sharing = connection.execute(
                "SELECT DISTINCT release_id FROM published JOIN candidate USING (key_hash)"
            ).fetchall()
            connection.execute("ROLLBACK")
        return hashed, {int(row[0]) for row in sharing}

    @contextlib.contextmanager
    def source_lock(self, names: Sequence[str]) -> Iterator[None]:
        """Hold the ledger's lock of each source name (its path, its fingerprint), waiting.

        One lock file beside the ledger (``.NAME.lock``, empty, kept) carries one
        byte-range lock per source name (POSIX ``lockf``), so that only releases
        of the same source wait for each other. Names are locked in a fixed
        order, so two releases never wait for each other in a circle.
        """
        lock_file = self.path.with_name(f".{self.path.name}.lock")
        try:
            descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise InputError(
                f"{self.path}: cannot lock the ledger ({error.strerror or error})"
            ) from None
        try:
            offsets = sorted(
                {int.from_bytes(hashlib.sha256(n.encode()).digest()[:4], "big") for n in names}
            )
            for offset in offsets:
                fcntl.lockf(descriptor, fcntl.LOCK_EX, 1, offset)
            yield
        finally:
            os.close(descriptor)  # drops the locks

    def write_and_record(
        self,
        plan: ReleasePlan,
        result: Result,
        published: pl.DataFrame | None,
        *,
        output: Path,
        report: Path | None,
        report_html: Path | None,
        kept_cells: int,
        source: str,
        fingerprint: str,
        release_sha256: str,
        key_hashes: pl.DataFrame | None,
    ) -> LedgerRelease:
        """Write the files beside their destinations, record the release, then put them in place.

        The ledger's transaction is the commit point (:mod:`kanonym.io.write`):
        the files' temporaries and write journal exist before it, so a failure
        or kill before it leaves every destination untouched and the release
        unrecorded; the transaction records the release with its journal in
        ``pending_files``, so a kill after it is completed by the ledger's next
        use (:meth:`recover`). Nothing that existed before is ever removed.

        Releases of other sources recorded meanwhile only move this one's
        number: its files are made again with the next free number. A release
        of the same source recorded meanwhile (one sharing record keys; the
        source lock keeps out the others) refuses this one, whose policies did
        not see it.
        """
        number = plan.last_id + 1
        while True:
            entry = new_entry(
                number,
                plan,
                result,
                source=source,
                fingerprint=fingerprint,
                release_sha256=release_sha256,
                output=output,
                report=report,
            )
            payloads = report_payloads(
                result,
                output,
                report=report,
                report_html=report_html,
                report_extra={"ledger": _report_section(self.path, entry, kept_cells)},
            )
            for folder in dict.fromkeys(path.parent for path, _ in payloads):
                recover(folder)
            # The ledger's row in pending_files, not the journal's rename, commits it.
            decided_by = {
                "database": str(self.path.absolute()),
                "table": "pending_files",
                "column": "journal",
            }
            prepared = prepare_write(payloads, decided_by=decided_by)
            # Ctrl-C waits from the transaction until the files are in place: a release
            # is then either not recorded (and not written) or recorded and written.
            with interrupts_held():
                try:
                    moved = self._record(
                        entry,
                        result,
                        published,
                        prepared,
                        since=plan.last_id,
                        of_source=lambda e, c: (
                            same_source(e, source, fingerprint) or _shares_keys(c, e.id, key_hashes)
                        ),
                    )
                except BaseException:
                    prepared.abort()
                    raise
                if moved is None:
                    # Recorded: from here on the release is completed, now or on the next use.
                    try:
                        prepared.commit()
                    except InputError as error:
                        raise LedgerPendingError(
                            f"recorded as release {entry.id} in {self.path}, but {error}; "
                            "the ledger's next use completes it"
                        ) from None
            if moved is None:
                break
            prepared.abort()
            number = moved
        with contextlib.suppress(InputError, sqlite3.Error), self._connect() as connection:
            # Confirmed; if this fails, the next use finds the files complete.
            connection.execute("DELETE FROM pending_files WHERE release_id = ?", (entry.id,))
        return LedgerRelease(entry=entry, result=result)

    def _record(
        self,
        entry: LedgerEntry,
        result: Result,
        published: pl.DataFrame | None,
        prepared: PreparedWrite,
        *,
        since: int,
        of_source: Callable[[LedgerEntry, sqlite3.Connection], bool],
    ) -> int | None:
        """Record the release in one transaction; the next free number instead if it moved.

        Returns None once recorded, or the number to make the release with again
        when releases of other sources took ``entry.id`` meanwhile.
        """
        with self._connect() as connection:
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise InputError(
                    f"{self.path}: cannot record the release ({error}); nothing written"
                ) from None
            try:
                last = connection.execute("SELECT coalesce(max(id), 0) FROM releases").fetchone()[0]
                if last != entry.id - 1:
                    cursor = connection.execute("SELECT * FROM releases WHERE id > ?", (since,))
                    names = [column[0] for column in cursor.description]
                    newer = [self._entry(dict(zip(names, row, strict=True))) for row in cursor]
                    if any(of_source(e, connection) for e in newer):
                        raise InputError(
                            f"{self.path}: another release of this source was recorded while "
                            "this one ran, and this one was planned without it; run it again"
                        )
                    connection.execute("ROLLBACK")
                    return int(last) + 1
                _insert(connection, entry)
                rows = row_fingerprints(result.table)
                connection.executemany(
                    "INSERT INTO released_rows VALUES (?, ?, ?)",
                    zip(
                        [entry.id] * rows.height,
                        rows.get_column("row_sha256").to_list(),
                        rows.get_column("occurrences").to_list(),
                        strict=True,
                    ),
                )
                if published is not None:
                    _insert_published(connection, entry.id, published)
                _insert_content(connection, entry.id, result)
                connection.execute(
                    "INSERT INTO pending_files VALUES (?, ?)",
                    (entry.id, str(prepared.journal.absolute())),
                )
                _commit(connection)
            except BaseException as error:
                # Closing the connection discards the transaction even if this fails.
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    raise InputError(
                        f"{self.path}: cannot record the release ({error}); nothing written"
                    ) from None
                raise
        return None


def _commit(connection: sqlite3.Connection) -> None:
    """End the transaction: the release is recorded from here on."""
    connection.execute("COMMIT")


def _json_or_none(value: object) -> Any:
    return None if value is None else json.loads(str(value))


def _insert(connection: sqlite3.Connection, entry: LedgerEntry) -> None:
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
    }
    connection.execute(
        f"INSERT INTO releases ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )


def _insert_content(connection: sqlite3.Connection, release_id: int, result: Result) -> None:
    """Keep the released table (Parquet, zstd) and the resolved hierarchies' levels."""
    buffer = io.BytesIO()
    result.table.write_parquet(buffer, compression="zstd")
    levels = {name: [list(level) for level in h.levels] for name, h in result.hierarchies.items()}
    connection.execute(
        "INSERT INTO release_content VALUES (?, ?, ?)",
        (release_id, buffer.getvalue(), json.dumps(levels)),
    )


def _insert_published(
    connection: sqlite3.Connection, release_id: int, published: pl.DataFrame
) -> None:
    names = [c for c in published.columns if c != KEY_HASH]
    classes = (
        published.select(names)
        .unique(maintain_order=True)
        .with_row_index(_CLASS)
        .with_columns(pl.col(_CLASS).cast(pl.Int64))
    )
    records = published.join(classes, on=names, how="left", nulls_equal=True)
    connection.executemany(
        "INSERT INTO published_classes VALUES (?, ?, ?)",
        zip(
            [release_id] * classes.height,
            classes.get_column(_CLASS).to_list(),
            classes.select(pl.struct(names).struct.json_encode()).to_series().to_list(),
            strict=True,
        ),
    )
    connection.executemany(
        "INSERT INTO published VALUES (?, ?, ?)",
        zip(
            [release_id] * records.height,
            records.get_column(KEY_HASH).to_list(),
            records.get_column(_CLASS).to_list(),
            strict=True,
        ),
    )


def _report_section(path: Path, entry: LedgerEntry, kept_cells: int) -> dict[str, object]:
    return {
        "path": str(path.resolve()),
        "release_id": entry.id,
        "source_sha256": entry.source_sha256,
        "release_sha256": entry.release_sha256,
        "key": entry.key,
        "based_on": entry.based_on,
        "replay_of": entry.replay_of,
        "complementary": list(entry.complementary),
        "kept_from_base_cells": kept_cells,
    }


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    found = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None


def _shares_keys(
    connection: sqlite3.Connection, release_id: int, key_hashes: pl.DataFrame | None
) -> bool:
    """Whether release ``release_id`` published one of these record keys (keyed hashes)."""
    if key_hashes is None:
        return False
    hashes = key_hashes.get_column(KEY_HASH).to_list()
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS mine (key_hash BLOB PRIMARY KEY)")
    connection.execute("DELETE FROM mine")
    connection.executemany("INSERT OR IGNORE INTO mine VALUES (?)", ((h,) for h in hashes))
    found = connection.execute(
        "SELECT 1 FROM published JOIN mine USING (key_hash) WHERE release_id = ? LIMIT 1",
        (release_id,),
    ).fetchone()
    return found is not None
