"""The release ledger: every release of a source table, recorded, and the policies it enables.

Sweeney ("k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002,
section 4) shows three attacks on k-anonymous releases that no single release
can prevent, only a record of what was released before:

* *unsorted matching* (§4.1): two releases whose rows are in the same order
  can be matched row by row. Every kanonym release shuffles its rows with a
  seed; the ledger refuses a seed already used for the same source, unless the
  release is a deliberate re-run of an earlier one (``replay``), which must
  then reproduce that release exactly;
* *complementary release* (§4.2): a later release of the same table can be
  linked to an earlier one on the attributes they share. A release of a source
  the ledger has seen treats every attribute an earlier release published as
  part of its quasi-identifier (generalized with the ``suppress`` hierarchy
  unless named with its own), unless it is *based on* an earlier release;
* *temporal* (§4.3): after rows are added, a new release must not publish a
  value more specific than one already published for the same record. A
  release ``based_on`` an earlier one is searched only among generalizations
  at least as high, per quasi-identifier, as that release's levels, and,
  before anything is written, every record (identified by a key column that
  is never released) is checked to be published with the same value or one of
  its generalizations.

The ledger is one SQLite file (schema below, version :data:`LEDGER_SCHEMA_VERSION`,
recorded in ``PRAGMA user_version``; ``PRAGMA application_id`` marks the file as
a kanonym ledger). A release is computed and verified by the ordinary pipeline,
written atomically, and recorded in one transaction: if writing fails nothing
is recorded, and if recording fails the written files are removed.

Example (a release, then a second one of the same source whose seed is refused):
    >>> import tempfile
    >>> from kanonym.config import AnonymizationConfig
    >>> folder = Path(tempfile.mkdtemp())
    >>> ledger = Ledger(folder / "ledger.sqlite")
    >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"],
    ...                       "disease": ["flu", "cold", "flu", "cold"]})
    >>> config = AnonymizationConfig(quasi_identifiers={"zip": "mask"}, k=2, seed=7,
    ...                              insensitive=("disease",))
    >>> first = ledger.release(table, config, output=folder / "r1.csv")
    >>> first.entry.id, first.entry.quasi_identifiers, first.entry.seed
    (1, ('zip',), 7)
    >>> ledger.release(table, config, output=folder / "r2.csv")
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: seed 7 was already used for this source by release 1; ...
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
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from kanonym._version import __version__
from kanonym.config import AnonymizationConfig, HierarchyLike
from kanonym.errors import InputError, LedgerPendingError, VerificationError
from kanonym.hierarchy import Hierarchy, SuppressBuilder, parse_hierarchy
from kanonym.io import Table, load
from kanonym.io.paths import check_destinations
from kanonym.io.write import (
    PreparedWrite,
    finish,
    interrupts_held,
    prepare_write,
    recover,
    sync_directory,
)
from kanonym.models import required_k
from kanonym.release.audit import AuditResult, ancestor_pairs, leaf_covers, link
from kanonym.release.pipeline import anonymize_table
from kanonym.report import payloads as report_payloads
from kanonym.result import Result
from kanonym.search import Progress
from kanonym.verify import measure, verify_models

if TYPE_CHECKING:
    import pandas

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
_SEED_LIMIT = 2**63  # SQLite integers are signed 64-bit
_DATAFRAME = "<DataFrame>"
_KEY_HASH = "key_hash"
_KEY, _CLASS = "__kanonym_key", "__kanonym_class"

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
    # (its values in column order, see row_fingerprints) and how often it occurs.
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


def table_fingerprint(frame: pl.DataFrame) -> str:
    """SHA-256 (hex) of a table's content: its CSV with Polars' defaults.

    The same table has the same fingerprint whether it was read from CSV,
    gzip, Parquet or given as a DataFrame, as long as its values are the same.

    Example:
        >>> table_fingerprint(pl.DataFrame({"a": ["1"]})) == hashlib.sha256(b"a\\n1\\n").hexdigest()
        True
    """
    return hashlib.sha256(frame.write_csv().encode("utf-8")).hexdigest()


def row_fingerprints(frame: pl.DataFrame) -> pl.DataFrame:
    """SHA-256 of each distinct row of ``frame`` and how many rows have it.

    A row is hashed as its values' text joined by the unit separator (0x1F),
    a missing value written as 0x00, so that it can be recomputed from any copy
    of the release: columns ``row_sha256`` (32 bytes) and ``occurrences``.

    Example:
        >>> rows = row_fingerprints(pl.DataFrame({"a": ["x", "x", None]}))
        >>> rows.get_column("occurrences").to_list()
        [2, 1]
        >>> rows.get_column("row_sha256")[0] == hashlib.sha256(b"x").digest()
        True
    """
    distinct = frame.cast(pl.String).group_by(frame.columns, maintain_order=True).len()
    digests = [
        hashlib.sha256(
            "\x1f".join("\x00" if value is None else value for value in row).encode("utf-8")
        ).digest()
        for row in distinct.drop("len").iter_rows()
    ]
    return pl.DataFrame(
        {
            "row_sha256": pl.Series(digests, dtype=pl.Binary),
            "occurrences": distinct.get_column("len").cast(pl.Int64),
        }
    )


@dataclass(frozen=True, kw_only=True)
class HierarchyRecord:
    """How a release generalized one quasi-identifier.

    Attributes:
        source: the hierarchy's spec or ARX file, as given.
        height: its height on the release's source.
        sha256: SHA-256 of the resolved hierarchy in ARX format (so a rebuilt or
            edited hierarchy can be told apart).
    """

    source: str
    height: int
    sha256: str

    def __post_init__(self) -> None:
        if self.height < 0 or len(self.sha256) != 64:
            raise InputError(f"hierarchy record of {self.source}: bad height or fingerprint")


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One recorded release.

    Attributes:
        id: the release's number in its ledger (1, 2, ...).
        created: UTC time of recording, ISO 8601.
        source: the source file (absolute), or ``<DataFrame>``.
        source_sha256: :func:`table_fingerprint` of the source.
        quasi_identifiers: the quasi-identifier the release was made with,
            complementary attributes included.
        hierarchies: per quasi-identifier, its :class:`HierarchyRecord`.
        models: every privacy model checked, as in the report.
        transformation: quasi-identifier -> level, or None for a local
            recoding.
        recoding: the report's ``recoding`` object of a local recoding
            (Mondrian), or None for a full-domain generalization.
        seed: seed of the row shuffle.
        released_columns: the columns of the release, in order.
        key: the key column identifying records (never released), or None.
        based_on: the release this one derives from (temporal), or None.
        replay_of: the release this one re-runs, or None.
        complementary: the attributes of earlier releases added to the
            quasi-identifier.
    """

    id: int
    created: str
    kanonym_version: str
    source: str
    source_sha256: str
    source_rows: int
    quasi_identifiers: tuple[str, ...]
    hierarchies: Mapping[str, HierarchyRecord]
    models: tuple[Mapping[str, object], ...]
    transformation: Mapping[str, int] | None
    recoding: Mapping[str, object] | None
    seed: int
    released_columns: tuple[str, ...]
    released_rows: int
    release_sha256: str
    key: str | None
    based_on: int | None
    replay_of: int | None
    complementary: tuple[str, ...]
    output: str
    report: str | None

    def __post_init__(self) -> None:
        where = f"release {self.id}"
        if (self.transformation is None) == (self.recoding is None):
            raise InputError(f"{where}: needs either levels or a local recoding, not both")
        levels = self.quasi_identifiers if self.transformation is None else self.transformation
        if set(levels) != set(self.quasi_identifiers) or set(self.hierarchies) != set(
            self.quasi_identifiers
        ):
            raise InputError(f"{where}: levels and hierarchies must cover its quasi-identifiers")
        if self.key is not None and self.key in self.released_columns:
            raise InputError(f"{where}: key column '{self.key}' cannot be a released column")
        for what, other in (("based_on", self.based_on), ("replay_of", self.replay_of)):
            if other is not None and not 1 <= other < self.id:
                raise InputError(f"{where}: {what} {other} must name an earlier release")
        if not set(self.complementary) <= set(self.quasi_identifiers):
            raise InputError(f"{where}: complementary attributes must be quasi-identifiers")

    @property
    def k(self) -> int:
        """The largest k the release was made with (1 if none)."""
        ks = [
            int(str(model["k"]))
            for model in self.models
            if model.get("model") == "k-anonymity" and "k" in model
        ]
        return max(ks, default=1)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        document = dataclasses.asdict(self)
        document["hierarchies"] = {
            name: dataclasses.asdict(record) for name, record in self.hierarchies.items()
        }
        return document


@dataclass(frozen=True, kw_only=True, eq=False)
class LedgerRelease:
    """A release made through the ledger: its record and the verified result."""

    entry: LedgerEntry
    result: Result


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """The job as the ledger's policies turn it, before the search runs."""

    config: AnonymizationConfig
    key: str | None
    base: LedgerEntry | None
    replayed: LedgerEntry | None
    complementary: tuple[str, ...]
    last_id: int


class Ledger:
    """A ledger file: opened (created if absent and ``create``), checked, then used.

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
                {_KEY_HASH: [r[0] for r in rows], "values": [r[1] for r in rows]},
                schema={_KEY_HASH: pl.Binary, "values": pl.String},
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
        each hierarchy's spec (:attr:`LedgerEntry.hierarchies`).
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
                name=entry.hierarchies[name].source,
                levels=tuple(tuple(level) for level in levels[name]),
            )
            for name in entry.quasi_identifiers
        }

    def audit(self, release_ids: Sequence[int], *, k: int | None = None) -> AuditResult:
        """Link recorded releases as an attacker would and check k (:func:`kanonym.audit`).

        The releases' tables and hierarchies come from the ledger, so nothing
        needs to be given again: the quasi-identifier is every column any of
        them generalized, each with the hierarchies the releases used; they
        are joined on the columns they share that every one of them published
        exactly. ``k`` defaults to the largest k any of them was made with.
        This is the check :meth:`release` runs before it records a release.

        Raises:
            InputError: fewer than two releases, an unknown release, or
                releases that share no column they all publish exactly (they
                cannot be linked record by record).
        """
        if len(release_ids) < 2:
            raise InputError(f"an audit links at least two releases, got {len(release_ids)}")
        entries = [self.entry(i) for i in release_ids]
        tables = [self.release_table(e.id) for e in entries]
        hierarchies = [self._resolved(e, tables) for e in entries]
        strictest = max(e.k for e in entries) if k is None else k
        result = link_releases(
            tables,
            [f"release {e.id}" for e in entries],
            hierarchies,
            strictest,
            declared=_declared(entries),
        )
        if result is None:
            raise InputError(
                f"releases {', '.join(str(i) for i in release_ids)} share no column that all of "
                "them publish exactly: they cannot be linked record by record"
            )
        return result

    def _resolved(
        self,
        entry: LedgerEntry,
        tables: Sequence[pl.DataFrame],
        fallback: Mapping[str, Hierarchy] | None = None,
    ) -> dict[str, Hierarchy]:
        """The entry's hierarchies: recorded, or (version 1 entries) rebuilt from their specs.

        A builder spec is rebuilt on the released values of ``tables`` (which
        works for ``mask`` and ``suppress``) unless ``fallback`` holds a
        hierarchy of the same spec (the release being made, on the same source).
        """
        stored = self.release_hierarchies(entry.id)
        if stored:
            return stored
        resolved: dict[str, Hierarchy] = {}
        for name, record in entry.hierarchies.items():
            known = (fallback or {}).get(name)
            if known is not None and known.name == record.source:
                resolved[name] = known
                continue
            spec = parse_hierarchy(record.source)
            if isinstance(spec, Hierarchy):
                resolved[name] = spec
                continue
            values = (
                pl.concat([t.get_column(name).cast(pl.String) for t in tables if name in t.columns])
                .unique()
                .to_list()
            )
            try:
                resolved[name] = spec.build(values, column=name, source=f"release {entry.id}")
            except InputError as error:
                raise InputError(
                    f"release {entry.id} (recorded before the ledger kept hierarchies): "
                    f"hierarchy {record.source} of '{name}' cannot be rebuilt from released "
                    f"values ({error})"
                ) from None
        return resolved

    def _earlier_hierarchies(
        self, table: Table, same: Sequence[LedgerEntry]
    ) -> dict[str, HierarchyLike]:
        """Per column, the hierarchy the latest earlier release of the source generalized it with.

        The recorded hierarchy when it still covers the column's values, else
        its spec rebuilt on this table (a grown table has new values).
        """
        found: dict[str, HierarchyLike] = {}
        for entry in sorted(same, key=lambda e: e.id):
            stored = self.release_hierarchies(entry.id)
            for name, record in entry.hierarchies.items():
                if name not in table.frame.columns:
                    continue
                hierarchy = stored.get(name)
                values = set(table.frame.get_column(name).cast(pl.String).unique().to_list())
                if hierarchy is not None and values <= set(hierarchy.leaves):
                    found[name] = hierarchy
                    continue
                with contextlib.suppress(InputError):  # an ARX file since removed
                    found[name] = parse_hierarchy(record.source)
        return found

    def _check_links(
        self, result: Result, earlier: Sequence[LedgerEntry], complementary: Collection[str]
    ) -> None:
        """Refuse a release that, linked with earlier ones, is not k-anonymous.

        Sweeney (2002, §4.2): releases of one table that share attributes can
        be joined on them. Before a release is recorded it is linked, as
        :meth:`audit` would link it, with each earlier release of its source,
        with all of them at once, and, for each column this release publishes
        exactly, with all the earlier releases that publish it exactly too (the
        groups an attacker can join on that column, whatever the other
        releases publish); every linked table must be k-anonymous for the
        largest k involved. Releases that share no column published exactly by
        all of them cannot be linked record by record and are not a group.

        Raises:
            VerificationError: a linked table has classes below k.
        """
        new = dict(result.hierarchies)
        k = required_k(result.models)
        groups = [[e] for e in earlier]
        if len(earlier) > 1:
            groups.append(list(earlier))
            released = {e.id: self.release_table(e.id) for e in earlier}
            resolved = {
                e.id: self._resolved(e, [released[e.id], result.table], new) for e in earlier
            }
            for column in result.table.columns:
                hierarchies = [h[column] for h in (new, *resolved.values()) if column in h]
                if hierarchies and not _exact([result.table], column, hierarchies):
                    continue
                group = [
                    e
                    for e in earlier
                    if column in released[e.id].columns
                    and (not hierarchies or _exact([released[e.id]], column, hierarchies))
                ]
                if len(group) > 1 and group not in groups:
                    groups.append(group)
        for group in groups:
            tables = [*(self.release_table(e.id) for e in group), result.table]
            linked = link_releases(
                tables,
                [*(f"release {e.id}" for e in group), "this release"],
                [*(self._resolved(e, tables, new) for e in group), new],
                max(k, *(e.k for e in group)),
                declared=_declared(group) | (set(new) - set(complementary)),
            )
            if linked is None or linked.k_anonymous:
                continue
            ids = " ".join(str(e.id) for e in group)
            raise VerificationError(
                f"linked with release(s) {ids} on {', '.join(linked.join_columns)}, as "
                f"'kanonym audit' links them, this release leaves {linked.classes_below_k} "
                f"class(es) ({linked.records_below_k} records) below k={linked.k}; nothing "
                f"written or recorded: base it on release {group[-1].id} (based_on), "
                "generalize the shared columns further, or leave out columns the earlier "
                "release published"
            )

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
                quasi_identifiers=tuple(json.loads(str(row["quasi_identifiers"]))),
                hierarchies={
                    name: HierarchyRecord(**record) for name, record in hierarchies.items()
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
        except (ValueError, TypeError, AttributeError) as error:
            raise InputError(f"{self.path}: release {row.get('id')} is damaged ({error})") from None

    def _secret(self, connection: sqlite3.Connection) -> bytes:
        found = connection.execute("SELECT value FROM meta WHERE name = 'key_secret'").fetchone()
        if found is None or not isinstance(found[0], bytes):
            raise InputError(f"{self.path}: damaged kanonym ledger (no key secret)")
        return found[0]

    def _record_keys(self, keys: pl.Series) -> tuple[pl.DataFrame, set[int]]:
        """Each key with its hash, and the recorded releases that published one of these records."""
        with self._connect() as connection:
            secret = self._secret(connection)
            # A cryptographic hash that stays the same in every version is needed,
            # which Polars' hash is not: one C call per record, once per release.
            hashes = [_key_hash(secret, value) for value in keys.cast(pl.String).to_list()]
            # One read transaction (a statement each would be many times slower).
            connection.execute("BEGIN")
            connection.execute("CREATE TEMP TABLE candidate (key_hash BLOB PRIMARY KEY)")
            connection.executemany(
                "INSERT OR IGNORE INTO candidate VALUES (?)", ((h,) for h in hashes)
            )
            sharing = connection.execute(
                "SELECT DISTINCT release_id FROM published JOIN candidate USING (key_hash)"
            ).fetchall()
            connection.execute("ROLLBACK")
        hashed = pl.DataFrame(
            {_KEY: keys.cast(pl.String), _KEY_HASH: pl.Series(hashes, dtype=pl.Binary)}
        )
        return hashed, {int(row[0]) for row in sharing}

    def release(
        self,
        data: str | Path | pl.DataFrame | pandas.DataFrame,
        config: AnonymizationConfig,
        *,
        output: str | Path,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
        key: str | None = None,
        based_on: int | None = None,
        replay: int | None = None,
        delimiter: str | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> LedgerRelease:
        """Release ``data`` under ``config`` and the ledger's policies, write it, record it.

        Args:
            data: the source (a CSV or Parquet path, or a DataFrame).
            config: the job, as for :func:`kanonym.anonymize`.
            output, report: the release file and its report (which gains a
                ``ledger`` object).
            report_html: the HTML report (:mod:`kanonym.report.html`), written
                with the other files.
            key: column identifying records; recorded (hashed) per released
                record and never released. Needed by later ``based_on``
                releases; defaults to the key of ``based_on`` or ``replay``.
            based_on: an earlier release this one derives from (new rows added
                to its source): no complementary attributes; levels at least
                those of ``based_on``; every record published no more
                specifically than ``based_on`` did.
            replay: an earlier release of the same source to re-run with its
                seed; the release must come out identical to it.
            delimiter, on_progress: as for :func:`kanonym.anonymize`.

        Raises:
            InputError: a policy refuses the release (seed already used, replay
                that differs, unknown release, bad key), or any bad input.
            VerificationError: the release failed its re-check, or the temporal
                check. Nothing is written or recorded then.
        """
        return self._release(
            data,
            config,
            output=output,
            report=report,
            report_html=report_html,
            key=key,
            based_on=based_on,
            replay=replay,
            delimiter=delimiter,
            on_progress=on_progress,
        )

    def _release(
        self,
        data: str | Path | pl.DataFrame | pandas.DataFrame,
        config: AnonymizationConfig,
        *,
        output: str | Path,
        report: str | Path | None,
        report_html: str | Path | None,
        key: str | None,
        based_on: int | None,
        replay: int | None,
        delimiter: str | None,
        on_progress: Callable[[Progress], None] | None,
    ) -> LedgerRelease:
        started = time.perf_counter()
        check_destinations(
            {"output": output, "report": report, "report_html": report_html},
            {"ledger": self.path, "input table": data if isinstance(data, str | Path) else None},
        )
        table = load(data, delimiter=delimiter)
        source = str(Path(data).resolve()) if isinstance(data, str | Path) else _DATAFRAME
        fingerprint = table_fingerprint(table.frame)
        read_seconds = time.perf_counter() - started
        # Releases of one source wait for each other, so that each is planned
        # against every earlier one (seed, complementary and temporal policies);
        # releases of other sources go ahead side by side.
        with self._source_lock((source, fingerprint)):
            entries = self.entries()
            by_id = {entry.id: entry for entry in entries}
            replayed = None if replay is None else _lookup(by_id, replay, "--replay")
            base = None if based_on is None else _lookup(by_id, based_on, "--based-on")
            key = key or (base.key if base else None) or (replayed.key if replayed else None)
            hashed: pl.DataFrame | None = None
            sharing: set[int] = set()
            if key is not None and key in table.frame.columns:
                # Hashing the keys creates a new ledger (for its secret): a table
                # the key policy refuses must not create one.
                fresh = not self.path.exists()
                if fresh and key not in config.hierarchies and key not in config.sensitive:
                    _require_unique_keys(table, key)
                hashed, sharing = self._record_keys(table.frame.get_column(key))
            elif key is None:
                # A key column an earlier release of this source (same file or
                # content, or sharing record keys) was made with stays a key: it is
                # never released, even when this run does not name it.
                for column in dict.fromkeys(e.key for e in reversed(entries) if e.key is not None):
                    if column not in table.frame.columns:
                        continue
                    candidate, shared = self._record_keys(table.frame.get_column(column))
                    keyed_before = any(
                        e.key == column
                        and (
                            e.id in shared
                            or _same_source(e.source, e.source_sha256, source, fingerprint)
                        )
                        for e in entries
                    )
                    if keyed_before:
                        key, hashed, sharing = column, candidate, shared
                        break
            same = [
                e
                for e in entries
                if e.id in sharing or _same_source(e.source, e.source_sha256, source, fingerprint)
            ]
            last_id = max((e.id for e in entries), default=0)
            plan = _plan(
                table,
                config,
                same=same,
                key=key,
                base=base,
                replayed=replayed,
                last_id=last_id,
                earlier_hierarchies=self._earlier_hierarchies(table, same),
            )
            result = anonymize_table(
                table, plan.config, read_seconds=read_seconds, on_progress=on_progress
            )
            published = None
            previous = None  # what plan.base published per record, read once
            kept_cells = 0
            if plan.key is not None and hashed is not None:
                if plan.base is not None:
                    previous = self.published(plan.base.id)
                    result, kept_cells = _keep_published_generality(
                        result, plan.key, hashed, previous, plan.base, table
                    )
                published = _published(result.table, plan.key, hashed, list(result.hierarchies))
                # The key leaves the release here; the report lists it as identifying.
                result = dataclasses.replace(
                    result,
                    table=result.table.drop(plan.key),
                    config=dataclasses.replace(
                        result.config,
                        identifying=(*result.config.identifying, plan.key),
                        insensitive=tuple(c for c in result.config.insensitive if c != plan.key),
                    ),
                )
            release_sha256 = table_fingerprint(result.table)
            if plan.replayed is not None and release_sha256 != plan.replayed.release_sha256:
                raise InputError(
                    f"--replay {plan.replayed.id}: this run does not reproduce release "
                    f"{plan.replayed.id} (different options or source); nothing written"
                )
            if plan.base is not None and published is not None and previous is not None:
                _check_temporal(published, previous, plan.base, result.hierarchies)
            self._check_links(result, same, plan.complementary)
            return self._write_and_record(
                plan,
                result,
                published,
                output=Path(output),
                report=None if report is None else Path(report),
                report_html=None if report_html is None else Path(report_html),
                kept_cells=kept_cells,
                source=source,
                fingerprint=fingerprint,
                release_sha256=release_sha256,
                key_hashes=hashed,
            )

    @contextlib.contextmanager
    def _source_lock(self, names: Sequence[str]) -> Iterator[None]:
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

    def _write_and_record(
        self,
        plan: _Plan,
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
            entry = _new_entry(
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
                        same_source=lambda e, c: (
                            _same_source(e.source, e.source_sha256, source, fingerprint)
                            or _shares_keys(c, e.id, key_hashes)
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
        same_source: Callable[[LedgerEntry, sqlite3.Connection], bool],
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
                    if any(same_source(e, connection) for e in newer):
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


def _new_entry(
    release_id: int,
    plan: _Plan,
    result: Result,
    *,
    source: str,
    fingerprint: str,
    release_sha256: str,
    output: Path,
    report: Path | None,
) -> LedgerEntry:
    return LedgerEntry(
        id=release_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        kanonym_version=__version__,
        source=source,
        source_sha256=fingerprint,
        source_rows=result.input_rows,
        quasi_identifiers=tuple(result.hierarchies),
        hierarchies={
            name: HierarchyRecord(
                source=h.name,
                height=h.height,
                sha256=hashlib.sha256(h.to_arx_csv().encode("utf-8")).hexdigest(),
            )
            for name, h in result.hierarchies.items()
        },
        models=tuple(model.describe() for model in result.models),
        transformation=None if result.transformation is None else dict(result.transformation),
        recoding=None if result.recoding is None else dict(result.recoding),
        seed=result.seed,
        released_columns=tuple(result.table.columns),
        released_rows=result.table.height,
        release_sha256=release_sha256,
        key=plan.key,
        based_on=None if plan.base is None else plan.base.id,
        replay_of=None if plan.replayed is None else plan.replayed.id,
        complementary=plan.complementary,
        output=str(output.resolve()),
        report=None if report is None else str(report.resolve()),
    )


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
            {name: dataclasses.asdict(record) for name, record in entry.hierarchies.items()}
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
    names = [c for c in published.columns if c != _KEY_HASH]
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
            records.get_column(_KEY_HASH).to_list(),
            records.get_column(_CLASS).to_list(),
            strict=True,
        ),
    )


def _key_hash(secret: bytes, value: str | None) -> bytes:
    """Keyed BLAKE2b (RFC 7693) of a record key; a tag byte keeps the missing key apart."""
    data = b"\x00" if value is None else b"\x01" + value.encode("utf-8")
    return hashlib.blake2b(data, key=secret, digest_size=32).digest()


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


def _same_source(path: str, sha256: str, source: str, fingerprint: str) -> bool:
    """Same content, or the same file path (a DataFrame has none)."""
    return sha256 == fingerprint or (source != _DATAFRAME and path == source)


def _lookup(entries: Mapping[int, LedgerEntry], release_id: int, flag: str) -> LedgerEntry:
    if isinstance(release_id, bool) or not isinstance(release_id, int):
        raise InputError(f"{flag} must be a release number, got {release_id!r}")
    if release_id not in entries:
        raise InputError(f"{flag} {release_id}: no such release in the ledger")
    return entries[release_id]


def _plan(
    table: Table,
    config: AnonymizationConfig,
    *,
    same: Sequence[LedgerEntry],
    key: str | None,
    base: LedgerEntry | None,
    replayed: LedgerEntry | None,
    last_id: int,
    earlier_hierarchies: Mapping[str, HierarchyLike],
) -> _Plan:
    """Apply the seed, key, temporal and complementary policies to the job.

    ``same`` are the recorded releases of the same source: same file, same
    content, or sharing a record key with this table. ``earlier_hierarchies``
    are the hierarchies earlier releases of it generalized columns with.
    """
    if replayed is not None and replayed not in same:
        raise InputError(f"--replay {replayed.id}: release {replayed.id} is of another source")
    seed = _seed(config.seed, same, replayed)
    identifying = _key_policy(table, config, key, base)
    quasi_identifiers: dict[str, HierarchyLike] = dict(config.hierarchies)
    min_levels = dict(config.min_levels)
    complementary: tuple[str, ...] = ()
    if base is not None:
        # Temporal: the earlier release's quasi-identifiers stay generalized, at
        # least as high as it generalized them.
        for name in base.quasi_identifiers:
            if name not in quasi_identifiers:
                quasi_identifiers[name] = parse_hierarchy(base.hierarchies[name].source)
            if base.transformation is None:
                # A local recoding has no levels to start from; the check before
                # writing still refuses any record published more specifically.
                continue
            level = base.transformation[name]
            if config.max_levels.get(name, level) < level:
                raise InputError(
                    f"--based-on {base.id}: max-level {config.max_levels[name]} of '{name}' "
                    f"is below level {level}, which release {base.id} published"
                )
            min_levels[name] = max(min_levels.get(name, 0), level)
    else:
        # Complementary release: whatever earlier releases of this source published
        # can be linked on, so it is part of the quasi-identifier.
        horizon = replayed.id if replayed is not None else None
        before = {
            column
            for e in same
            if horizon is None or e.id < horizon
            for column in e.released_columns
        }
        # Only columns this job releases unchanged join: a column it names in no
        # role stays unassigned, and is refused as such, rather than being released.
        unchanged = {*config.sensitive, *config.insensitive}
        if config.keep_unlisted:
            unchanged.update(config.unassigned(table.frame.columns))
        complementary = tuple(
            c
            for c in table.frame.columns
            if c in before and c in unchanged and c not in identifying and c != key
        )
        for name in complementary:
            if name in config.sensitive:
                raise InputError(
                    f"column '{name}' was published by an earlier release of this source, so it "
                    "joins the quasi-identifier (complementary release) and cannot be sensitive; "
                    "drop it from --sensitive or use --based-on"
                )
            # The hierarchy an earlier release generalized it with, so that the
            # releases' labels nest and link; suppression if none did.
            quasi_identifiers[name] = earlier_hierarchies.get(name, SuppressBuilder())
    try:
        # The key travels through the pipeline as an unchanged column, so that each
        # released row keeps its record's key; it is dropped before anything is written.
        insensitive = tuple(
            c for c in config.insensitive if c not in quasi_identifiers and c != key
        ) + (() if key is None else (key,))
        final = dataclasses.replace(
            config,
            quasi_identifiers=quasi_identifiers,
            identifying=identifying,
            insensitive=insensitive,
            min_levels=min_levels,
            seed=seed,
        )
    except InputError as error:
        what = f"--based-on {base.id}" if base is not None else "complementary release"
        raise type(error)(f"{what}: {error}") from None
    return _Plan(
        config=final,
        key=key,
        base=base,
        replayed=replayed,
        complementary=complementary,
        last_id=last_id,
    )


def _seed(given: int | None, same: Sequence[LedgerEntry], replayed: LedgerEntry | None) -> int:
    """The shuffle seed: never one used for this source, except by a replay."""
    used = {e.seed: e.id for e in same}
    if replayed is not None:
        if given is not None and given != replayed.seed:
            raise InputError(
                f"--replay {replayed.id} re-uses seed {replayed.seed}; --seed {given} "
                "contradicts it"
            )
        return replayed.seed
    if given is not None:
        if given >= _SEED_LIMIT:
            raise InputError(f"seed must be below 2**63 to be recorded, got {given}")
        if given in used:
            raise InputError(
                f"seed {given} was already used for this source by release {used[given]}; "
                f"give another --seed, or --replay {used[given]} to re-run that release"
            )
        return given
    while True:
        drawn = secrets.randbits(63)
        if drawn not in used:
            return drawn


def _key_policy(
    table: Table, config: AnonymizationConfig, key: str | None, base: LedgerEntry | None
) -> tuple[str, ...]:
    """Check the key column; returns the identifying columns for the search.

    The key is left out of them: it goes through the pipeline as a released
    column, so each released row still carries its record's key, and is
    dropped before the release is written.
    """
    if base is not None:
        if base.key is None:
            raise InputError(
                f"--based-on {base.id}: release {base.id} was made without --key, so what it "
                "published per record is unknown"
            )
        if key != base.key:
            raise InputError(
                f"--based-on {base.id}: release {base.id} identifies records by '{base.key}', "
                f"not '{key}'"
            )
    if key is None:
        return config.identifying
    if key not in table.frame.columns:
        raise InputError(
            f"{table.source}: key column '{key}' not found; columns are {table.frame.columns}"
        )
    if key in config.hierarchies or key in config.sensitive:
        raise InputError(f"key column '{key}' is never released, so it cannot be a released role")
    _require_unique_keys(table, key)
    return tuple(name for name in config.identifying if name != key)


def _require_unique_keys(table: Table, key: str) -> None:
    """Refuse a key column in which two rows share a key (checked before the ledger is touched)."""
    duplicated = int(table.frame.get_column(key).is_duplicated().sum())
    if duplicated:
        # A key identifies a person (an SSN): the message never shows its values.
        raise InputError(
            f"{table.source}: key column '{key}': {duplicated} rows share their key with "
            "another row (key values are not shown); give every record a key of its own"
        )


def _published(
    released: pl.DataFrame, key: str, hashed: pl.DataFrame, names: Sequence[str]
) -> pl.DataFrame:
    """Per released row: the hash of its record's key and its quasi-identifier values.

    ``released`` is the verified release still holding the key column;
    ``hashed`` maps each key (as text) to its hash.
    """
    columns = [pl.col(key).cast(pl.String).alias(_KEY), *(pl.col(n).cast(pl.String) for n in names)]
    return (
        released.select(columns)
        .join(hashed, on=_KEY, how="left", nulls_equal=True)
        .select(_KEY_HASH, *names)
    )


def _keep_published_generality(
    result: Result,
    key: str,
    hashed: pl.DataFrame,
    previous: pl.DataFrame,
    base: LedgerEntry,
    source: Table,
) -> tuple[Result, int]:
    """Build on the earlier release: a record keeps the generality it was published with.

    Where ``base`` published a record's quasi-identifier more generally than
    this release would (e.g. a cell it blanked with ``*``), the record gets
    ``base``'s value again (Sweeney 2002, §4.3: what was released stays
    released; publishing it more specifically would complete it). The changed
    table is re-verified, k-anonymity and every model, independently of the
    search; a failure raises VerificationError and nothing is written.
    Returns the release and the number of cells that kept ``base``'s value
    (the report's metrics stay those of the search's node).
    """
    old = "__kanonym_old"
    names = [n for n in base.quasi_identifiers if n in result.table.columns]
    frame = (
        result.table.with_row_index("__kanonym_row")
        .with_columns(pl.col(key).cast(pl.String).alias(_KEY))
        .join(hashed, on=_KEY, how="left", nulls_equal=True)
        .join(
            previous.select(_KEY_HASH, *(pl.col(n).alias(f"{n}{old}") for n in names)),
            on=_KEY_HASH,
            how="left",
        )
    )
    changed = 0
    for name in names:
        finer = (
            ancestor_pairs(result.hierarchies[name])
            .filter(pl.col("value") != pl.col("ancestor"))
            .with_columns(pl.lit(True).alias("__kanonym_finer"))
        )
        frame = frame.join(
            finer,
            left_on=[name, f"{name}{old}"],
            right_on=["value", "ancestor"],
            how="left",
            nulls_equal=True,
        )
        flag = frame.get_column("__kanonym_finer").fill_null(False)
        changed += int(flag.sum())
        frame = frame.with_columns(
            pl.when(flag).then(pl.col(f"{name}{old}")).otherwise(pl.col(name)).alias(name)
        ).drop("__kanonym_finer")
    if not changed:
        return result, 0
    table = frame.sort("__kanonym_row").select(result.table.columns)
    quasi_identifiers = list(result.hierarchies)
    summary = measure(table, quasi_identifiers, result.config.k)
    if not summary.k_anonymous:
        raise VerificationError(
            f"keeping what release {base.id} published for {changed} cell(s) leaves "
            f"{summary.rows_below_k} rows in classes smaller than {result.config.k}"
        )
    verify_models(
        table, quasi_identifiers=quasi_identifiers, source=source.frame, models=result.models
    )
    return dataclasses.replace(result, table=table), changed


def _check_temporal(
    published: pl.DataFrame,
    previous: pl.DataFrame,
    base: LedgerEntry,
    hierarchies: Mapping[str, Hierarchy],
) -> None:
    """Raise VerificationError if a record would be published more specifically than before.

    ``published`` and ``previous`` are what this release and ``base`` publish
    per record (:meth:`Ledger.published`). For every record in both and every
    quasi-identifier of ``base``, the new value must be the old one or one of
    its generalizations in this release's hierarchy (Sweeney 2002, §4.3).
    """
    suffix = "__kanonym_new"
    both = previous.join(published, on=_KEY_HASH, suffix=suffix)
    for name in base.quasi_identifiers:
        bad = both.join(
            ancestor_pairs(hierarchies[name]),
            left_on=[name, f"{name}{suffix}"],
            right_on=["value", "ancestor"],
            how="anti",
            nulls_equal=True,
        )
        if bad.height:
            raise VerificationError(
                f"{bad.height} record(s) would get a value of '{name}' more specific than (or "
                f"unrelated to) what release {base.id} published for them"
            )


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    found = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None


def _declared(entries: Sequence[LedgerEntry]) -> set[str]:
    """The quasi-identifiers the releases were made with, less their complementary attributes."""
    return {q for e in entries for q in e.quasi_identifiers if q not in e.complementary}


def link_releases(
    tables: Sequence[pl.DataFrame],
    names: Sequence[str],
    hierarchies: Sequence[Mapping[str, Hierarchy]],
    k: int,
    *,
    declared: Collection[str],
) -> AuditResult | None:
    """Link released tables on what they share, as the ledger audits them; None if nothing can.

    Every column a release generalized is compared through its hierarchies
    (all those the releases used for it). The releases are joined on the
    columns they all share that each publishes exactly (every value a leaf:
    a column no release generalized, or one left at its leaves). The classes
    of the linked table are split by ``declared``, the quasi-identifiers the
    releases were made with (not the attributes added to them only because an
    earlier release published them: those link releases to each other, not
    to identities). Releases that share no exact column cannot be linked row
    by row: None.
    """
    frames = [t.with_columns(pl.all().cast(pl.String)) for t in tables]
    per_column: dict[str, list[Hierarchy]] = {}
    for found in hierarchies:
        for name, hierarchy in found.items():
            same = per_column.setdefault(name, [])
            if all(h.levels != hierarchy.levels for h in same):
                same.append(hierarchy)
    shared = set(frames[0].columns).intersection(*(f.columns for f in frames[1:]))
    join = [
        c
        for c in frames[0].columns
        if c in shared and (c not in per_column or _exact(frames, c, per_column[c]))
    ]
    if not join:
        return None
    split = [c for c in per_column if c in declared]
    return link(frames, names, per_column, k, join=join, classes_on=split)


def _exact(frames: Sequence[pl.DataFrame], column: str, hierarchies: Sequence[Hierarchy]) -> bool:
    """Every release publishes ``column`` exactly: each value is a label covering one leaf."""
    covers = leaf_covers(hierarchies)
    single = (
        covers.group_by("label").agg(pl.len().alias("n")).filter(pl.col("n") == 1).select("label")
    )
    values = pl.concat([f.select(pl.col(column).alias("label")) for f in frames]).unique()
    return values.join(single, on="label", how="anti", nulls_equal=True).height == 0


def _shares_keys(
    connection: sqlite3.Connection, release_id: int, key_hashes: pl.DataFrame | None
) -> bool:
    """Whether release ``release_id`` published one of these record keys (keyed hashes)."""
    if key_hashes is None:
        return False
    hashes = key_hashes.get_column(_KEY_HASH).to_list()
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS mine (key_hash BLOB PRIMARY KEY)")
    connection.execute("DELETE FROM mine")
    connection.executemany("INSERT OR IGNORE INTO mine VALUES (?)", ((h,) for h in hashes))
    found = connection.execute(
        "SELECT 1 FROM published JOIN mine USING (key_hash) WHERE release_id = ? LIMIT 1",
        (release_id,),
    ).fetchone()
    return found is not None
