"""The Spark engine: the rows stay in Spark, only the frequency set reaches the driver.

The input is a Spark DataFrame (the API), a Parquet or CSV path (a file or a
directory of part files, on any file system Spark reads: ``s3a://``,
``hdfs://``, ``dbfs:/``, a local path), or a catalog table named
``spark-table:NAME`` (``NAME`` as Spark spells it: ``table``, ``db.table`` or
``catalog.db.table``). A path ending in ``.csv``, ``.tsv``, ``.txt`` or ``.gz``,
or a local file or directory whose data files are not Parquet, is read as CSV
with a header row, every column as a string (RFC 4180 quoting, fields may hold
line breaks, a malformed record is an error rather than a row of nulls; the
delimiter is ``delimiter=``, else a tab for ``.tsv`` and a comma otherwise);
anything else is Parquet. Every column is compared as a string (Spark's
``CAST(... AS STRING)``), and the empty string is read as the missing value,
as kanonym reads files and data frames. The work is split as the engine seam
(:mod:`kanonym.engine.base`) puts it:

* **group** is one ``groupBy(...).count()``, brought to the driver through
  Arrow (``toArrow``): the frequency set is all that leaves the cluster, and
  the search runs on it unchanged, on the driver.
* **generalize** joins one small mapping DataFrame per quasi-identifier (raw
  value -> code and label at the chosen level) by broadcast, removes the
  suppressed classes (their code tuples at the node's levels) with a broadcast
  left-anti join, drops the identifying columns and orders the rows by a
  seeded hash of the input row (the shuffle: the rows are spread over
  :data:`_PIECES` partitions by that hash and sorted by it within each, so the
  same seed gives the same order on any cluster, whatever the input's
  partitioning, without the sampling pass a global sort needs). The release is a lazy
  DataFrame, persisted on first use (the re-check, the report's counts and the
  write read it again); nothing collects its rows.
* **verify** re-checks the release in Spark, with code that shares nothing
  with the mapping DataFrames: as many rows as the search says, no class
  below k, and each released class holding its input rows generalized along
  the hierarchies themselves (labels recomputed from :attr:`Hierarchy.levels`,
  looked up in a literal map per quasi-identifier of a small hierarchy, joined
  by broadcast for a large one):
  per class, the row count and the sums of the rows' 64-bit hashes of the
  release and of the generalized input must be equal (one aggregation on each
  side, combined where the rows are; a changed row passes with odds of about
  2^-64 per class). Suppression removes whole classes, so a released class
  holds all the input rows of its class.
* **publish** writes Parquet through Spark's writer, whose commit protocol
  moves the files into place only when every task succeeded (a failed job
  leaves no output), or a catalog table (``spark-table:NAME``).

The session is the DataFrame's own, or ``SparkSession.builder.getOrCreate()``
for a path or a table (the one ``spark-submit`` or a notebook started, else a
new local one). :meth:`SparkEngine.close` releases what the engine cached; it
never stops the session.

PySpark (the ``spark`` extra, with Java 17 or later) is imported only when
this engine is used.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from kanonym.encode import EncodedTable, Grouped, encode_grouped
from kanonym.engine.base import (
    Expected,
    Generalization,
    TupleRecoding,
    verify_counted_models,
    verify_covering,
)
from kanonym.engine.postgres import is_postgres_url
from kanonym.errors import ColumnNotFoundError, InputError, VerificationError, clip
from kanonym.hierarchy import Hierarchy
from kanonym.io.paths import same_file
from kanonym.io.read import delimiter_character

if TYPE_CHECKING:
    import sys

    from pyspark.sql import Column, DataFrame, SparkSession

    if sys.version_info >= (3, 13):
        from typing import TypeIs
    else:
        from typing_extensions import TypeIs

TABLE_PREFIX = "spark-table:"
"""How a catalog table is named as an input or a destination: ``spark-table:db.name``."""

_DATAFRAME_SOURCE = "<Spark DataFrame>"
_CSV_SUFFIXES = frozenset({".csv", ".tsv", ".txt", ".gz"})
_PARQUET_SUFFIXES = frozenset({".parquet", ".pq"})
_PARQUET_MAGIC = b"PAR1"
# Spark's messages name the file in full: room for a long path.
_MESSAGE_LIMIT = 300
# "Malformed CSV record: <the row's values>": the values are cut from a message.
_QUOTED_RECORD = re.compile(r"(?i)(malformed[^:]*record[^:]*):.*$")
# The column that orders the release (a seeded hash of the input row).
_ORDER = "_kanonym_order"
# The release's partitions: rows go to one by their seeded hash and are sorted by it within
# it. A fixed number, so that the order depends on the seed alone (10M rows: the write took
# 20 s against 24 s for a global sort, which first samples the whole release).
_PIECES = 16
# Hierarchies of up to this many leaves are looked up in a literal map (:func:`_looked_up`);
# larger ones (ZIP codes) are joined by broadcast, which keeps Spark's generated code small.
_MAP_LIMIT = 1000
# A local recoding's release keeps each quasi-identifier's input value beside its label
# for the re-check (never fetched nor written).
_RAW = "_kanonym_raw_{}"


def is_spark_dataframe(data: object) -> TypeIs[DataFrame]:
    """Whether ``data`` is a PySpark DataFrame (classic or Spark Connect).

    PySpark is not imported to answer: an object of a module never imported
    cannot be one.
    """
    import sys

    module = sys.modules.get("pyspark.sql")
    return module is not None and isinstance(data, module.DataFrame)


def is_spark_table(data: object) -> bool:
    """Whether ``data`` names a catalog table (``spark-table:NAME``).

    Example:
        >>> is_spark_table("spark-table:health.visits"), is_spark_table("visits.parquet")
        (True, False)
    """
    return isinstance(data, str) and data.startswith(TABLE_PREFIX)


def spark_writes(destination: str | Path) -> bool:
    """Whether Spark writes ``destination`` itself: a table (``spark-table:NAME``) or
    Parquet; a CSV file (``.csv``, ``.tsv``, ``.txt``, ``.gz``) is written by kanonym from
    the fetched rows.

    Example:
        >>> spark_writes("out.parquet"), spark_writes("spark-table:db.r"), spark_writes("r.csv")
        (True, True, False)
    """
    if is_spark_table(destination):
        return True
    text = str(destination)
    return Path(text).suffix.lower() not in _CSV_SUFFIXES and not is_postgres_url(text)


def spark_format(path: str) -> Literal["csv", "parquet"]:
    """How the Spark engine reads ``path``: CSV or Parquet.

    A ``.parquet`` or ``.pq`` name is Parquet; a ``.csv``, ``.tsv``, ``.txt`` or
    ``.gz`` name is CSV; a local file is Parquet when it starts with Parquet's
    magic bytes and a local directory when its first data file does (Spark's
    part files, hidden and ``_`` files aside); any other path (a remote
    directory) is Parquet.

    Example:
        >>> spark_format("s3a://lake/visits"), spark_format("visits.csv.gz")
        ('parquet', 'csv')
    """
    suffix = Path(path).suffix.lower()
    if suffix in _PARQUET_SUFFIXES:
        return "parquet"
    if suffix in _CSV_SUFFIXES:
        return "csv"
    local = Path(path)
    if "://" in path or not local.exists():
        return "parquet"
    if local.is_dir():
        parts = sorted(
            p for p in local.iterdir() if p.is_file() and not p.name.startswith(("_", "."))
        )
        if not parts:
            return "parquet"
        local = parts[0]
        if local.suffix.lower() in _CSV_SUFFIXES:
            return "csv"
    with local.open("rb") as file:
        return "parquet" if file.read(4) == _PARQUET_MAGIC else "csv"


def _separator(path: str, delimiter: str | None) -> str:
    """The CSV delimiter: ``delimiter`` (a character or a name such as ``tab``), else a tab
    for a ``.tsv`` name and a comma for any other.

    Example:
        >>> _separator("visits.tsv.gz", None), _separator("visits.csv", "semicolon")
        ('\\t', ';')
    """
    if delimiter is not None:
        return delimiter_character(delimiter)
    name = Path(path).name.lower().removesuffix(".gz")
    return "\t" if name.endswith(".tsv") else ","


def _same_place(first: str, second: str) -> bool:
    """Whether two paths name one file or directory (local paths resolved, others as
    written, a final ``/`` aside)."""
    if ":/" in first or ":/" in second:
        return first.rstrip("/") == second.rstrip("/")
    return same_file(first, second)


def _class_digests(frame: DataFrame, classes: Sequence[str], columns: Sequence[str]) -> DataFrame:
    """Per class of ``frame`` on ``classes``: its rows and the sums of the low and high 32
    bits of each row's 64-bit hash over ``columns`` (a multiset digest: two classes of equal
    rows and sums hold, but with odds of about 2^-64, the same rows). Spark aggregates it
    where the rows are, so only one line per class and partition moves."""
    sf = _functions()
    row = sf.xxhash64(sf.lit(0x6B616E6F6E796D), *(sf.col(c) for c in columns))
    low = sf.col("_hash").bitwiseAND(sf.lit(0xFFFFFFFF))
    high = sf.shiftrightunsigned(sf.col("_hash"), 32)
    grouped = (
        frame.withColumn("_hash", row).groupBy(*classes)
        if classes
        else frame.withColumn("_hash", row).groupBy()
    )
    return grouped.agg(
        sf.count(sf.lit(1)).alias("_rows"), sf.sum(low).alias("_lo"), sf.sum(high).alias("_hi")
    )


def _shuffled(frame: DataFrame, columns: Sequence[str]) -> DataFrame:
    """``frame``'s rows in the order of their seeded hash (:data:`_ORDER`), ties broken by
    ``columns``: spread over :data:`_PIECES` partitions by the hash, sorted within each."""
    return frame.repartition(_PIECES, _ORDER).sortWithinPartitions(_ORDER, *columns)


def _looked_up(column: Column, labels: Mapping[str | None, str | None]) -> Column:
    """``column``'s label in ``labels`` (value -> label, the missing value included), as a
    literal map: a hierarchy's leaves are few, and a map lookup per row costs less than a
    broadcast join (10M rows: the re-check took 42 s against 49 s). A value absent from
    ``labels`` gives the missing value."""
    sf = _functions()
    pairs = [
        part
        for value, label in labels.items()
        if value is not None
        for part in (sf.lit(value), sf.lit(label).cast("string"))
    ]
    looked: Column = sf.create_map(*pairs)[column] if pairs else sf.lit(None).cast("string")
    if None not in labels:
        return looked
    missing: Column = sf.when(column.isNull(), sf.lit(labels[None]).cast("string"))
    return missing.otherwise(looked)


def _functions() -> Any:
    """``pyspark.sql.functions``, imported on first use."""
    from pyspark.sql import functions

    return functions


def _first_line(text: str) -> str:
    """The first non-empty line of ``text``, without Spark's SQLSTATE suffix, and without
    the record a malformed-record error quotes (a row's values stay out of messages)."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), text)
    line = line.split(" SQLSTATE:")[0].strip()
    return _QUOTED_RECORD.sub(r"\1", line)


def _message(error: BaseException) -> str:
    """A Spark or JVM error as one line: the first line of its message or, for a JVM
    error, of its root cause (a failed read says why there: the file is not Parquet, a
    CSV record is malformed)."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return clip(_first_line(str(error)), limit=_MESSAGE_LIMIT)
    while java.getCause() is not None:
        java = java.getCause()
    text = java.getMessage()
    return clip(_first_line(str(text or java.toString())), limit=_MESSAGE_LIMIT)


def _session(source: str) -> SparkSession:
    """The active Spark session, or a new one; one line saying why Spark cannot start."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as error:  # pragma: no cover - the extra is part of dev
        raise InputError(
            f"{source}: the Spark engine needs PySpark: pip install 'kanonym[spark]'"
        ) from error
    try:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        # A session of kanonym's own (or the one spark-submit configured): no console
        # progress bar over kanonym's progress line. It stays alive for the next release.
        builder = SparkSession.builder.appName("kanonym")
        return builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()
    except Exception as error:  # the JVM did not start: no Java, no memory
        raise InputError(
            f"{source}: cannot start Spark ({_message(error)}); it needs Java 17 or later "
            "on the PATH or in JAVA_HOME"
        ) from None


class SparkEngine:
    """The rows of a Spark DataFrame, a Parquet or CSV path, or a catalog table (see the
    module docstring).

    Example:
        >>> SparkEngine("no/such/visits.parquet")
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: no/such/visits.parquet: no such file or directory
    """

    name = "spark"

    def __init__(self, data: DataFrame | str | Path, *, delimiter: str | None = None) -> None:
        self._distinct: dict[str, list[str | None]] = {}
        self._groups: dict[tuple[str, ...], Grouped] = {}
        self._rows: int | None = None
        # What generalize persisted; close() releases it.
        self._persisted: list[DataFrame] = []
        # The input's path, which no release may be written over.
        self._path: str | None = None
        if is_spark_dataframe(data):
            if delimiter is not None:
                raise InputError(f"{_DATAFRAME_SOURCE}: `delimiter` applies to CSV input only")
            self._source = _DATAFRAME_SOURCE
            self.session = data.sparkSession
            frame = data
        else:
            self._source = str(data)
            frame = self._open(str(data), delimiter)
        names = tuple(frame.columns)
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise InputError(f"{self._source}: column '{twice}' appears twice; rename one")
        self._columns = names
        # Spark resolves names case-insensitively and reads dots as struct fields: the
        # engine works on positional names c0, c1, ... and gives the input's back at the end.
        self._internal = {name: f"c{j}" for j, name in enumerate(names)}
        sf = _functions()
        positional = frame.toDF(*self._internal.values())
        self.input = positional.select(
            *(sf.nullif(sf.col(c).cast("string"), sf.lit("")).alias(c) for c in positional.columns)
        )

    def _open(self, data: str, delimiter: str | None) -> DataFrame:
        """Read a catalog table or a path (Parquet or CSV) with the active session."""
        if is_spark_table(data):
            if delimiter is not None:
                raise InputError(f"{data}: `delimiter` applies to CSV input only")
            table = data[len(TABLE_PREFIX) :]
            if not table:
                raise InputError(f"{data}: name the table: {TABLE_PREFIX}DB.NAME")
            self.session = _session(data)
            with self._refusing():
                return self.session.table(table)
        self._path = data
        if ":/" not in data and not Path(data).exists():
            # A local path is checked before the JVM starts.
            raise InputError(f"{data}: no such file or directory")
        fmt = spark_format(data)
        if fmt == "parquet" and delimiter is not None:
            raise InputError(f"{data}: `delimiter` applies to CSV input only; this is Parquet")
        self.session = _session(data)
        with self._refusing():
            if fmt == "parquet":
                return self.session.read.parquet(data)
            return self.session.read.csv(
                data,
                header=True,
                inferSchema=False,
                sep=_separator(data, delimiter),
                quote='"',
                escape='"',
                multiLine=True,
                mode="FAILFAST",
                encoding="UTF-8",
            )

    @contextlib.contextmanager
    def _refusing(self) -> Iterator[None]:
        """A Spark error (a missing path or table, an unreadable file) as one line naming
        the input."""
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        try:
            yield
        except (PySparkException, Py4JJavaError) as error:
            reason = _message(error)
            if "PATH_NOT_FOUND" in reason:
                reason = "no such file or directory"
            raise InputError(f"{self._source}: {reason}") from None

    @property
    def source(self) -> str:
        """The input's path or table, or ``<Spark DataFrame>``."""
        return self._source

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        return self._columns

    @property
    def rows(self) -> int:
        """The input's number of rows (counted once)."""
        if self._rows is None:
            with self._refusing():
                self._rows = self.input.count()
        return self._rows

    def require(self, names: Sequence[str]) -> None:
        """Raise :class:`~kanonym.errors.ColumnNotFoundError` naming the first of ``names``
        the input lacks."""
        import difflib

        for name in names:
            if name not in self._internal:
                close = difflib.get_close_matches(name, self._columns, n=1)
                reason = (
                    f"did you mean '{close[0]}'?" if close else f"columns are {list(self._columns)}"
                )
                raise ColumnNotFoundError(
                    f"{self._source}: column '{name}' not found; {reason}",
                    source=self._source,
                    column=name,
                    columns=self._columns,
                )

    def _fetch_arrow(self, frame: DataFrame, names: Sequence[str]) -> pl.DataFrame:
        """``frame``'s rows on the driver through Arrow, its columns renamed ``names``."""
        with self._refusing():
            table = frame.toArrow()
        fetched = pl.from_arrow(table)
        assert isinstance(fetched, pl.DataFrame)
        return fetched.rename(dict(zip(fetched.columns, names, strict=True)))

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as strings."""
        return self.distinct(column)[column]

    def distinct(self, *columns: str) -> dict[str, list[str | None]]:
        """The distinct values of several columns as strings, read off their grouping
        (:meth:`group`, kept for :meth:`encode`: one pass serves both, and the row count)."""
        missing = [c for c in dict.fromkeys(columns) if c not in self._distinct]
        if missing:
            grouped = self.group(list(dict.fromkeys(columns)))
            for column in missing:
                values = grouped.values.get_column(column).unique(maintain_order=True)
                self._distinct[column] = values.to_list()
        return {c: self._distinct[c] for c in columns}

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` (as strings) with their counts, in the order
        they first appear: one ``groupBy``, brought to the driver through Arrow."""
        key = tuple(columns)
        if key in self._groups:
            return self._groups[key]
        if not columns:
            height = 1 if self.rows > 0 else 0
            return Grouped(pl.DataFrame(height=height), np.full(height, self.rows, np.int64))
        self.require(columns)
        sf = _functions()
        # Each tuple's first row, so that the tuples come in the order they first appear
        # (as the embedded engine numbers them): the metrics then sum in the same order
        # and agree to the last bit, whatever the partitioning of the groupBy.
        counted = (
            self.input.withColumn("_first", sf.monotonically_increasing_id())
            .groupBy(*(self._internal[c] for c in columns))
            .agg(sf.count(sf.lit(1)).alias("_count"), sf.min("_first").alias("_first"))
        )
        frame = self._fetch_arrow(counted, [*columns, "kanonym_count", "kanonym_first"])
        frame = frame.sort("kanonym_first").drop("kanonym_first")
        counts = frame.get_column("kanonym_count").cast(pl.Int64).to_numpy()
        values = frame.drop("kanonym_count").cast(pl.String)
        grouped = Grouped(values, np.ascontiguousarray(counts))
        # Declaring and encoding group the same columns; the counts sum to the rows.
        self._groups[key] = grouped
        if self._rows is None:
            self._rows = int(counts.sum())
        return grouped

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers grouped in Spark, then encoded into the frequency set."""
        encoded, _ = encode_grouped(self.group(list(hierarchies)), hierarchies)
        return encoded

    def _small(self, columns: Mapping[str, Sequence[object]], types: Mapping[str, str]) -> Any:
        """A small DataFrame (a mapping, the suppressed classes) built on the driver, to be
        joined by broadcast."""
        import pyarrow as pa

        arrow = {"string": pa.string(), "long": pa.int64(), "boolean": pa.bool_()}
        table = pa.table(
            {name: pa.array(values, arrow[types[name]]) for name, values in columns.items()}
        )
        return _functions().broadcast(self.session.createDataFrame(table))

    def generalize(self, plan: Generalization) -> SparkRelease:
        """Build the release as a lazy, persisted DataFrame (not yet verified, not written)."""
        sf = _functions()
        names = plan.encoded.names
        frame = self.input
        labels: dict[str, Column] = {}
        codes: list[str] = []
        for j, name in enumerate(names):
            attribute = plan.encoded.attributes[j]
            level = plan.levels[j]
            shown = attribute.level_labels[level]
            level_codes = attribute.level_maps[level].tolist()
            raw, code, label = f"_raw{j}", f"_code{j}", f"_label{j}"
            mapping = self._small(
                {
                    raw: attribute.level_labels[0],
                    code: level_codes,
                    label: [shown[c] for c in level_codes],
                },
                {raw: "string", code: "long", label: "string"},
            )
            # The missing value is a leaf like any other: a null-safe equality joins it.
            column = self._internal[name]
            frame = frame.join(mapping, sf.col(column).eqNullSafe(sf.col(raw)), "left")
            labels[column] = sf.col(label)
            codes.append(code)
        suppressed = self._suppressed_classes(plan)
        if suppressed.height:
            classes = self._small(
                {f"_g{j}": suppressed.get_column(f"g{j}").to_list() for j in range(len(names))},
                {f"_g{j}": "long" for j in range(len(names))},
            )
            keys = [sf.col(code) == sf.col(f"_g{j}") for j, code in enumerate(codes)]
            condition = keys[0]
            for key in keys[1:]:
                condition = condition & key
            frame = frame.join(classes, condition, "left_anti")
        order = [c for c in self._columns if c not in plan.drop]
        internal = [self._internal[c] for c in order]
        # The shuffle: a hash of the seed and the whole input row, so that the order does
        # not depend on how the rows are partitioned; ties (equal hashes) are broken by the
        # released values, so the same seed gives the same order.
        row_hash = sf.xxhash64(sf.lit(plan.seed), *(sf.col(c) for c in self._internal.values()))
        built = frame.select(
            row_hash.alias(_ORDER), *(labels.get(c, sf.col(c)).alias(c) for c in internal)
        ).persist()
        self._persisted.append(built)
        shuffled = _shuffled(built, internal).select(
            *(sf.col(c).alias(name) for c, name in zip(internal, order, strict=True))
        )
        kept = int(plan.encoded.frequency_set.counts[plan.released].sum())
        return SparkRelease(
            shuffled, built.select(*internal), tuple(order), tuple(internal), rows=kept
        )

    def _suppressed_classes(self, plan: Generalization) -> pl.DataFrame:
        """The code tuples (at the node's levels) of the classes whose rows are suppressed."""
        attributes = plan.encoded.attributes
        codes = plan.encoded.frequency_set.codes[~plan.released]
        columns = {
            f"g{j}": a.level_maps[plan.levels[j]][codes[:, j]] for j, a in enumerate(attributes)
        }
        return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.Int64)).unique()

    def verify(self, released: SparkRelease, plan: Generalization, expected: Expected) -> None:
        """Re-check the release in Spark (see the module docstring).

        Raises:
            VerificationError: a released row is no input row generalized along
                the hierarchies, the number of rows differs from the search's,
                too many rows are suppressed, or a class is below k.
        """
        names = plan.encoded.names
        qis = [self._internal[n] for n in names]
        # Per released class: its rows and the sums of its rows' hashes, counted from the
        # release and from the input generalized along the hierarchies themselves.
        released_classes = _class_digests(released.unordered, qis, released.internal)
        expected_classes = _class_digests(
            self._generalized_input(plan, expected, released.internal), qis, released.internal
        )
        digest = ["_rows", "_lo", "_hi"]
        sf = _functions()
        keys = [sf.col(f"r.{q}").eqNullSafe(sf.col(f"e.{q}")) for q in qis] or [sf.lit(True)]
        condition = keys[0]
        for key in keys[1:]:
            condition = condition & key
        differs = sf.lit(False)
        for column in digest:
            differs = differs | ~sf.col(f"r.{column}").eqNullSafe(sf.col(f"e.{column}"))
        compared = released_classes.alias("r").join(expected_classes.alias("e"), condition, "left")
        with self._refusing():
            summary = compared.agg(
                sf.sum("r._rows").alias("rows"),
                sf.count(sf.when(sf.col("r._rows") < expected.k, 1)).alias("small"),
                sf.sum(sf.when(differs, sf.col("r._rows")).otherwise(0)).alias("stray"),
            ).first()
        assert summary is not None
        count = int(summary["rows"] or 0)
        small = int(summary["small"])
        stray = int(summary["stray"] or 0)
        missing = self.rows - count
        if missing != expected.suppressed_rows or missing > expected.max_suppressed_rows:
            raise VerificationError(
                f"{self.source}: the release lacks {missing} input rows; the search suppressed "
                f"{expected.suppressed_rows} (limit {expected.max_suppressed_rows})"
            )
        if names and small > 0:
            raise VerificationError(
                f"{self.source}: {small} released classes have fewer than k={expected.k} rows"
            )
        if stray:
            raise VerificationError(
                f"{self.source}: released classes holding {stray} rows are not their input rows "
                f"generalized at levels {dict(zip(names, plan.levels, strict=True))}"
            )
        verify_counted_models(self, released, names, expected)

    def _generalized_input(
        self, plan: Generalization, expected: Expected, columns: Sequence[str]
    ) -> DataFrame:
        """The input's rows (the suppressed ones too) as the release would show them at the
        plan's levels, with labels recomputed from the hierarchies' own levels."""
        sf = _functions()
        recomputed = self.input
        labels: dict[str, Column] = {}
        for j, name in enumerate(plan.encoded.names):
            hierarchy = expected.hierarchies[name]
            level = plan.levels[j]
            column = self._internal[name]
            if len(hierarchy.leaves) <= _MAP_LIMIT:
                labels[column] = _looked_up(
                    sf.col(column),
                    dict(zip(hierarchy.leaves, hierarchy.levels[level], strict=True)),
                )
                continue
            leaf, label = f"_leaf{j}", f"_check{j}"
            check = self._small(
                {leaf: hierarchy.leaves, label: hierarchy.levels[level]},
                {leaf: "string", label: "string"},
            )
            recomputed = recomputed.join(check, sf.col(column).eqNullSafe(sf.col(leaf)), "left")
            labels[column] = sf.col(label)
        return recomputed.select(*(labels.get(c, sf.col(c)).alias(c) for c in columns))

    def recode(self, plan: TupleRecoding) -> SparkRelease:
        """Build a local recoding's release as a lazy, persisted DataFrame (not yet verified,
        not written): the plan's tuples joined by broadcast on the raw key values
        (null-safe), the rows of split units ranked with ``row_number()`` over a window in
        the plan's order and joined with their pieces, shuffled as :meth:`generalize`
        shuffles."""
        from pyspark.sql import Window

        sf = _functions()
        names = plan.names
        labels = [TupleRecoding.label(j) for j in range(len(names))]
        types = {TupleRecoding.key(i): "string" for i in range(len(plan.keys))}
        types |= {TupleRecoding.UNIT: "long", TupleRecoding.SPLIT: "boolean"}
        types |= dict.fromkeys(labels, "string")
        tuples = self._small({c: plan.tuples.get_column(c).to_list() for c in types}, types)
        on = [
            sf.col(self._internal[key]).eqNullSafe(sf.col(TupleRecoding.key(i)))
            for i, key in enumerate(plan.keys)
        ]
        condition = on[0]
        for key in on[1:]:
            condition = condition & key
        # The shuffle's hash, of the seed and the whole input row (as generalize's).
        row_hash = sf.xxhash64(sf.lit(plan.seed), *(sf.col(c) for c in self._internal.values()))
        joined = self.input.withColumn(_ORDER, row_hash).join(tuples, condition, "inner")
        order = [c for c in self._columns if c not in plan.drop]
        internal = [self._internal[c] for c in order]
        position = {name: j for j, name in enumerate(names)}
        raws = [_RAW.format(j) for j in range(len(names))]

        def output(label: Sequence[str]) -> list[Column]:
            """The shuffle's hash, the released columns (labels from ``label``) and the
            input values of the quasi-identifiers."""
            return [
                sf.col(_ORDER),
                *(
                    sf.col(label[position[c]]).alias(self._internal[c])
                    if c in position
                    else sf.col(self._internal[c])
                    for c in order
                ),
                *(sf.col(self._internal[n]).alias(r) for n, r in zip(names, raws, strict=True)),
            ]

        released = joined.filter(~sf.col(TupleRecoding.SPLIT)).select(*output(labels))
        if plan.pieces.height:
            piece = {
                TupleRecoding.UNIT: "_kanonym_piece",
                **{lab: f"_kanonym_piece_{lab}" for lab in labels},
            }
            piece_types = {
                piece[TupleRecoding.UNIT]: "long",
                TupleRecoding.FIRST: "long",
                TupleRecoding.LAST: "long",
                **{piece[lab]: "string" for lab in labels},
            }
            renamed = plan.pieces.rename(piece)
            pieces = self._small(
                {c: renamed.get_column(c).to_list() for c in piece_types}, piece_types
            )
            # The rows of a split unit, ranked by the released columns as bytes, missing first.
            window = Window.partitionBy(TupleRecoding.UNIT).orderBy(
                *(sf.col(self._internal[c]).asc_nulls_first() for c in plan.ranked(self._columns))
            )
            rank = sf.col("_kanonym_rank")
            ranked = (
                joined.filter(sf.col(TupleRecoding.SPLIT))
                .withColumn("_kanonym_rank", sf.row_number().over(window))
                .join(
                    pieces,
                    (sf.col(TupleRecoding.UNIT) == sf.col(piece[TupleRecoding.UNIT]))
                    & rank.between(sf.col(TupleRecoding.FIRST), sf.col(TupleRecoding.LAST)),
                    "inner",
                )
            )
            released = released.unionByName(ranked.select(*output([piece[lab] for lab in labels])))
        built = released.persist()
        self._persisted.append(built)
        shuffled = _shuffled(built, internal).select(
            *(sf.col(c).alias(name) for c, name in zip(internal, order, strict=True))
        )
        return SparkRelease(
            shuffled, built.select(*internal, *raws), tuple(order), tuple(internal), rows=self.rows
        )

    def verify_recoding(
        self, released: SparkRelease, plan: TupleRecoding, expected: Expected
    ) -> None:
        """Re-check a local recoding's release in Spark, sharing nothing with the plan's
        tuples: as many rows as the input and no class below k (one ``groupBy``); with each
        quasi-identifier's input value in place of its label, the release is the input
        (``exceptAll`` is empty); every distinct (label, input value) pair covers
        (:func:`~kanonym.engine.base.verify_covering`); the models on sensitive values.

        Raises:
            VerificationError: naming the first failure.
        """
        sf = _functions()
        names = plan.names
        frame = released.unordered
        qis = [self._internal[n] for n in names]
        with self._refusing():
            summary = (
                frame.groupBy(*qis)
                .count()
                .agg(
                    sf.sum("count").alias("rows"),
                    sf.count(sf.when(sf.col("count") < expected.k, 1)).alias("small"),
                )
                .first()
            )
        assert summary is not None
        count, small = int(summary["rows"] or 0), int(summary["small"])
        if count != self.rows:
            raise VerificationError(
                f"{self.source}: the release holds {count} rows, the input {self.rows}; a local "
                "recoding releases every row"
            )
        raws = {self._internal[n]: _RAW.format(j) for j, n in enumerate(names)}
        as_input = frame.select(*(sf.col(raws.get(c, c)).alias(c) for c in released.internal))
        with self._refusing():
            stray = as_input.exceptAll(self.input.select(*released.internal)).count()
        if stray:
            raise VerificationError(
                f"{self.source}: {stray} released rows are no input row with its "
                "quasi-identifiers recoded"
            )
        pairs = sf.array(
            *(
                sf.struct(
                    sf.lit(j).alias("column"),
                    sf.col(q).alias("label"),
                    sf.col(raws[q]).alias("value"),
                )
                for j, q in enumerate(qis)
            )
        )
        found = self._fetch_arrow(
            frame.select(sf.inline(pairs)).distinct(), ["column", "label", "value"]
        ).cast({"label": pl.String, "value": pl.String})
        verify_covering(
            self.source,
            [
                found.filter(pl.col("column") == j).select("label", "value").rows()
                for j in range(len(names))
            ],
            plan,
            expected,
        )
        if names and small > 0:
            raise VerificationError(
                f"{self.source}: {small} released classes have fewer than k={expected.k} rows"
            )
        verify_counted_models(self, released, names, expected)

    def counts(self, released: SparkRelease, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` in the release with their counts (one
        ``groupBy``, through Arrow)."""
        if not columns:
            return Grouped(pl.DataFrame(height=1), np.array([released.rows], np.int64))
        position = dict(zip(released.columns, released.internal, strict=True))
        absent = next((c for c in columns if c not in position), None)
        if absent is not None:
            raise InputError(f"{self.source}: the release has no column '{absent}'")
        counted = released.unordered.groupBy(*(position[c] for c in columns)).count()
        frame = self._fetch_arrow(counted, [*columns, "kanonym_count"])
        counts = frame.get_column("kanonym_count").cast(pl.Int64).to_numpy()
        return Grouped(frame.drop("kanonym_count").cast(pl.String), np.ascontiguousarray(counts))

    def fetch(self, released: SparkRelease) -> pl.DataFrame:
        """Every released row, through Arrow (text columns), in the shuffled order."""
        return self._fetch_arrow(released.frame, released.columns).cast(pl.String)

    def publishes(self, destination: str) -> bool:
        """Spark writes a table (``spark-table:NAME``) or Parquet itself; a CSV file is
        written by kanonym from the fetched rows (on the driver)."""
        return spark_writes(destination)

    def publish(self, released: SparkRelease, destination: str, *, replace: bool) -> None:
        """Write the verified release as Parquet at ``destination`` (a directory of part
        files, on any file system Spark writes) or as the catalog table
        ``spark-table:NAME``, through Spark's writer: the commit protocol moves the files
        into place only when every task succeeded, and a failed job leaves no output.
        ``replace`` overwrites an existing destination (Spark's ``overwrite`` mode, which
        removes the old output first: a replacement that fails leaves none).

        Raises:
            InputError: ``destination`` exists and ``replace`` is false, names a
                non-Parquet file (``.csv``), or the write fails (naming it).
        """
        mode = "overwrite" if replace else "errorifexists"
        writer = released.frame.write.mode(mode)
        if is_spark_table(destination):
            table = destination[len(TABLE_PREFIX) :]
            with self._writing(destination, replace=replace, path=None):
                writer.saveAsTable(table)
            return
        if self._path is not None and _same_place(self._path, destination):
            raise InputError(
                f"{destination}: is the input {self._path}: writing it would destroy it; "
                "choose another destination"
            )
        if Path(destination).suffix.lower() in _CSV_SUFFIXES:
            raise InputError(
                f"{destination}: the Spark engine writes Parquet: name a directory "
                f"(such as release.parquet) or a table ({TABLE_PREFIX}DB.NAME)"
            )
        with self._writing(destination, replace=replace, path=destination):
            writer.parquet(destination)

    @contextlib.contextmanager
    def _writing(self, destination: str, *, replace: bool, path: str | None) -> Iterator[None]:
        """A failed write as one line naming ``destination``; the directory a failed job
        created (Spark leaves it, empty) removed."""
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        # Asked before the write: only a directory this write created is removed.
        found = self._file_system(path)
        created = found is not None and not found[0].exists(found[1])
        try:
            yield
        except (PySparkException, Py4JJavaError) as error:
            reason = _message(error)
            if created:
                self._remove(path)
            if not replace and ("ALREADY_EXISTS" in reason or "already exists" in reason):
                raise InputError(
                    f"{destination}: exists; choose another destination or replace it "
                    "(replace=True)"
                ) from None
            raise InputError(f"{destination}: cannot write the release: {reason}") from None

    def _file_system(self, path: str | None) -> tuple[Any, Any] | None:
        """The Hadoop file system Spark writes ``path`` to, and the path on it; None under
        Spark Connect, whose client has no JVM to ask."""
        from pyspark.errors import PySparkException

        if path is None:
            return None
        try:
            context = self.session.sparkContext
        except PySparkException:
            return None
        jvm = context._jvm
        if jvm is None:
            return None
        hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
        return hadoop_path.getFileSystem(context._jsc.hadoopConfiguration()), hadoop_path

    def _remove(self, path: str | None) -> None:
        found = self._file_system(path)
        if found is not None and found[0].exists(found[1]):
            found[0].delete(found[1], True)

    def close(self) -> None:
        """Release what the engine persisted; the session stays (it may be the caller's,
        and one kanonym started is kept for the next release)."""
        while self._persisted:
            self._persisted.pop().unpersist()


@dataclass(frozen=True, eq=False)
class SparkRelease:
    """A release built in Spark: a lazy DataFrame, persisted on first use.

    Attributes:
        frame: the released rows in their shuffled order, with the input's
            column names (what :meth:`SparkEngine.fetch` and
            :meth:`SparkEngine.publish` read).
        unordered: the same rows before the shuffle's sort, with the engine's
            positional column names (what the re-check and the counts read:
            an aggregation needs no order, and Spark would sort for nothing);
            a local recoding's also holds its quasi-identifiers' input values,
            for the re-check.
        columns: the released columns, in order.
        internal: the engine's positional names of ``columns`` (c0, c1, ...).
        rows: the number of released rows the plan implies (the re-check
            holds the release to it).
    """

    frame: DataFrame
    unordered: DataFrame
    columns: tuple[str, ...]
    internal: tuple[str, ...]
    rows: int
