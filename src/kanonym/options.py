"""The names the public API accepts, as types a type checker can hold a caller to.

Each alias lists the names of one kind of option, so that mypy or pyright
rejects ``algorithm="optimla"`` before the program runs; the library checks the
same names at run time (an :class:`~kanonym.errors.InputError` naming the
parameter). The runtime tables they mirror are :data:`kanonym.search.ALGORITHMS`
with :data:`kanonym.recoding.RECODINGS` (algorithms),
:data:`kanonym.metrics.METRICS`, :data:`kanonym.search.POLICIES` and
:data:`kanonym.technique.TECHNIQUES`; a test keeps each alias equal to its table.

Example:
    >>> from typing import get_args
    >>> get_args(PolicyName)
    ('min-absolute-distance', 'min-relative-distance', 'max-distribution', 'min-suppression')
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import polars as pl

if TYPE_CHECKING:
    import pandas
    import pyspark.sql

AlgorithmName: TypeAlias = Literal[
    "optimal",
    "incognito",
    "minimal",
    "samarati",
    "datafly",
    "greedy",
    "mu-argus",
    "mondrian",
    "mondrian-relaxed",
]
"""A search (full-domain generalization, :mod:`kanonym.search`) or a local recoding
(:mod:`kanonym.recoding`)."""

MetricName: TypeAlias = Literal[
    "dm-star",
    "dm",
    "entropy",
    "loss",
    "precision",
    "aecs",
    "height",
    "non-monotonic-entropy",
    "average-class-size",
    "arx-loss",
]
"""A utility metric minimized by ``optimal`` and ``incognito`` (:mod:`kanonym.metrics`)."""

PolicyName: TypeAlias = Literal[
    "min-absolute-distance", "min-relative-distance", "max-distribution", "min-suppression"
]
"""A preference policy ranking the solutions of ``minimal`` and ``samarati``
(:mod:`kanonym.search.policies`)."""

TechniqueName: TypeAlias = Literal[
    "AG_TS", "AG_AS", "AG_CS", "AG_", "CG_CS", "CG_", "_TS", "_AS", "_CS"
]
"""One of Samarati's technique classes that kanonym runs (:mod:`kanonym.technique`)."""

EngineName: TypeAlias = Literal["embedded", "streaming", "postgres", "spark", "duckdb"]
"""Where the rows are grouped, transformed and re-checked (:mod:`kanonym.engine`):
``embedded`` in memory (a file too large for memory streams from disk),
``streaming`` a Parquet or CSV file from disk however small, ``postgres`` in a
PostgreSQL server, ``spark`` in Spark (local or a cluster), ``duckdb`` in DuckDB
(a Parquet or CSV file, or a table of a DuckDB database file)."""

TableLike: TypeAlias = "str | Path | pl.DataFrame | pandas.DataFrame | pyspark.sql.DataFrame"
"""A table: a CSV (plain or gzip) or Parquet path, a Polars or pandas DataFrame
(read by :func:`kanonym.io.load`), a ``postgresql://`` URL naming a table or
a query (the PostgreSQL engine), or a Spark DataFrame or ``spark-table:NAME``
(the Spark engine, which also reads Parquet and CSV paths with ``engine="spark"``)."""

__all__ = ["AlgorithmName", "EngineName", "MetricName", "PolicyName", "TableLike", "TechniqueName"]
