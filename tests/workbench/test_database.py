"""A PostgreSQL table as the workbench's input, against the session's real server.

The server is :mod:`tests.postgres_server`'s (the ``postgres_url`` fixture of
``tests/conftest.py``), its password in ``PGPASSWORD`` as a user's would be.
The workbench reads the table for its pages; the release runs in the
database, and the job file it writes, run by ``kanonym anonymize --config``,
makes the same release byte for byte.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("psycopg")

from tests.workbench.client import Client, errors

from kanonym.errors import InputError
from kanonym.workbench.database import read_database

PATIENTS = pl.DataFrame(
    {
        "name": ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon"],
        "zip": ["02138", "02139", "02141", "02142", "02138"] * 2,
        "age": ["34", "36", "41", "45", "33", "38", "47", "42", "31", "39"],
        "diagnosis": ["flu", "asthma", "flu", "diabetes", "asthma"] * 2,
    }
)

Loader = Callable[[pl.DataFrame, str], str]


def test_a_database_table_is_released_in_the_database_as_the_job_says(
    tmp_path: Path, postgres_url: str, load_postgres_table: Loader
) -> None:
    name = load_postgres_table(PATIENTS, "patients")
    url = f"{postgres_url}?table={name}"
    session = Client(tmp_path)
    page = session.post("/table/database", url=url)
    assert errors(page) == [] and 'id="column-stats"' in page
    bench = session.app.state.bench
    assert bench.flow.table == url and bench.flow.frame.height == 10
    assert bench.flow.frame.sort("name").equals(PATIENTS.sort("name"))
    roles = {
        "name": "identifying",
        "zip": "quasi-identifying",
        "age": "quasi-identifying",
        "diagnosis": "sensitive",
    }
    session.post("/roles", **{f"role:{column}": role for column, role in roles.items()})
    session.post("/hierarchies/save", column="zip", builder="mask", argument="")
    page = session.post("/hierarchies/save", column="age", builder="interval", argument="5,10")
    assert errors(page) == [] and "30-39" in page
    page = session.post(
        "/models",
        k="2",
        suppression="0",
        metric="loss",
        seed="5",
        name="db-out",
        **{"l:diagnosis": "2"},
    )
    assert errors(page) == []
    # The sweep runs on the rows the table page read.
    session.post("/sweep")
    bench.sweep.join(timeout=300)
    assert bench.sweep.state == "done", bench.sweep.error
    session.post("/run")
    bench.run.join(timeout=300)
    assert bench.run.state == "done", bench.run.error
    assert 'id="risk"' in session.client.get("/results").text
    assert errors(session.post("/results/file", acknowledge="on")) == []
    job_text = (tmp_path / "db-out.toml").read_text()
    job = tomllib.loads(job_text)
    assert job["input"] == url and "secret" not in job_text
    released = (tmp_path / "db-out.csv").read_bytes()
    assert session.client.get("/files/db-out.csv").content == released
    # The job, run from the command line (PGPASSWORD from the environment), makes the
    # same release in the database.
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "kanonym",
            "anonymize",
            "--config",
            "db-out.toml",
            "--output",
            "again.csv",
            "--no-report",
            "--no-report-html",
            "--quiet",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.csv").read_bytes() == released
    # Loading another table lets go of the release and its connection to the database.
    (tmp_path / "t.csv").write_text("zip\n02138\n")
    session.post("/table/pick", name="t.csv")
    assert bench.run is None


def test_a_bad_database_input_is_one_line_and_loads_nothing(
    tmp_path: Path,
    postgres_url: str,
    postgres_schema: str,
    load_postgres_table: Loader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = load_postgres_table(PATIENTS, "patients")
    session = Client(tmp_path)
    with_password = postgres_url.replace("//kanonym@", "//kanonym:hunter2@", 1)
    cases = {
        f"{postgres_url}?table={postgres_schema}.nothing": "does not exist",
        f"{with_password}?table={name}": "leave the password out of the URL",
        "postgresql://kanonym@127.0.0.1:1/kanonym?table=t": "cannot connect",
        postgres_url: "?table=SCHEMA.NAME or ?query=SELECT",
        "mysql://db/x": "a database input is a URL",
    }
    for url, message in cases.items():
        (error,) = errors(session.post("/table/database", url=url))
        assert message in error and "hunter2" not in error, (url, error)
    monkeypatch.setenv("PGPASSWORD", "wr0ng-pw")
    (error,) = errors(session.post("/table/database", url=f"{postgres_url}?table={name}"))
    assert "password authentication failed" in error and "wr0ng-pw" not in error
    assert session.app.state.bench.flow.table is None


def test_a_table_beyond_the_row_cap_is_refused_in_one_line(
    postgres_url: str, load_postgres_table: Loader
) -> None:
    name = load_postgres_table(PATIENTS, "patients")
    url = f"{postgres_url}?table={name}"
    assert read_database(url, max_rows=10).height == 10
    with pytest.raises(InputError, match="10 rows, more than the 9 the workbench reads"):
        read_database(url, max_rows=9)
    query = f"{postgres_url}?query=SELECT zip FROM {name} WHERE age < '40'"
    assert sorted(read_database(query).get_column("zip")) == sorted(
        PATIENTS.filter(pl.col("age") < "40").get_column("zip")
    )
