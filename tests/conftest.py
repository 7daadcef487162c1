"""Shared fixtures: the seed papers' small tables and their hierarchies.

Also the check that property tests test something: every test call runs inside
:func:`tests.meaningful.counting`, and a test that passed although
:func:`tests.meaningful.assume_meaningful` discarded more than half of its
examples fails (see :mod:`tests.meaningful` for why the count is ours rather
than hypothesis' statistics).

And a real PostgreSQL server for the PostgreSQL engine's tests (issue 12),
started on first use by ``postgres_url`` and stopped at the end of the session:
a session that uses none of these fixtures starts nothing. See
:mod:`tests.postgres_server`.

And one local Spark session for the Spark engine's tests (``spark_session``),
started on first use and stopped at the end of the run.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import settings

from kanonym.hierarchy import Hierarchy
from tests.meaningful import counting
from tests.postgres_server import (
    PASSWORD,
    PostgresServer,
    ServerUnavailableError,
    copy_frame,
    start,
)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# Speed is measured by the benchmarks, never by tests: no example has a deadline. With
# Hypothesis's default of 200 ms, a first example that loads numba's cache or starts
# PostgreSQL on a loaded machine failed as "flaky" when its rerun was fast.
settings.register_profile("kanonym", deadline=None)
settings.load_profile("kanonym")


def race_hierarchy() -> Hierarchy:
    """Samarati's race hierarchy: R0 = {asian, black, white} -> R1 = {person}."""
    return Hierarchy("race", (("asian", "black", "white"), ("person",) * 3))


def zip_hierarchy() -> Hierarchy:
    """Samarati's ZIP hierarchy: Z0 -> Z1 = {9413*, 9414*} -> Z2 = {941**}."""
    leaves = ("94138", "94139", "94141", "94142")
    return Hierarchy("zip", (leaves, ("9413*", "9413*", "9414*", "9414*"), ("941**",) * 4))


def samarati_table() -> pl.DataFrame:
    """The private table PT of Samarati's FOSAD 2008 slides (Race, ZIP; 9 rows)."""
    return pl.DataFrame(
        {
            "race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
            "zip": [
                "94142",
                "94141",
                "94139",
                "94139",
                "94139",
                "94138",
                "94139",
                "94139",
                "94141",
            ],
        }
    )


@pytest.fixture
def samarati() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """Samarati's table with its two hierarchies."""
    return samarati_table(), {"race": race_hierarchy(), "zip": zip_hierarchy()}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a passing test whose examples were mostly discarded as not meaningful."""
    with counting(getattr(item, "obj", None)) as tally:
        outcome = yield
    problem = tally.problem()
    if problem is not None:
        pytest.fail(f"{item.nodeid}: {problem}", pytrace=False)
    return outcome


# Numbers the session's per-test schemas: each test's name is new to the server.
_SCHEMA_NUMBERS = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session, with ``PGPASSWORD`` set to its password.

    Without PostgreSQL (a developer's laptop) the tests that use it skip; under
    CI (``CI`` set), where ``.ci/run`` installs it, its absence fails them
    instead, so a broken install step cannot pass as a green run that tested
    nothing of the engine.
    """
    server = _start_postgres_or_skip()
    # The password reaches clients, subprocesses included, the way a user's would:
    # through the environment, never in a URL.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PGPASSWORD", PASSWORD)
        try:
            yield server
        finally:
            server.stop()


def _start_postgres_or_skip() -> PostgresServer:
    """:func:`tests.postgres_server.start`, a missing PostgreSQL skipping (failing under CI)."""
    try:
        return start()
    except ServerUnavailableError as missing:
        reason = str(missing)
    # Outside the except block: the report shows the reason, not a chained traceback.
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the PostgreSQL tests, but: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """``postgresql://kanonym@127.0.0.1:PORT/kanonym``: the session's server, password aside."""
    return postgres_server.url


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A fresh, empty schema for one test, dropped with everything in it after the test."""
    import psycopg

    name = f"test_{os.getpid()}_{next(_SCHEMA_NUMBERS)}"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {name}")
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        # A connection the test left open in a transaction would make the drop wait
        # forever: fail after a while instead.
        connection.execute("SET lock_timeout = '30s'")
        connection.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture
def postgres_ledger(postgres_url: str, postgres_schema: str) -> Iterator[str]:
    """``postgresql://...?schema=NAME``: a ledger's schema for one test, beside its schema
    of data (a ledger's schema holds nothing else), dropped with everything in it after."""
    import psycopg

    name = f"{postgres_schema}_ledger"
    yield f"{postgres_url}?schema={name}"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("SET lock_timeout = '30s'")
        connection.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture
def load_postgres_table(
    postgres_url: str, postgres_schema: str
) -> Callable[[pl.DataFrame, str], str]:
    """``load(frame, name)``: the frame as table ``name`` of the test's schema (TEXT, by COPY).

    Returns ``"schema.name"``. Nulls stay NULL and empty strings stay empty.
    """

    def load(frame: pl.DataFrame, name: str) -> str:
        return copy_frame(postgres_url, frame, postgres_schema, name)

    return load


@pytest.fixture(scope="session")
def spark_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local Spark session (``local[2]``) for the whole run, stopped at its end.

    Without PySpark or Java (a developer's laptop) the tests that use it skip;
    under CI (``CI`` set), where ``.ci/run`` installs Java, their absence fails
    them instead. The warehouse of ``spark-table:`` tables lives in a temporary
    directory; the UI, the console progress bar and the logs below ERROR are
    off, and a small shuffle keeps the tests' tiny jobs quick.
    """
    reason = None
    if importlib.util.find_spec("pyspark") is None:
        reason = "PySpark is not installed (pip install -e '.[dev]')"
    elif shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        reason = "no Java (Spark needs Java 17 or later: apt-get install default-jre-headless)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Spark tests, but: {reason}", pytrace=False)
        pytest.skip(f"no Spark: {reason}")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("kanonym-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
