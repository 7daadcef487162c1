"""The session's PostgreSQL server works as the engine's tests assume (tests/postgres_server.py).

These tests skip without PostgreSQL, like every test of the engine, except
under CI, where they fail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from tests import postgres_server
from tests.postgres_server import run_sql

Loader = Callable[[pl.DataFrame, str], str]


def test_the_server_takes_the_role_and_database_the_tests_expect(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql://kanonym@127.0.0.1:")
    assert postgres_url.endswith("/kanonym") and "secret" not in postgres_url
    rows = run_sql(
        postgres_url,
        "SELECT current_user, current_database(), current_setting('server_encoding'), "
        "current_setting('fsync')",
    )
    assert rows == [("kanonym", "kanonym", "UTF8", "off")]


def test_a_frame_loads_and_reads_back_identical(
    postgres_url: str, postgres_schema: str, load_postgres_table: Loader
) -> None:
    # Everything CSV could get wrong: a separator, quotes, a line break, an empty
    # string next to a null, COPY's own markers, non-ASCII, and a column name
    # that needs quoting.
    frame = pl.DataFrame(
        {
            "n": ["1", "2", "3", "4", "5", "6"],
            "Zip Code": ["02138", None, "", "a,b", 'say "hi"', "line 1\nline 2"],
            "city": ["Zürich", "\\N", "\\.", None, "  padded  ", "tab\there"],
        }
    )
    table = load_postgres_table(frame, "visits")
    assert table == f"{postgres_schema}.visits"
    rows = run_sql(postgres_url, f'SELECT n, "Zip Code", city FROM {table} ORDER BY n::int')
    back = pl.DataFrame(rows, schema=dict.fromkeys(frame.columns, pl.String), orient="row")
    assert back.equals(frame)
    types = run_sql(
        postgres_url,
        "SELECT data_type FROM information_schema.columns "
        "WHERE table_schema = %s AND table_name = 'visits'",
        [postgres_schema],
    )
    assert types == [("text",)] * 3


def test_each_test_gets_an_empty_schema_of_its_own(postgres_url: str, postgres_schema: str) -> None:
    tables = run_sql(
        postgres_url,
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s",
        [postgres_schema],
    )
    assert tables == [(0,)]


def test_a_wrong_or_missing_password_is_refused(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import psycopg

    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(postgres_url, password="not-the-password").close()
    monkeypatch.delenv("PGPASSWORD")
    # No ~/.pgpass of the developer's may stand in for the missing password.
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        psycopg.connect(postgres_url).close()


def test_without_the_binaries_the_server_is_unavailable_not_broken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ServerUnavailableError is what the fixture turns into a skip (or a failure under CI).
    monkeypatch.setattr(postgres_server, "find_bindir", lambda: None)
    with pytest.raises(postgres_server.ServerUnavailableError, match="install Debian's postgresql"):
        postgres_server.start()
