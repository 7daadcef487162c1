"""Where a ledger lives: the interface its two stores (an SQLite file, a PostgreSQL schema) share.

:class:`~kanonym.ledger.storage.LedgerStore` holds every decision of the
ledger (what is recorded, in which transaction, how a release is completed or
undone after a kill) and speaks to its database only through
:class:`LedgerDatabase`: sessions that run the ledger's SQL, written once in
the dialect both stores understand (``?`` parameters, the tables of
:data:`SCHEMA`, bulk inserts through :meth:`Session.insert`), and the locks
that order releases. :mod:`kanonym.ledger.sqlite` and :mod:`kanonym.ledger.postgres`
implement it.

Example (the SQL of one schema, written once, serves both stores):
    >>> SCHEMA[0]
    'CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID'
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

LEDGER_SCHEMA_VERSION = 4
"""Version of the ledger's tables; a ledger of a newer version is refused.

Version 2 added ``release_content`` (each release's table and resolved
hierarchies, so that the ledger can audit its releases without the files)
and ``pending_files`` (releases recorded whose files may not all be in place
yet). Version 3 added ``pending_tables`` (releases recorded whose database
table, published in another database's transaction, may not be committed
yet) and the ``host`` of ``pending_files`` (the machine whose folders hold the
journal: a ledger in PostgreSQL is shared by several). Version 4 added
``budgets`` (each source's differential-privacy budget) and the ``dp_epsilon``
and ``dp_delta`` of ``releases`` (what a release charged it,
:mod:`kanonym.ledger.budget`). An older ledger is upgraded in place when
opened for writing (an SQLite ledger from version 1, a PostgreSQL one from
version 3, its first); the releases of a version 1 ledger are then read back
from their files (checked by fingerprint).
"""

V2_SCHEMA = (
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

V3_SCHEMA = (
    # The machine that wrote the journal (NULL: recorded before version 3, on this one).
    "ALTER TABLE pending_files ADD COLUMN host TEXT",
    # A release recorded before the transaction publishing its table in another
    # database committed: that database's URL (without a password) and the
    # transaction's id, which tells after a kill whether it committed.
    """CREATE TABLE pending_tables (
        release_id INTEGER PRIMARY KEY REFERENCES releases (id),
        destination TEXT NOT NULL,
        transaction_id TEXT NOT NULL
    )""",
)

V4_SCHEMA = (
    # What a differentially private release charged its source's budget (NULL: no charge).
    "ALTER TABLE releases ADD COLUMN dp_epsilon REAL",
    "ALTER TABLE releases ADD COLUMN dp_delta REAL",
    # Each source's budget, by the name the ledger records it under (policy.source_name).
    """CREATE TABLE budgets (
        source TEXT PRIMARY KEY,
        epsilon REAL NOT NULL,
        delta REAL NOT NULL,
        set_at TEXT NOT NULL
    )""",
)

SCHEMA = (
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
    *V2_SCHEMA,
    *V3_SCHEMA,
    *V4_SCHEMA,
    "CREATE INDEX releases_source ON releases (source)",
    # The seed rule, enforced by the database too (a replay re-uses its original's seed).
    "CREATE UNIQUE INDEX releases_seed ON releases (source_sha256, seed) WHERE replay_of IS NULL",
)
"""The ledger's tables, in the SQL both stores read (PostgreSQL's types follow from these)."""

RELEASE_TABLES = (
    "pending_tables",
    "pending_files",
    "release_content",
    "released_rows",
    "published",
    "published_classes",
)
"""The tables holding a release's records besides ``releases``, each keyed by ``release_id``,
in an order that deletes them before what they refer to."""


class Rows(Protocol):
    """A statement's result, as DB-API cursors give it."""

    @property
    def description(self) -> Any:
        """The columns, each with its name first."""
        ...

    def fetchone(self) -> Any:
        """The next row, or None."""
        ...

    def fetchall(self) -> list[Any]:
        """Every remaining row."""
        ...


class Session(Protocol):
    """A connection to the ledger running its SQL: ``?`` parameters, the tables of
    :data:`SCHEMA`; transactions are explicit (``BEGIN`` / ``COMMIT`` / ``ROLLBACK``)."""

    def execute(self, statement: str, params: Sequence[object] = ()) -> Rows:
        """Run one statement."""
        ...

    def insert(self, table: str, rows: Sequence[Sequence[object]]) -> None:
        """Append ``rows`` (every column, in order) to ``table`` in bulk."""
        ...


class LedgerDatabase(Protocol):
    """One ledger's store: its sessions, its locks and how it names itself."""

    @property
    def name(self) -> str:
        """The ledger as messages name it (its path, or its URL without a password)."""
        ...

    @property
    def file(self) -> Path | None:
        """The ledger's file, which no release may overwrite (None for a ledger in a
        database server)."""
        ...

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        """The exceptions the store's driver raises."""
        ...

    @property
    def decided_by(self) -> Mapping[str, str]:
        """The record that commits a group of release files
        (:func:`kanonym.io.write.prepare_write`): the row of ``pending_files`` naming the
        group's journal."""
        ...

    def exists(self) -> bool:
        """Whether the ledger holds its tables (it is created with its first record)."""
        ...

    def connect(self) -> contextlib.AbstractContextManager[Session]:
        """A session on the ledger, created first if absent (unless opened read-only); a
        driver error inside becomes an :class:`~kanonym.errors.InputError` naming the
        ledger. Reads check :meth:`exists` first: a ledger is created with its first
        record."""
        ...

    def begin_write(self, session: Session) -> None:
        """Start the transaction that records a release: one writer at a time."""
        ...

    def has_table(self, session: Session, name: str) -> bool:
        """Whether the ledger has table ``name`` (a ledger of an older version, read without
        being upgraded, lacks some)."""
        ...

    def source_lock(self, names: Sequence[str]) -> contextlib.AbstractContextManager[None]:
        """Hold the lock of each source name, waiting: releases of one source run one at a
        time, releases of other sources side by side."""
        ...

    def write_lock(self, *, wait: bool = True) -> contextlib.AbstractContextManager[bool]:
        """Hold the ledger's one lock of recording releases (yields False if ``wait`` is
        false and another process holds it): taken before a release's number is chosen
        and kept until its output is committed, so that a release waiting for another
        database's commit is always the last one recorded."""
        ...
