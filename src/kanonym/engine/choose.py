"""Which engine reads an input: the one named, or the one the input's form implies.

A ``postgresql://`` URL is read by the PostgreSQL engine; a Spark DataFrame
or a ``spark-table:NAME`` by the Spark engine; a file or a Polars or pandas
data frame by the embedded engine (a Parquet or CSV path by Spark when
``engine="spark"`` says so). Naming an engine that cannot read the input is
refused before anything is read.

Example:
    >>> default_engine("postgresql://ann@db/health?table=visits"), default_engine("adult.csv")
    ('postgres', 'embedded')
    >>> default_engine("spark-table:health.visits")
    'spark'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from kanonym.engine.base import ServerEngine
from kanonym.engine.embedded import EmbeddedEngine
from kanonym.engine.postgres import PostgresEngine, is_postgres_url
from kanonym.engine.spark import SparkEngine, is_spark_dataframe, is_spark_table
from kanonym.errors import InputError
from kanonym.io import load
from kanonym.options import EngineName, TableLike


def default_engine(data: object) -> EngineName:
    """The engine an input's form implies (a ``postgresql://`` URL: ``postgres``; a Spark
    DataFrame or ``spark-table:NAME``: ``spark``)."""
    if is_postgres_url(data):
        return "postgres"
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
    return EmbeddedEngine(load(data, delimiter=delimiter))
