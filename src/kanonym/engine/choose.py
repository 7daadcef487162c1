"""Which engine reads an input: the one named, or the one the input's form implies.

A ``postgresql://`` URL is read by the PostgreSQL engine; a Spark DataFrame
or a ``spark-table:NAME`` by the Spark engine; a ``duckdb://`` URL (a table
of a DuckDB database file) by the DuckDB engine; a file or a Polars or pandas
data frame by the embedded engine (a Parquet or CSV path by Spark when
``engine="spark"`` says so, by DuckDB when ``engine="duckdb"`` does). The
embedded engine reads a file into memory, or streams it
(:class:`~kanonym.engine.streaming.StreamingEngine`, the rows kept on disk)
when reading it would not fit (:func:`streams`). Naming an engine that cannot
read the input is refused before anything is read.

Example:
    >>> default_engine("postgresql://ann@db/health?table=visits"), default_engine("adult.csv")
    ('postgres', 'embedded')
    >>> default_engine("spark-table:health.visits"), default_engine("duckdb:///h.duckdb?table=v")
    ('spark', 'duckdb')
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any, get_args

import polars as pl

from kanonym.engine.base import ServerEngine
from kanonym.engine.duck import DuckDBEngine, is_duckdb_url
from kanonym.engine.embedded import EmbeddedEngine
from kanonym.engine.postgres import PostgresEngine, is_postgres_url
from kanonym.engine.spark import SparkEngine, is_spark_dataframe, is_spark_table
from kanonym.engine.streaming import StreamingEngine
from kanonym.errors import InputError
from kanonym.io import format_for, load
from kanonym.options import EngineName, TableLike

# A URI's scheme: letters, digits, + . - (RFC 3986), two or more characters before ://
# (so that a Windows drive letter is not one).
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_location(value: object) -> bool:
    """Whether ``value`` names data where it lives rather than a local file: a
    ``postgresql://`` URL, a ``duckdb://`` URL, ``spark-table:NAME``, or any ``SCHEME://``
    URI (``s3a://``, ``hdfs://``, read by Spark). Job files keep these as they are, where a
    file name is taken relative to the job file's folder (a ``duckdb://`` URL's relative
    path is the working directory's).

    Example:
        >>> [is_location(v) for v in ("s3a://lake/v", "spark-table:db.v", "v.csv", "C:/v")]
        [True, True, False, False]
        >>> is_location("duckdb://data/health.duckdb?table=visits")
        True
    """
    return isinstance(value, str) and (
        is_postgres_url(value)
        or is_duckdb_url(value)
        or is_spark_table(value)
        or _URI.match(value) is not None
    )


def default_engine(data: object) -> EngineName:
    """The engine an input's form implies (a ``postgresql://`` URL: ``postgres``; a Spark
    DataFrame or ``spark-table:NAME``: ``spark``; a ``duckdb://`` URL: ``duckdb``)."""
    if is_postgres_url(data):
        return "postgres"
    if is_duckdb_url(data):
        return "duckdb"
    if is_spark_dataframe(data) or is_spark_table(data):
        return "spark"
    return "embedded"


def open_engine(
    data: TableLike, engine: EngineName | None = None, *, delimiter: str | None = None
) -> EmbeddedEngine | ServerEngine[Any]:
    """The engine ``engine`` (or the input's default) on ``data``, connected or loaded.

    Raises:
        InputError: ``engine`` is no engine's name, cannot read ``data``'s
            form, or ``data`` cannot be read (a missing file, a server that
            refuses the connection).
    """
    chosen = default_engine(data) if engine is None else engine
    if chosen not in get_args(EngineName):
        names = ", ".join(repr(n) for n in get_args(EngineName))
        raise InputError(f"`engine` must be one of {names}, got {chosen!r}")
    if chosen == "postgres":
        if not is_postgres_url(data):
            raise InputError("`engine='postgres'` reads `data` given as a postgresql:// URL")
        return PostgresEngine(str(data))
    if is_postgres_url(data):
        raise InputError(f"a postgresql:// URL is read by `engine='postgres'`, not {chosen!r}")
    if chosen == "duckdb":
        if not isinstance(data, str | Path):
            raise InputError(
                "`engine='duckdb'` reads `data` given as a Parquet or CSV path or a duckdb:// URL"
            )
        return DuckDBEngine(data, delimiter=delimiter)
    if is_duckdb_url(data):
        raise InputError(f"a duckdb:// URL is read by `engine='duckdb'`, not {chosen!r}")
    if chosen == "spark":
        if not (is_spark_dataframe(data) or isinstance(data, str | Path)):
            raise InputError(
                "`engine='spark'` reads `data` given as a Spark DataFrame, a Parquet or CSV "
                "path, or spark-table:NAME"
            )
        return SparkEngine(data, delimiter=delimiter)
    if is_spark_dataframe(data) or is_spark_table(data):
        what = "a Spark DataFrame" if is_spark_dataframe(data) else "a spark-table: name"
        raise InputError(f"{what} is read by `engine='spark'`, not {chosen!r}")
    if chosen == "streaming" and not isinstance(data, str | Path):
        raise InputError("`engine='streaming'` reads `data` given as a Parquet or CSV path")
    if isinstance(data, str | Path) and (chosen == "streaming" or streams(data)):
        return StreamingEngine(data, delimiter=delimiter)
    return EmbeddedEngine(load(data, delimiter=delimiter))


# The in-memory path peaks at about 6.5 times the size of the table it reads (10M
# Adult-shaped rows: 0.73 GB of columns, 4.7 GiB peak); 8 leaves room.
PEAK_FACTOR = 8
# Text in a gzip file: about 5 times its compressed size.
GZIP_FACTOR = 5


def streams(path: str | Path, *, available: int | None = None) -> bool:
    """Whether the embedded engine streams the file ``path`` (:class:`StreamingEngine`)
    rather than reading it into memory: when reading it would peak above half of the
    memory ``available`` (bytes; by default what the system has free now).

    The table's size in memory is estimated from its first rows and its row count
    (Parquet's metadata), or from the file's size (CSV; five times that for gzip).
    A file that cannot be opened is read in memory, which names the problem.

    Example:
        >>> streams("adult.csv", available=2**40)
        False
    """
    file = Path(path)
    try:
        with file.open("rb") as handle:
            magic = handle.read(4)
        size = file.stat().st_size
    except OSError:
        return False
    if available is None:
        available = _available_memory()
    if magic == b"PAR1" or format_for(file) == "parquet":
        try:
            scan = pl.scan_parquet(file)
            rows = int(scan.select(pl.len()).collect().item())
            first = scan.head(10_000).collect()
        except (pl.exceptions.PolarsError, OSError):
            return False
        table = rows * first.estimated_size() / max(first.height, 1)
    else:
        table = size * (GZIP_FACTOR if magic[:2] == b"\x1f\x8b" else 1)
    return table * PEAK_FACTOR > available / 2


def _available_memory() -> int:
    """The memory the system can give now (``MemAvailable``, else the free pages)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
