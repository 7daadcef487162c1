"""A throwaway PostgreSQL server for the test session (issue 12).

The PostgreSQL engine is tested against a real server, not a mock: Debian's
``postgresql`` binaries initialize a cluster in a temporary directory, and the
server listens on 127.0.0.1 on a free port and on a Unix socket inside that
directory. PostgreSQL refuses to run as root, and this suite runs as root here
and in CI, so the cluster belongs to an unprivileged user (``nobody``, or a
``kanonym-pg`` user made for it) and ``initdb``/``pg_ctl`` run through
``runuser``.

Authentication is real too, so tests can exercise a refused password: TCP
connections need the password of the superuser role ``kanonym`` (SCRAM), which
the session passes through ``PGPASSWORD`` and never in a URL, the way a user of
the engine would; the Unix socket trusts local connections, for set-up only.
Durability is off (``fsync``, ``synchronous_commit``, ``full_page_writes``): the
cluster is deleted at the end of the session, and crash safety would only cost
time.

The module knows nothing of pytest: :mod:`tests.conftest` turns a missing
server (:class:`ServerUnavailableError`) into a skip, or into a failure under CI.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

ROLE = "kanonym"
"""The superuser role the tests connect as."""
PASSWORD = "secret-test-pw"
"""Its password: fine in a repository, the server lives for one test session."""
DATABASE = "kanonym"
"""The database the tests work in (one schema per test)."""

# Preferred owner of the cluster when we are root: present on every Debian system.
_SERVER_USER = "nobody"
# Made with useradd when nobody does not exist (a minimal image may lack it).
_FALLBACK_USER = "kanonym-pg"
# Settings for a fast, disposable server; each is a postgresql.conf line.
_SETTINGS = (
    "fsync = off",
    "synchronous_commit = off",
    "full_page_writes = off",
    "shared_buffers = 16MB",
    "max_connections = 40",
    "password_encryption = 'scram-sha-256'",
    # No background checkpoints or autovacuum work competing with a test on 2 cores.
    "autovacuum = off",
    "checkpoint_timeout = 1h",
    "max_wal_size = 1GB",
    "log_min_messages = warning",
)
# How long pg_ctl may wait for the server to accept connections or to stop.
_TIMEOUT_SECONDS = 60
# A chosen free port can be taken by someone else before the server binds it.
_START_ATTEMPTS = 3


class ServerUnavailableError(RuntimeError):
    """No PostgreSQL server can be started here: binaries or psycopg missing.

    A broken installation (initdb or the server failing) is not this: it raises
    :class:`RuntimeError`, so it fails the tests everywhere instead of skipping.
    """


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None`` when they are not installed.

    ``pg_config --bindir`` first (it names the installation a build would use),
    then Debian's ``/usr/lib/postgresql/VERSION/bin`` (newest version first),
    then ``PATH``. Debian's ``pg_config`` comes with libpq-dev and names a
    server folder even when no server is installed, hence the check that the
    binaries are really there.
    """
    candidates: list[Path] = []
    try:
        reported = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
        if reported:
            candidates.append(Path(reported))
    except (OSError, subprocess.SubprocessError):
        pass
    debian = Path("/usr/lib/postgresql").glob("*/bin")
    candidates.extend(sorted(debian, key=_version_key, reverse=True))
    on_path = shutil.which("initdb")
    if on_path is not None:
        # resolve(): Debian's /usr/bin wrappers are not initdb itself, but a symlink
        # to the real one leads to the folder that holds pg_ctl and postgres too.
        candidates.extend((Path(on_path).parent, Path(on_path).resolve().parent))
    for folder in candidates:
        if all(_is_executable(folder / name) for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def _version_key(folder: Path) -> tuple[int, ...]:
    """``/usr/lib/postgresql/15/bin`` -> ``(15,)``: numeric, so 15 sorts after 9.6."""
    return tuple(int(part) for part in re.findall(r"\d+", folder.parent.name))


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_user() -> str | None:
    """The user the server runs as when we are root, ``None`` when we are not.

    Not root: the server runs as ourselves, which PostgreSQL accepts.
    """
    if os.geteuid() != 0:
        return None
    for name in (_SERVER_USER, _FALLBACK_USER):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _FALLBACK_USER],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return _FALLBACK_USER


def run_sql(url: str, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one statement in its own committed transaction; its rows, or ``[]`` when it has none.

    For tests that set up or inspect the database directly. ``url`` is a
    libpq URL such as :attr:`PostgresServer.url`; the password comes from
    ``PGPASSWORD`` as for any client.
    """
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement, params)
        return cursor.fetchall() if cursor.description is not None else []


@dataclass
class PostgresServer:
    """A running server: where it is, and how to stop it.

    Made by :func:`start`; :meth:`stop` shuts it down and deletes its files.
    """

    bindir: Path
    folder: Path
    port: int
    user: str | None
    started_seconds: float = 0.0
    """Wall time from initdb to accepting connections, for the record."""
    _stopped: bool = field(default=False, repr=False)

    @property
    def data(self) -> Path:
        """The cluster's data directory."""
        return self.folder / "data"

    @property
    def socket_dir(self) -> Path:
        """The folder of the server's Unix socket (trusted connections, for set-up)."""
        return self.folder / "socket"

    @property
    def url(self) -> str:
        """``postgresql://kanonym@127.0.0.1:PORT/kanonym``: TCP, password from ``PGPASSWORD``."""
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"

    def socket_url(self, database: str = DATABASE) -> str:
        """A URL through the trusted Unix socket, which needs no password."""
        return f"postgresql://{ROLE}@/{database}?host={self.socket_dir}&port={self.port}"

    def log(self) -> str:
        """The server's log so far (for failure messages)."""
        try:
            return (self.folder / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server at once and delete its files; calling it again does nothing.

        ``-m immediate``: nothing in a throwaway cluster needs a clean shutdown.
        """
        if self._stopped:
            return
        self._stopped = True
        try:
            _run(
                self,
                [
                    str(self.bindir / "pg_ctl"),
                    *("-D", str(self.data), "-m", "immediate"),
                    *("-w", "-t", str(_TIMEOUT_SECONDS), "stop"),
                ],
                check=False,
            )
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _run(
    server: PostgresServer, command: list[str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL program as the server's user, from a folder that user can read."""
    if server.user is not None:
        command = ["runuser", "-u", server.user, "--", *command]
    done = subprocess.run(
        command,
        cwd=server.folder,
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_SECONDS * 2,
        # LC_ALL=C: messages in English whatever the developer's locale.
        env={**os.environ, "LC_ALL": "C"},
    )
    if check and done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited with {done.returncode}:\n"
            f"{done.stdout}{done.stderr}\nserver log:\n{server.log()}"
        )
    return done


def start() -> PostgresServer:
    """Initialize a cluster in a new temporary directory and start a server on it.

    The returned server has the superuser role :data:`ROLE` (password
    :data:`PASSWORD`) and the empty database :data:`DATABASE`. Raises
    :class:`ServerUnavailableError` when PostgreSQL or psycopg is not installed, and
    :class:`RuntimeError` when they are but the server does not start.
    """
    bindir = find_bindir()
    if bindir is None:
        raise ServerUnavailableError(
            "PostgreSQL's server binaries (initdb, pg_ctl) were not found via pg_config, "
            "/usr/lib/postgresql/*/bin or PATH: install Debian's postgresql package"
        )
    try:
        import psycopg  # noqa: F401  (only checking that the client is there)
    except ImportError as missing:
        raise ServerUnavailableError(
            "psycopg is not installed: pip install -e '.[dev]' (or '.[postgres]')"
        ) from missing
    began = time.perf_counter()
    user = _server_user()
    folder = Path(tempfile.mkdtemp(prefix="kanonym-pg-"))
    server = PostgresServer(bindir=bindir, folder=folder, port=0, user=user)
    try:
        server.socket_dir.mkdir()
        password_file = folder / "password"
        password_file.write_text(PASSWORD + "\n")
        if user is not None:
            for path in (folder, server.socket_dir, password_file):
                shutil.chown(path, user)
        _run(
            server,
            [
                str(bindir / "initdb"),
                *("-D", str(server.data), "-U", ROLE, f"--pwfile={password_file}"),
                *("--auth-local=trust", "--auth-host=scram-sha-256"),
                # UTF-8 and no locale: the same collation and encoding on every machine.
                *("--encoding=UTF8", "--no-locale", "--no-sync", "--no-instructions"),
            ],
        )
        password_file.unlink()
        with (server.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# kanonym's test session (tests/postgres_server.py)\n")
            conf.write("listen_addresses = '127.0.0.1'\n")
            conf.write(f"unix_socket_directories = '{server.socket_dir}'\n")
            conf.write("".join(f"{line}\n" for line in _SETTINGS))
        _start_on_a_free_port(server)
        run_sql(server.socket_url("postgres"), f"CREATE DATABASE {DATABASE}")
    except BaseException:
        server.stop()
        raise
    server.started_seconds = time.perf_counter() - began
    return server


def _start_on_a_free_port(server: PostgresServer) -> None:
    """``pg_ctl start`` on a free port, trying another if the first was taken meanwhile."""
    for attempt in range(1, _START_ATTEMPTS + 1):
        server.port = _free_port()
        done = _run(
            server,
            [
                str(server.bindir / "pg_ctl"),
                *("-D", str(server.data), "-l", str(server.folder / "server.log")),
                *("-o", f"-p {server.port}", "-w", "-t", str(_TIMEOUT_SECONDS), "start"),
            ],
            check=attempt == _START_ATTEMPTS,
        )
        if done.returncode == 0:
            return


def copy_frame(url: str, frame: pl.DataFrame, schema: str, name: str) -> str:
    """Create ``schema.name`` with one TEXT column per column of ``frame`` and fill it by COPY.

    One CSV text written by Polars and sent in one COPY, never row by row, so a
    large frame loads as fast as the server can take it. Every value is cast to
    text and quoted, and a null is written as an unquoted empty field, which is
    how PostgreSQL's CSV format tells them apart: ``""`` stays an empty string.
    Returns ``"schema.name"``, the name to put in an engine URL's ``table=``.
    """
    import psycopg
    from psycopg import sql

    table = sql.Identifier(schema, name)
    columns = sql.SQL(", ").join(
        sql.SQL("{} text").format(sql.Identifier(column)) for column in frame.columns
    )
    text = frame.select(pl.all().cast(pl.String)).write_csv(
        include_header=False, quote_style="non_numeric"
    )
    with psycopg.connect(url) as connection:
        connection.execute(sql.SQL("CREATE TABLE {} ({})").format(table, columns))
        statement = sql.SQL("COPY {} FROM STDIN WITH (FORMAT csv)").format(table)
        with connection.cursor() as cursor, cursor.copy(statement) as copy:
            copy.write(text.encode("utf-8"))
    return f"{schema}.{name}"
