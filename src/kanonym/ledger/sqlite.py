"""A ledger in one SQLite file: opened, checked, created whole, locked.

The file's ``PRAGMA application_id`` marks it as a kanonym ledger and ``PRAGMA
user_version`` holds its schema version
(:data:`~kanonym.ledger.database.LEDGER_SCHEMA_VERSION`). It is created with
its first record, built beside its path and linked into place (never a
half-made ledger), private (0600: it holds the secret of the record keys'
hashes). Releases of one source wait for each other through byte-range locks
(POSIX ``lockf``) in one lock file beside the ledger.

Example (a ledger is created with its first record; until then it reads as empty):
    >>> import tempfile
    >>> database = SqliteDatabase(Path(tempfile.mkdtemp()) / "ledger.sqlite", create=True)
    >>> database.exists()
    False
    >>> with database.connect() as session:
    ...     session.execute("SELECT count(*) FROM releases").fetchone()[0]
    0
    >>> database.exists()
    True
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from kanonym.errors import InputError
from kanonym.io.write import sync_directory
from kanonym.ledger.database import (
    LEDGER_SCHEMA_VERSION,
    SCHEMA,
    V2_SCHEMA,
    V3_SCHEMA,
    V4_SCHEMA,
    Rows,
    Session,
)

BUSY_TIMEOUT_SECONDS = 30.0
"""How long a release waits for another process's ledger transaction to end."""

_APPLICATION_ID = 0x6B616E6C  # "kanl": marks the SQLite file as a kanonym ledger
# The write lock's byte in the lock file: past every source's (4-byte offsets).
_WRITE_LOCK_OFFSET = 2**32


class SqliteSession:
    """An SQLite connection in autocommit mode (every transaction an explicit BEGIN)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, statement: str, params: Sequence[object] = ()) -> Rows:
        """Run one statement."""
        return self.connection.execute(statement, params)

    def insert(self, table: str, rows: Sequence[Sequence[object]]) -> None:
        """Append ``rows`` to ``table`` (one prepared statement)."""
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            self.connection.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


class SqliteDatabase:
    """A ledger file (see module docstring).

    Raises:
        InputError: the path is a directory, cannot be opened, is not an SQLite
            database, is a database of another application, or has a ledger
            schema newer than this kanonym's; or (``create=False``) does not exist.
    """

    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: Path, *, create: bool) -> None:
        self.path = path
        self.file: Path | None = path
        self.name = str(path)
        # The row of pending_files naming a journal commits its files.
        self.decided_by = {
            "database": str(path.absolute()),
            "table": "pending_files",
            "column": "journal",
        }
        if path.is_dir():
            raise InputError(f"{path}: is a directory, not a ledger file")
        if not create and not path.exists():
            raise InputError(f"{path}: ledger not found")
        self._read_only = not create
        if not path.exists():
            if not path.parent.is_dir():
                raise InputError(
                    f"{path}: cannot open ledger (directory {path.parent} does not exist)"
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
                raise InputError(f"{path}: not a kanonym ledger (not an SQLite database)") from None
            if (app_id, version, objects) == (0, 0, 0):
                if not create:
                    raise InputError(f"{path}: an empty database, not a kanonym ledger")
                _create(connection)
            elif app_id != _APPLICATION_ID:
                raise InputError(
                    f"{path}: not a kanonym ledger (an SQLite database of another application)"
                )
            elif version > LEDGER_SCHEMA_VERSION:
                raise InputError(
                    f"{path}: ledger schema version {version} is newer than this kanonym "
                    f"supports ({LEDGER_SCHEMA_VERSION}); upgrade kanonym"
                )
            elif version < 1:
                raise InputError(f"{path}: damaged kanonym ledger (schema version {version})")
            elif version < LEDGER_SCHEMA_VERSION and create:
                _upgrade(connection)

    def exists(self) -> bool:
        """Whether the ledger file exists."""
        return self.path.exists()

    @contextlib.contextmanager
    def connect(self) -> Iterator[SqliteSession]:
        """A session; the file is created first when absent (unless opened read-only)."""
        if not self._read_only and not self.path.exists():
            self._create_file()
        with self._connect() as connection:
            yield SqliteSession(connection)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode: every transaction is an explicit BEGIN."""
        try:
            if self._read_only:
                connection = sqlite3.connect(
                    f"{self.path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None
                )
            else:
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
                _create(connection)
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

    def begin_write(self, session: Session) -> None:
        """``BEGIN IMMEDIATE``: the database's write lock, waited for up to the busy timeout."""
        session.execute("BEGIN IMMEDIATE")

    def has_table(self, session: Session, name: str) -> bool:
        """Whether the file has table ``name``."""
        found = session.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return found is not None

    @contextlib.contextmanager
    def source_lock(self, names: Sequence[str]) -> Iterator[None]:
        """Hold the ledger's lock of each source name (its path, its fingerprint), waiting.

        One lock file beside the ledger (``.NAME.lock``, empty, kept) carries one
        byte-range lock per source name (POSIX ``lockf``), so that only releases
        of the same source wait for each other. Names are locked in a fixed
        order, so two releases never wait for each other in a circle.
        """
        offsets = sorted(
            {int.from_bytes(hashlib.sha256(n.encode()).digest()[:4], "big") for n in names}
        )
        with self._lock_file() as descriptor:
            for offset in offsets:
                fcntl.lockf(descriptor, fcntl.LOCK_EX, 1, offset)
            yield

    @contextlib.contextmanager
    def write_lock(self, *, wait: bool = True) -> Iterator[bool]:
        """Hold the lock of recording releases: one more byte of the lock file."""
        with self._lock_file() as descriptor:
            try:
                fcntl.lockf(
                    descriptor,
                    fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB),
                    1,
                    _WRITE_LOCK_OFFSET,
                )
            except BlockingIOError:
                yield False
                return
            yield True

    @contextlib.contextmanager
    def _lock_file(self) -> Iterator[int]:
        """The lock file's descriptor; closing it drops every lock taken through it."""
        lock_file = self.path.with_name(f".{self.path.name}.lock")
        try:
            descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise InputError(
                f"{self.path}: cannot lock the ledger ({error.strerror or error})"
            ) from None
        try:
            yield descriptor
        finally:
            os.close(descriptor)


def _create(connection: sqlite3.Connection) -> None:
    with _immediate(connection):
        # Another process may have created it between our check and the lock.
        if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            for statement in SCHEMA:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO meta VALUES ('key_secret', ?)", (secrets.token_bytes(32),)
            )
            connection.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {LEDGER_SCHEMA_VERSION}")


def _upgrade(connection: sqlite3.Connection) -> None:
    """Versions 1 to 3 -> 4: add what the later versions introduced (nothing else
    changed)."""
    with _immediate(connection):
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        added = {
            1: (*V2_SCHEMA, *V3_SCHEMA, *V4_SCHEMA),
            2: (*V3_SCHEMA, *V4_SCHEMA),
            3: V4_SCHEMA,
        }.get(version, ())
        for statement in added:
            connection.execute(statement)
        if added:
            connection.execute(f"PRAGMA user_version = {LEDGER_SCHEMA_VERSION}")


@contextlib.contextmanager
def _immediate(connection: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, committed at the end, rolled back on any error."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")
        raise
