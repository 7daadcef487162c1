"""A ledger in a PostgreSQL schema, shared by every officer who releases from one database.

The ledger is named by a URL, ``postgresql://USER@HOST:PORT/DB?schema=NAME``
(the schema defaults to ``kanonym_ledger``; other parameters, such as
``sslmode``, go to the server; the password comes from ``PGPASSWORD``, a
``.pgpass`` or a service file). Its tables are those of the SQLite ledger
(:data:`~kanonym.ledger.database.SCHEMA`, ``BLOB`` read as ``bytea``,
``INTEGER`` as ``bigint`` and ``REAL`` as ``double precision``), created in
that schema, in one transaction, with the first record (a version 3 ledger is
upgraded in place, in one transaction too); the schema version and the secret
of the record keys' hashes are rows of ``meta``, readable by whoever may read
the schema.

Releases are ordered by the server's advisory locks, which end with the
session that took them (so a killed client never leaves one held): a
session-level lock per source name makes releases of one source wait for
each other, from planning to recording; a lock per ledger is held while a
release is recorded; and the transaction that records takes ``LOCK TABLE
releases IN SHARE ROW EXCLUSIVE MODE`` (one writer at a time, readers never
wait), so that numbers are given out once each and in order.

Example (nothing connects until a ledger is opened):
    >>> location = LedgerLocation.parse("postgresql://ann:pw@db:5432/health?schema=ledger")
    >>> location.schema, location.shown, location.plain
    ('ledger', 'postgresql://ann:***@db:5432/health?schema=ledger', 'postgresql://ann@db:5432/health')
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from kanonym.engine.base import ServerRelease
from kanonym.engine.postgres import PostgresEngine, PostgresLocation, PostgresRelease, redact
from kanonym.errors import InputError
from kanonym.ledger.database import LEDGER_SCHEMA_VERSION, SCHEMA, V4_SCHEMA, Rows, Session

if TYPE_CHECKING:
    import psycopg

DEFAULT_SCHEMA = "kanonym_ledger"
"""The schema of a ledger URL that names none."""

_APPLICATION = b"kanonym ledger"
# How long recovery waits for a server to finish a dead client's transaction.
_SETTLE_SECONDS = 30.0
# SQLite's spelling -> PostgreSQL's, for every statement of the ledger.
_DIALECT = (
    (re.compile(r"\bBLOB\b"), "BYTEA"),
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
    # PostgreSQL's REAL is 4 bytes; SQLite's, like a Python float, 8 (privacy charges add up).
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\s*\bWITHOUT ROWID\b"), ""),
)


def without_password(url: str) -> str:
    """``url`` with no password, neither in its user part nor as a ``password`` parameter:
    what the ledger stores of a URL (a client reconnects with ``PGPASSWORD`` or
    ``.pgpass``).

    Example:
        >>> without_password("postgresql://ann:pw@db/health?password=pw&table=t")
        'postgresql://ann@db/health?table=t'
    """
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username or ''}@{netloc.rsplit('@', 1)[1]}"
    params = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(key, value) for key, value in params if key != "password"])
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def table_name(url: str) -> str:
    """A database table or query as the ledger names it: the server, database and table
    (``SCHEMA.NAME``) or query, without a password or connection options, so that one
    table is one name however its URL was written.

    Example:
        >>> table_name("postgresql://ann:pw@db/health?sslmode=require&table=visits")
        'postgresql://ann@db:5432/health?table=public.visits'
    """
    location = PostgresLocation.parse(url)
    parts = urlsplit(location.conninfo)
    user = f"{parts.username}@" if parts.username else ""
    server = f"{parts.scheme}://{user}{parts.hostname or ''}:{parts.port or 5432}{parts.path}"
    if location.table is not None:
        return f"{server}?{urlencode({'table': '.'.join(location.table)})}"
    return f"{server}?{urlencode({'query': location.query})}"


def same_database(first: str, second: str) -> bool:
    """Whether two URLs name one database: the same host name, port and database name (two
    names of one host are two databases here, which only costs the single transaction)."""

    def place(url: str) -> tuple[str, int, str]:
        parts = urlsplit(url)
        return (parts.hostname or "", parts.port or 5432, parts.path.lstrip("/"))

    return place(first) == place(second)


def first_line(message: str) -> str:
    """The first non-empty line of a server message, any ``password=...`` hidden."""
    line = next((part.strip() for part in message.splitlines() if part.strip()), message)
    return re.sub(r"password=\S+", "password=***", line)


def connect(conninfo: str, shown: str) -> psycopg.Connection[Any]:
    """A connection to ``conninfo`` in autocommit mode (every transaction an explicit
    ``BEGIN``), or an :class:`InputError` naming ``shown`` (no password)."""
    try:
        import psycopg
    except ImportError as error:  # pragma: no cover - the extra is part of dev
        raise InputError(
            "a ledger in PostgreSQL needs the psycopg driver: pip install 'kanonym[postgres]'"
        ) from error
    try:
        return psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
    except psycopg.Error as error:
        raise InputError(f"{shown}: cannot connect: {first_line(str(error))}") from None


def transaction_status(url: str, transaction_id: str) -> str | None:
    """Whether the transaction ``transaction_id`` of the database at ``url`` committed:
    ``committed``, ``aborted``, or ``in progress`` (waited for up to 30 s, as the server
    ends a dead client's transaction); None if the server cannot tell (so old that its
    status is gone).

    Raises:
        InputError: the server cannot be reached.
    """
    import psycopg

    shown = redact(url)
    deadline = time.monotonic() + _SETTLE_SECONDS
    with connect(url, shown) as connection:
        while True:
            try:
                found = connection.execute(
                    "SELECT pg_xact_status(%s::xid8)", [transaction_id]
                ).fetchone()
            except psycopg.Error as error:
                raise InputError(f"{shown}: {first_line(str(error))}") from None
            status = None if found is None or found[0] is None else str(found[0])
            if status != "in progress" or time.monotonic() > deadline:
                return status
            time.sleep(0.2)


@dataclass(frozen=True)
class LedgerLocation:
    """A ledger's schema on a server, parsed from its URL.

    Attributes:
        conninfo: the URL without ``schema`` (what the driver connects to).
        schema: the ledger's schema.
        shown: the URL as messages show it (password redacted).
        plain: the server and database without a password: what is written in
            release journals, from which a later process reconnects.
    """

    conninfo: str
    schema: str
    shown: str
    plain: str

    @classmethod
    def parse(cls, url: str) -> LedgerLocation:
        """Read ``postgresql://USER@HOST:PORT/DB?schema=NAME`` (``schema`` optional).

        Raises:
            InputError: the URL names a table or a query (a ledger is a schema).
        """
        shown = redact(url)
        parts = urlsplit(url)
        params = parse_qsl(parts.query, keep_blank_values=True)
        if any(k in ("table", "query") for k, _ in params):
            raise InputError(
                f"{shown}: a ledger is a schema, not a table: give ?schema=NAME "
                f"(or nothing, for '{DEFAULT_SCHEMA}')"
            )
        schema = next((v for k, v in params if k == "schema"), DEFAULT_SCHEMA)
        if not schema:
            raise InputError(f"{shown}: the ledger's schema name is empty")
        conninfo = urlunsplit(
            parts._replace(query=urlencode([p for p in params if p[0] != "schema"]))
        )
        return cls(conninfo, schema, shown, without_password(conninfo))


class PostgresSession:
    """A connection running the ledger's SQL in its schema (``?`` read as ``%s``, the
    SQLite types as PostgreSQL's).

    ``in_transaction``: the connection is another's (the engine's, whose open
    transaction holds a release): the ledger's statements join that transaction,
    which the ledger neither begins nor ends.
    """

    def __init__(self, connection: psycopg.Connection[Any], schema: str, *, in_transaction: bool):
        self.connection = connection
        self.in_transaction = in_transaction
        # Temporary tables (pg_temp) are still found first.
        connection.execute(
            "SELECT set_config('search_path', quote_ident(%s), %s)", [schema, in_transaction]
        )

    def execute(self, statement: str, params: Sequence[object] = ()) -> Rows:
        """Run one statement of the ledger's SQL."""
        for pattern, replacement in _DIALECT:
            statement = pattern.sub(replacement, statement)
        statement = statement.replace("%", "%%").replace("?", "%s")
        return self.connection.execute(statement, list(params) or None)

    def insert(self, table: str, rows: Sequence[Sequence[object]]) -> None:
        """Append ``rows`` to ``table`` with ``COPY ... FROM STDIN`` (one round trip)."""
        from psycopg import sql

        if not rows:
            return
        with (
            self.connection.cursor() as cursor,
            cursor.copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(table))) as copy,
        ):
            for row in rows:
                copy.write_row(row)


class PostgresDatabase:
    """A ledger in a PostgreSQL schema (see module docstring).

    Raises:
        InputError: the server cannot be reached, the schema holds tables of
            another application, or a ledger schema newer than this kanonym's;
            or (``create=False``) no ledger is there.
    """

    def __init__(self, url: str, *, create: bool) -> None:
        import psycopg

        self.location = LedgerLocation.parse(url)
        self.name = self.location.shown
        self.file: Path | None = None
        self.errors: tuple[type[Exception], ...] = (psycopg.Error,)
        self.decided_by = {
            "database": self.location.plain,
            "schema": self.location.schema,
            "table": "pending_files",
            "column": "journal",
        }
        self._create = create
        self._exists = False
        with self._session() as session:
            version = self._version(session)
        if version is None and not create:
            raise InputError(f"{self.name}: ledger not found")
        if version is not None and version > LEDGER_SCHEMA_VERSION:
            raise InputError(
                f"{self.name}: ledger schema version {version} is newer than this kanonym "
                f"supports ({LEDGER_SCHEMA_VERSION}); upgrade kanonym"
            )
        if version is not None and version < LEDGER_SCHEMA_VERSION and create:
            self._upgrade()

    def _key(self, name: str) -> int:
        """The advisory lock key of ``name`` in this ledger: 64 bits of a SHA-256."""
        scoped = f"kanonym ledger\0{self.location.schema}\0{name}".encode()
        return int.from_bytes(hashlib.sha256(scoped).digest()[:8], "big", signed=True)

    def _version(self, session: Session) -> int | None:
        """The schema version of the ledger here, or None if there is none (yet).

        Raises:
            InputError: the schema holds tables, but not a kanonym ledger's.
        """
        tables = {
            str(row[0])
            for row in session.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = ?", [self.location.schema]
            ).fetchall()
        }
        if not tables:
            return None
        found = (
            dict(session.execute("SELECT name, value FROM meta").fetchall())
            if ("meta" in tables)
            else {}
        )
        if found.get("application") != _APPLICATION or "schema_version" not in found:
            raise InputError(
                f"{self.name}: schema '{self.location.schema}' holds tables, but not a kanonym "
                "ledger; name another with ?schema=NAME"
            )
        self._exists = True
        return int(bytes(found["schema_version"]))

    def exists(self) -> bool:
        """Whether the ledger's tables exist (checked once found)."""
        if not self._exists:
            with self._session() as session:
                self._version(session)
        return self._exists

    @contextlib.contextmanager
    def _session(self) -> Iterator[PostgresSession]:
        """A session of the ledger's own; a server error inside becomes an InputError."""
        import psycopg

        connection = connect(self.location.conninfo, self.name)
        try:
            if not self._create:
                connection.execute("SET default_transaction_read_only = on")
            yield PostgresSession(connection, self.location.schema, in_transaction=False)
        except psycopg.Error as error:
            raise InputError(f"{self.name}: ledger error ({first_line(str(error))})") from None
        finally:
            connection.close()

    @contextlib.contextmanager
    def connect(self) -> Iterator[PostgresSession]:
        """A session; the ledger's schema and tables are created first when absent (unless
        opened read-only)."""
        with self._session() as session:
            if self._create and not self._exists:
                self._make(session)
            yield session

    def session_on(self, connection: psycopg.Connection[Any]) -> PostgresSession:
        """The ledger's SQL run in ``connection``'s open transaction (another's)."""
        return PostgresSession(connection, self.location.schema, in_transaction=True)

    def _make(self, session: PostgresSession) -> None:
        """Create the schema and its tables in one transaction (all or nothing), unless
        another process did first (one at a time: an advisory lock)."""
        import psycopg

        try:
            session.execute("BEGIN")
            session.execute("SELECT pg_advisory_xact_lock(?)", [self._key("create")])
            session.execute(f"CREATE SCHEMA IF NOT EXISTS {_identifier(self.location.schema)}")
            if self._version(session) is None:
                for statement in SCHEMA:
                    session.execute(statement)
                session.insert(
                    "meta",
                    [
                        ("application", _APPLICATION),
                        ("schema_version", str(LEDGER_SCHEMA_VERSION).encode()),
                        ("key_secret", secrets.token_bytes(32)),
                    ],
                )
            session.execute("COMMIT")
        except psycopg.Error as error:
            # Closing the session discards the transaction: all of the ledger or nothing.
            raise InputError(
                f"{self.name}: cannot create the ledger ({first_line(str(error))})"
            ) from None
        self._exists = True

    def _upgrade(self) -> None:
        """Version 3 (the first in PostgreSQL) -> 4 in one transaction (all or nothing), one
        process at a time (the advisory lock of creation); the role must own the tables.

        Raises:
            InputError: the server refuses (no privilege), or the version is unknown.
        """
        import psycopg

        with self._session() as session:
            try:
                session.execute("BEGIN")
                session.execute("SELECT pg_advisory_xact_lock(?)", [self._key("create")])
                # Another process may have upgraded it between our check and the lock.
                version = self._version(session)
                if version is not None and version < LEDGER_SCHEMA_VERSION:
                    if version != 3:
                        raise InputError(
                            f"{self.name}: damaged kanonym ledger (schema version {version})"
                        )
                    for statement in V4_SCHEMA:
                        session.execute(statement)
                    session.execute(
                        "UPDATE meta SET value = ? WHERE name = 'schema_version'",
                        [str(LEDGER_SCHEMA_VERSION).encode()],
                    )
                session.execute("COMMIT")
            except psycopg.Error as error:
                # Closing the session discards the transaction: upgraded whole or not at all.
                raise InputError(
                    f"{self.name}: cannot upgrade the ledger to schema version "
                    f"{LEDGER_SCHEMA_VERSION} ({first_line(str(error))})"
                ) from None

    def begin_write(self, session: Session) -> None:
        """Begin (unless in another's transaction) and lock ``releases`` against other
        writers until the transaction ends."""
        if not (isinstance(session, PostgresSession) and session.in_transaction):
            session.execute("BEGIN")
        session.execute("LOCK TABLE releases IN SHARE ROW EXCLUSIVE MODE")

    def has_table(self, session: Session, name: str) -> bool:
        """Whether the ledger's schema has table ``name`` (a version 3 ledger read without
        being upgraded lacks ``budgets``)."""
        found = session.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = ? AND tablename = ?",
            [self.location.schema, name],
        ).fetchone()
        return found is not None

    @contextlib.contextmanager
    def source_lock(self, names: Sequence[str]) -> Iterator[None]:
        """Hold one advisory lock per source name, waiting, in a session of its own (its
        end, or the client's death, drops them); keys in increasing order, so two releases
        never wait for each other in a circle."""
        with self._lock_session() as connection:
            for key in sorted({self._key(f"source\0{name}") for name in names}):
                connection.execute("SELECT pg_advisory_lock(%s)", [key])
            yield

    @contextlib.contextmanager
    def write_lock(self, *, wait: bool = True) -> Iterator[bool]:
        """Hold the ledger's advisory lock of recording releases, in a session of its own."""
        with self._lock_session() as connection:
            key = self._key("write")
            if wait:
                connection.execute("SELECT pg_advisory_lock(%s)", [key])
            else:
                found = connection.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()
                if not (found and found[0]):
                    yield False
                    return
            yield True

    @contextlib.contextmanager
    def _lock_session(self) -> Iterator[psycopg.Connection[Any]]:
        import psycopg

        connection = connect(self.location.conninfo, self.name)
        try:
            yield connection
        except psycopg.Error as error:
            raise InputError(
                f"{self.name}: cannot lock the ledger ({first_line(str(error))})"
            ) from None
        finally:
            connection.close()


def _identifier(name: str) -> str:
    """``name`` quoted as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class TableOutput:
    """A release published as a table of its input's database, verified and waiting in the
    PostgreSQL engine's open transaction until the ledger publishes it.

    Attributes:
        release: the verified release the engine keeps (held here, so that its
            connection stays open until it is published).
        destination: the table's URL, as given.
        replace: whether an existing table is replaced.
        dropped: released columns left out of the table (the record key).
    """

    release: ServerRelease
    destination: str
    replace: bool
    dropped: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.release.engine, PostgresEngine):
            raise InputError(
                f"{redact(self.destination)}: a release is published as a PostgreSQL table by "
                "the PostgreSQL engine that made it: release a postgresql:// input of that database"
            )

    @property
    def engine(self) -> PostgresEngine:
        """The engine holding the release."""
        engine = self.release.engine
        assert isinstance(engine, PostgresEngine)
        return engine

    @property
    def connection(self) -> psycopg.Connection[Any]:
        """The engine's connection, whose open transaction holds the release."""
        return self.engine.connection

    @property
    def database(self) -> str:
        """The engine's database, as its URL (what a client connects to)."""
        return self.engine.location.conninfo

    def without(self, column: str) -> TableOutput:
        """The same output, the table leaving out ``column``."""
        return dataclasses.replace(self, dropped=(*self.dropped, column))

    def transaction_id(self) -> str:
        """The id of the transaction that will publish the table (``pg_current_xact_id``)."""
        import psycopg

        try:
            found = self.connection.execute("SELECT pg_current_xact_id()::text").fetchone()
        except psycopg.Error as error:
            self.connection.rollback()
            raise InputError(f"{self.engine.source}: {first_line(str(error))}") from None
        return str(found[0]) if found else ""

    def publish(self) -> None:
        """Create the table as the verified release (less :attr:`dropped`) and commit the
        engine's transaction (:meth:`PostgresEngine.publish`)."""
        handle = self.release.handle
        assert isinstance(handle, PostgresRelease)
        kept = tuple(c for c in handle.columns if c not in self.dropped)
        self.engine.publish(
            dataclasses.replace(handle, columns=kept), self.destination, replace=self.replace
        )
