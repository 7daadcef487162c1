"""A real PostgreSQL server for the engine tests, started once per session when first used.

Debian's binaries (``/usr/lib/postgresql/*/bin``, or ``pg_config --bindir``)
initialize a cluster in a temporary directory and run it as an unprivileged
user (PostgreSQL refuses to run as root), listening on 127.0.0.1 on a free
port, with durability off (a throwaway cluster). Without the binaries the
tests that need the server skip, except under CI (``CI`` set), where
``.ci/run`` installs them and their absence is a failure.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest

_USER = "nobody"
_SCHEMAS = itertools.count()


def _bindir() -> Path | None:
    try:
        found = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=True
        ).stdout.strip()
        if (Path(found) / "initdb").exists():
            return Path(found)
    except (OSError, subprocess.CalledProcessError):
        pass
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", _USER, "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """``postgresql://kanonym@127.0.0.1:PORT/kanonym`` of a server running for the session."""
    bindir = _bindir()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's binaries are missing; .ci/run installs Debian's postgresql")
        pytest.skip("PostgreSQL's binaries (initdb, pg_ctl) are not installed")
    import psycopg

    folder = Path(tempfile.mkdtemp(prefix="kanonym-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, _USER)
    data, port = folder / "data", _free_port()
    subprocess.run(
        _as_server_user(
            [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "kanonym", "--no-sync"]
        ),
        check=True,
        capture_output=True,
    )
    options = (
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    subprocess.run(
        _as_server_user(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(folder / "log"),
                "-w",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        with psycopg.connect(
            f"postgresql://kanonym@127.0.0.1:{port}/postgres", autocommit=True
        ) as c:
            c.execute("CREATE DATABASE kanonym")
        yield f"postgresql://kanonym@127.0.0.1:{port}/kanonym"
    finally:
        subprocess.run(
            _as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A fresh schema for one test, dropped after it."""
    import psycopg

    name = f"t{os.getpid()}_{next(_SCHEMAS)}"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {name}")
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture
def load_postgres_table(
    postgres_url: str, postgres_schema: str
) -> Callable[[pl.DataFrame, str], str]:
    """Load a frame into a table of the test's schema (text columns, COPY in bulk)."""
    import psycopg
    from psycopg import sql

    def load(frame: pl.DataFrame, name: str) -> str:
        table = sql.Identifier(postgres_schema, name)
        columns = sql.SQL(", ").join(
            sql.SQL("{} text").format(sql.Identifier(c)) for c in frame.columns
        )
        # Every value quoted: PostgreSQL reads an unquoted empty field as NULL.
        text = frame.select(pl.all().cast(pl.String)).write_csv(
            include_header=False, quote_style="non_numeric"
        )
        with psycopg.connect(postgres_url) as connection:
            connection.execute(sql.SQL("CREATE TABLE {} ({})").format(table, columns))
            copy = sql.SQL("COPY {} FROM STDIN WITH (FORMAT csv)").format(table)
            with connection.cursor() as cursor, cursor.copy(copy) as stream:
                stream.write(text.encode("utf-8"))
        return f"{postgres_schema}.{name}"

    return load
