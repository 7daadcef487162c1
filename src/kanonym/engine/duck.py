"""The DuckDB engine: a Parquet or CSV file, or a table of a DuckDB database, anonymized in DuckDB.

DuckDB (Raasveldt & Mühleisen 2019) is an in-process analytical database: it
groups, joins and sorts tables larger than memory by spilling to disk. This
engine hands it every step that reads rows, as the engine seam
(:mod:`kanonym.engine.base`) splits the work; only the frequency set and
small aggregates reach Polars (through Arrow):

* **input**: a Parquet file (read in place, each query a scan of it), a CSV
  file (parsed once into a temporary table: every column as text, the
  delimiter given or sniffed as the in-memory reader sniffs it, gzip and
  cp1252 or latin-1 text read as :func:`kanonym.io.read_table` reads them), or
  a table of a DuckDB database file named by a URL,
  ``duckdb:///ABSOLUTE/PATH.duckdb?table=SCHEMA.T`` (``duckdb://RELATIVE/PATH``
  from the working directory; ``?table=T`` is in schema ``main``), attached
  read-only. Every value is compared as text (DuckDB's ``CAST(... AS
  VARCHAR)``), the empty string read as the missing value.
* **group** is one ``GROUP BY`` (the distinct values of the columns are read
  off it, and kept for encoding).
* **generalize** loads one small mapping table per quasi-identifier (raw value
  -> code and label at the chosen level) and the suppressed classes' code
  tuples from Polars, then builds the release with one ``CREATE TEMP TABLE
  ... AS SELECT`` that joins the mappings, leaves out the suppressed classes
  and orders the rows by ``hash(seed, row)`` (the seeded shuffle).
* **verify** re-checks the release in SQL, sharing nothing with the mapping
  tables: as many rows missing as the search suppressed, within the limit; no
  class below k (``GROUP BY ... HAVING count(*) < k``); every released row a
  distinct input row generalized along the hierarchies themselves (the
  release ``EXCEPT ALL`` the input with labels recomputed from
  :attr:`Hierarchy.levels` must be empty: computed exactly by counting each
  distinct row on both sides); the models
  on sensitive values judged on counts
  (:func:`~kanonym.engine.base.verify_counted_models`).
* **publish** writes Parquet or CSV with DuckDB's ``COPY`` to a temporary file
  beside the destination, renamed into place (the CSV is byte for byte what
  kanonym writes for the same rows: ``,``, LF, quotes only where needed), or
  creates a table in a DuckDB database file in one transaction, after the
  re-check passed.

DuckDB keeps its work in memory up to :func:`memory_limit` and spills the rest
to a temporary folder, removed by :meth:`DuckDBEngine.close` with everything
not published. The ``duckdb`` package (the ``duckdb`` extra) is imported only
when this engine is used.

Example:
    >>> import tempfile
    >>> from kanonym.hierarchy import Hierarchy
    >>> path = Path(tempfile.mkdtemp()) / "zips.parquet"
    >>> pl.DataFrame({"zip": ["02138", "02139", "02138"]}).write_parquet(path)
    >>> engine = DuckDBEngine(path)
    >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*")))
    >>> sorted(engine.encode({"zip": h}).frequency_set.counts.tolist()), engine.rows
    ([1, 2], 3)
    >>> engine.close()
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import io
import itertools
import os
import re
import secrets
import shutil
import tempfile
import weakref
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

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
from kanonym.errors import (
    DestinationExistsError,
    InputError,
    NestedColumnError,
    VerificationError,
    clip,
)
from kanonym.hierarchy import Hierarchy
from kanonym.io import CsvDialect, Table, format_for
from kanonym.io.paths import same_file
from kanonym.io.read import (
    _GZIP_MAGIC,
    _PARQUET_MAGIC,
    _SNIFF_BYTES,
    _UTF8_BOM,
    _check_delimiter,
    _check_names,
    _other_delimiter,
    _refuse_documents,
    _sniff_delimiter,
    delimiter_character,
)
from kanonym.io.write import sync_directory

SCHEME = "duckdb://"
_INPUT = "kanonym_input"
_SOURCE = "kanonym_source"
_TARGET = "kanonym_target"
_COUNT = "kanonym_count"
# A DuckDB database file holds these bytes at offset 8.
_DUCKDB_MAGIC = b"DUCK"
# A local recoding's release keeps each quasi-identifier's input value beside its label
# for the re-check (never fetched nor published).
_RAW = "_kanonym_raw_{}"
# CSV text is transcoded to UTF-8 in blocks of this many bytes.
_BLOCK = 64 * 2**20
# DuckDB's memory limit: this share of the memory available when the engine opens, and
# never less than the floor (below it, DuckDB spills nearly everything). 10M Adult-shaped
# rows: a 1 GiB limit, 1.4 GiB peak RSS; 2 GiB, 2.4 GiB; 10 GiB, 3.3 GiB; the time
# hardly changes (spilling is cheap next to the work).
MEMORY_SHARE = 0.25
MEMORY_FLOOR = 256 * 2**20
# DuckDB's types of nested values, by the start of their name, as the in-memory reader
# names them (kanonym.io.table.nested_columns).
_NESTED = (("STRUCT", "structs"), ("MAP", "lists"), ("UNION", "nested values"))


def is_duckdb_url(data: object) -> bool:
    """Whether ``data`` names a table of a DuckDB database file (a ``duckdb://`` URL)."""
    return isinstance(data, str) and data.startswith(SCHEME)


@dataclass(frozen=True)
class DuckDBLocation:
    """A table of a DuckDB database file, parsed from a URL.

    Attributes:
        path: the database file.
        schema: the table's schema (``main`` unless the URL names one).
        table: the table's name.
        shown: the URL as given (messages show it).
    """

    path: Path
    schema: str
    table: str
    shown: str

    @classmethod
    def parse(cls, url: str, *, what: str = "input") -> DuckDBLocation:
        """Read ``duckdb:///PATH?table=SCHEMA.T`` (``?table=T``: schema ``main``).

        Raises:
            InputError: the URL names no file or no table, names another
                parameter, or the table is not ``NAME`` or ``SCHEMA.NAME``.

        Example:
            >>> found = DuckDBLocation.parse("duckdb:///data/health.duckdb?table=visits")
            >>> str(found.path), found.schema, found.table
            ('/data/health.duckdb', 'main', 'visits')
        """
        rest = url.removeprefix(SCHEME)
        file, _, query = rest.partition("?")
        params = parse_qsl(query, keep_blank_values=True)
        unknown = [k for k, _ in params if k != "table"]
        if unknown:
            raise InputError(f"{url}: unknown parameter '{unknown[0]}'; the {what} is ?table=NAME")
        tables = [v for _, v in params]
        if not file or len(tables) != 1:
            raise InputError(
                f"{url}: name the {what} as duckdb:///PATH/TO/FILE.duckdb?table=SCHEMA.NAME"
            )
        pieces = tables[0].split(".")
        if not 1 <= len(pieces) <= 2 or not all(pieces):
            raise InputError(f"{url}: table '{tables[0]}' is not NAME or SCHEMA.NAME")
        schema, table = pieces if len(pieces) == 2 else ("main", pieces[0])
        return cls(Path(unquote(file)), schema, table, url)


def memory_limit(available: int | None = None) -> int:
    """DuckDB's memory limit in bytes: :data:`MEMORY_SHARE` of the memory ``available`` (by
    default what the system has available now), at least :data:`MEMORY_FLOOR`. What does
    not fit spills to the engine's temporary folder; the rest of the memory stays for the
    Python process (the frequency set, the search) and other programs.

    Example:
        >>> memory_limit(16 * 2**30) // 2**30
        4
    """
    if available is None:
        available = _available_memory()
    return max(MEMORY_FLOOR, int(available * MEMORY_SHARE))


def _available_memory() -> int:
    """The memory the system can give now (Linux's ``MemAvailable``, else the free pages)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _literal(value: str | None) -> str:
    """``value`` as an SQL string literal (NULL for the missing value)."""
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


def _columns(names: Sequence[str], alias: str | None = None) -> str:
    """A comma-separated list of quoted columns, each prefixed by ``alias.`` if given."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + _ident(n) for n in names)


def _first_line(error: BaseException) -> str:
    """The first line of a DuckDB error, cut (it may quote a value)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return clip(lines[0]) if lines else type(error).__name__


def _csv_error(source: str, error: BaseException) -> str:
    """A DuckDB CSV error as one line naming the file and the line, as the in-memory reader
    words it where it can (a ragged record)."""
    text = str(error)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    fields = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if line and fields:
        found = int(fields.group(2))
        plural = "field" if found == 1 else "fields"
        return (
            f"{source}: line {line.group(1)} has {found} {plural}, the header has {fields.group(1)}"
        )
    if line:
        # The error, then the record, then the reason: the record is not shown.
        reasons = [r for r in text.splitlines()[2:] if r.strip()]
        reason = clip(reasons[0].strip()) if reasons else _first_line(error)
        return f"{source}: line {line.group(1)}: malformed CSV: {reason}"
    return f"{source}: malformed CSV: {_first_line(error)}"


def _nested_kind(kind: str) -> str | None:
    """What a DuckDB column type holds if it is nested (``lists``, ``arrays``, ``structs``)."""
    if kind.endswith("[]"):
        return "lists"
    if kind.endswith("]"):
        return "arrays"
    return next((name for start, name in _NESTED if kind.startswith(start)), None)


class DuckDBEngine:
    """A Parquet or CSV file, or a table of a DuckDB database, in DuckDB (see module
    docstring)."""

    name = "duckdb"

    def __init__(self, data: str | Path, *, delimiter: str | None = None) -> None:
        try:
            import duckdb
        except ImportError as error:  # pragma: no cover - the extra is part of dev
            raise InputError(
                "the duckdb engine needs the duckdb package: pip install 'kanonym[duckdb]'"
            ) from error
        self._source = str(data)
        self._work = Path(tempfile.mkdtemp(prefix="kanonym-duckdb-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._work, ignore_errors=True)
        self.connection = duckdb.connect(
            ":memory:",
            config={
                "temp_directory": str(self._work / "spill"),
                "memory_limit": f"{memory_limit() // 2**20}MiB",
                # The release's rows are stored in their shuffled order and read back so.
                "preserve_insertion_order": True,
            },
        )
        self.path: Path | None = None
        self.location: DuckDBLocation | None = None
        self.dialect: CsvDialect | None = None
        self._hint: str | None = None
        self._types: dict[str, str] = {}
        self._distinct: dict[str, list[str | None]] = {}
        self._groups: dict[tuple[str, ...], Grouped] = {}
        self._releases = itertools.count()
        try:
            if is_duckdb_url(data):
                if delimiter is not None:
                    raise InputError(f"{self._source}: `delimiter` applies to CSV input only")
                self._open_table(DuckDBLocation.parse(str(data)))
            else:
                self._open_file(Path(data), delimiter)
            self._rows = int(self._scalar(f"SELECT count(*) FROM {_INPUT}"))
        except BaseException:
            self.close()
            raise

    # -- reading -------------------------------------------------------------------------

    def _open_table(self, location: DuckDBLocation) -> None:
        """Attach the database file read-only and take its table as the input, as text."""
        self.location = location
        if not location.path.is_file():
            reason = "is a directory, not a file" if location.path.is_dir() else "file not found"
            raise InputError(f"{location.shown}: {location.path}: {reason}")
        self._attach(location.path, read_only=True)
        found = self._query(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
            f"{_literal(_SOURCE)} AND schema_name = {_literal(location.schema)} AND "
            f"table_name = {_literal(location.table)} ORDER BY column_index"
        )
        if not found.height:
            tables = self._query(
                "SELECT schema_name || '.' || table_name AS t FROM duckdb_tables() "
                f"WHERE database_name = {_literal(_SOURCE)} ORDER BY 1"
            ).get_column("t")
            listed = ", ".join(tables.head(20).to_list()) or "none"
            raise InputError(
                f"{location.shown}: no table {location.schema}.{location.table} in "
                f"{location.path} (tables: {listed})"
            )
        self._types = dict(found.iter_rows())
        relation = f"{_ident(_SOURCE)}.{_ident(location.schema)}.{_ident(location.table)}"
        self._execute(self._define(relation, view=True))

    def _attach(self, path: Path, *, read_only: bool) -> None:
        """Attach the database file ``path`` as the input's database."""
        mode = " (READ_ONLY)" if read_only else ""
        self._execute(f"ATTACH {_literal(str(path))} AS {_ident(_SOURCE)}{mode}")

    def _open_file(self, path: Path, delimiter: str | None) -> None:
        """Take a Parquet or CSV file as the input (read as :func:`kanonym.io.read_table`
        reads it)."""
        self.path = path
        source = self._source
        if delimiter is not None:
            delimiter = delimiter_character(delimiter)
            _check_delimiter(delimiter, source)
        try:
            with path.open("rb") as handle:
                head = handle.read(_SNIFF_BYTES + 1)
        except FileNotFoundError:
            raise InputError(f"{clip(source)}: file not found") from None
        except IsADirectoryError:
            raise InputError(f"{clip(source)}: is a directory, not a file") from None
        except OSError as err:
            raise InputError(f"{clip(source)}: cannot read: {err.strerror}") from None
        if head.startswith(_PARQUET_MAGIC) or format_for(path) == "parquet":
            if delimiter is not None:
                raise InputError(
                    f"{source}: `delimiter` applies to CSV input only; this is Parquet"
                )
            self._open_parquet(path)
            return
        if head[8:12] == _DUCKDB_MAGIC:
            raise InputError(
                f"{source}: is a DuckDB database file; name one of its tables: "
                f"duckdb://{path.absolute()}?table=SCHEMA.NAME"
            )
        _refuse_documents(head, source)
        self._open_csv(path, compressed=head.startswith(_GZIP_MAGIC), delimiter=delimiter)

    def _open_parquet(self, path: Path) -> None:
        scan = f"read_parquet({_literal(str(path))})"
        import duckdb

        try:
            described = self.connection.sql(f"DESCRIBE SELECT * FROM {scan}").fetchall()
        except duckdb.Error as error:
            raise InputError(
                f"{self._source}: not a readable Parquet file: {_first_line(error)}"
            ) from None
        _check_names([str(row[0]) for row in described], self._source)
        self._types = {str(row[0]): str(row[1]) for row in described}
        self._execute(self._define(scan, view=True))

    def _define(self, relation: str, *, view: bool) -> str:
        """The statement defining the input (``relation``) as the temporary ``kanonym_input``:
        every column as text, the empty string as the missing value; a view, or a table
        when ``relation`` should be read once (a CSV file)."""
        texts = ", ".join(
            f"NULLIF(CAST({_ident(c)} AS VARCHAR), '') AS {_ident(c)}" for c in self._types
        )
        kind = "VIEW" if view else "TABLE"
        return f"CREATE TEMP {kind} {_INPUT} AS SELECT {texts} FROM {relation}"

    def _open_csv(self, path: Path, *, compressed: bool, delimiter: str | None) -> None:
        """Parse the CSV once into a temporary table, every column as text. UTF-8 is read as
        it is; other text (cp1252, else latin-1, as the in-memory reader decides) is
        transcoded to UTF-8 in the engine's folder first."""
        head = self._head(path, compressed=compressed)
        if _utf8_prefix(head) and self._read_csv(path, head, compressed, delimiter):
            return
        text = self._transcode(path, compressed=compressed)
        read = self._read_csv(text, self._head(text, compressed=False), False, delimiter)
        assert read, "the transcoded text is UTF-8"

    def _read_csv(self, file: Path, head: bytes, compressed: bool, delimiter: str | None) -> bool:
        """Read the UTF-8 CSV ``file`` (``head``: its first bytes) into the input table;
        False if DuckDB finds it is not UTF-8 after all."""
        import duckdb

        names, separator, header_end = self._header(head, delimiter)
        self._types = dict.fromkeys(names, "VARCHAR")
        columns = ", ".join(f"{_literal(f'c{i}')}: 'VARCHAR'" for i in range(len(names)))
        scan = (
            f"read_csv({_literal(str(file))}, header = true, auto_detect = false, "
            f"columns = {{{columns}}}, delim = {_literal(separator)}, quote = '\"', "
            "escape = '\"', strict_mode = true, null_padding = false, comment = '', "
            f"compression = {_literal('gzip' if compressed else 'none')})"
        )
        renamed = ", ".join(f"c{i} AS {_ident(n)}" for i, n in enumerate(names))
        try:
            self.connection.execute(self._define(f"(SELECT {renamed} FROM {scan})", view=False))
        except duckdb.Error as error:
            if "not utf-8 encoded" in str(error):
                return False
            raise InputError(_csv_error(self._source, error)) from None
        self.dialect = CsvDialect(
            delimiter=separator,
            line_terminator="\r\n" if header_end.endswith(b"\r\n") else "\n",
            quote_all=False,
            encoding="utf-8",
            final_newline=True,
        )
        self._hint = _other_delimiter(head, separator) if len(names) == 1 else None
        return True

    def _head(self, path: Path, *, compressed: bool) -> bytes:
        """The first bytes of the file's text (decompressed), without a byte order mark."""
        try:
            with _open_raw(path, compressed=compressed) as raw:
                head = raw.read(_SNIFF_BYTES + 1)
        except (OSError, EOFError, zlib.error) as err:
            raise InputError(f"{self._source}: corrupt gzip data: {_first_line(err)}") from None
        return head.removeprefix(_UTF8_BOM)

    def _header(self, sample: bytes, delimiter: str | None) -> tuple[list[str], str, bytes]:
        """The column names (checked as the in-memory reader checks them), the delimiter
        (given, else sniffed) and the end of the header record's line."""
        if not sample.strip(b"\r\n"):
            raise InputError(f"{self._source}: empty file, expected a header row")
        # Text never contains NUL; UTF-16 and binary files do (as the in-memory reader says).
        if b"\x00" in sample:
            raise InputError(f"{self._source}: contains NUL bytes; not a CSV text file (UTF-16?)")
        separator = delimiter or _sniff_delimiter(sample)
        body = sample.decode("utf-8", errors="ignore")
        reader = csv.reader(io.StringIO(body, newline=""), delimiter=separator, quotechar='"')
        names = next(reader, [])
        _check_names(names, self._source)
        end = sample.find(b"\n")
        return names, separator, sample[max(end - 1, 0) : end + 1]

    def _transcode(self, path: Path, *, compressed: bool) -> Path:
        """The file's text as UTF-8 in the engine's folder: read as cp1252, else latin-1
        (which decodes every byte), as :func:`kanonym.io.read_table` reads non-UTF-8 text.

        Raises:
            InputError: the file starts with a UTF-8 byte order mark but is not UTF-8.
        """
        if self._head(path, compressed=compressed) != _raw_head(path, compressed=compressed):
            raise InputError(
                f"{self._source}: starts with a UTF-8 byte order mark but is not UTF-8"
            )
        target = self._work / "input.csv"
        for encoding in ("cp1252", "latin-1"):
            decoder = codecs.getincrementaldecoder(encoding)()
            try:
                with _open_raw(path, compressed=compressed) as raw, target.open("wb") as out:
                    while block := raw.read(_BLOCK):
                        out.write(decoder.decode(block).encode("utf-8"))
                    out.write(decoder.decode(b"", final=True).encode("utf-8"))
            except UnicodeDecodeError:
                continue
            except (OSError, EOFError, zlib.error) as err:
                raise InputError(f"{self._source}: cannot read: {_first_line(err)}") from None
            return target
        raise AssertionError("latin-1 decodes every byte")  # pragma: no cover

    # -- SQL -----------------------------------------------------------------------------

    def _execute(self, statement: str) -> None:
        """Run ``statement``; a DuckDB error becomes an :class:`InputError` naming the input."""
        import duckdb

        try:
            self.connection.execute(statement)
        except duckdb.Error as error:
            raise InputError(f"{self._source}: {_first_line(error)}") from None

    def _query(self, query: str) -> pl.DataFrame:
        """The rows of ``query`` as a Polars frame (through Arrow)."""
        import duckdb

        try:
            frame: pl.DataFrame = self.connection.sql(query).pl()
        except duckdb.Error as error:
            raise InputError(f"{self._source}: {_first_line(error)}") from None
        return frame

    def _scalar(self, query: str) -> Any:
        import duckdb

        try:
            rows = self.connection.sql(query).fetchall()
        except duckdb.Error as error:
            raise InputError(f"{self._source}: {_first_line(error)}") from None
        return rows[0][0]

    def _load(self, table: str, frame: pl.DataFrame) -> None:
        """``frame`` as the temporary table ``table`` (replacing one of that name)."""
        view = f"{table}_frame"
        self.connection.register(view, frame)
        try:
            self._execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM {view}")
        finally:
            self.connection.unregister(view)

    # -- the input -----------------------------------------------------------------------

    @property
    def source(self) -> str:
        """The input, as given (a path or a ``duckdb://`` URL)."""
        return self._source

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        return tuple(self._types)

    @property
    def rows(self) -> int:
        """The input's number of rows (counted when the engine opened)."""
        return self._rows

    def require(self, names: Sequence[str]) -> None:
        """Raise :class:`~kanonym.errors.InputError` naming the first of ``names`` the input
        lacks (with the in-memory reader's hints), or if it has no rows."""
        missing = [n for n in names if n not in self._types]
        if missing:
            stand_in = Table(
                frame=pl.DataFrame(schema=dict.fromkeys(self._types, pl.String)),
                source=self._source,
                dialect=self.dialect,
                delimiter_hint=self._hint,
            )
            stand_in.require(missing)
        if self._rows == 0:
            raise InputError(f"{self._source}: the table has no rows")

    def _require_flat(self, names: Sequence[str]) -> None:
        """Raise :class:`NestedColumnError` for the first of ``names`` holding nested values."""
        for name in names:
            kind = _nested_kind(self._types.get(name, "VARCHAR"))
            if kind is not None:
                raise NestedColumnError(self._source, name, kind)

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as text."""
        return self.distinct(column)[column]

    def distinct(self, *columns: str) -> dict[str, list[str | None]]:
        """The distinct values of several columns as text, read off their grouping
        (:meth:`group`, kept for :meth:`encode`: one scan serves both)."""
        missing = [c for c in dict.fromkeys(columns) if c not in self._distinct]
        if missing:
            grouped = self.group(list(dict.fromkeys(columns)))
            for column in missing:
                values = grouped.values.get_column(column).unique(maintain_order=True)
                self._distinct[column] = values.to_list()
        return {c: self._distinct[c] for c in columns}

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` (as text) with their counts: one ``GROUP BY``
        (kept: declaring and encoding group the same columns)."""
        key = tuple(columns)
        if key in self._groups:
            return self._groups[key]
        if not columns:
            height = 1 if self._rows > 0 else 0
            return Grouped(pl.DataFrame(height=height), np.full(height, self._rows, np.int64))
        self.require(columns)
        self._require_flat(columns)
        positions = ", ".join(str(j + 1) for j in range(len(columns)))
        frame = self._query(
            f"SELECT {_columns(columns)}, count(*) AS {_COUNT} FROM {_INPUT} GROUP BY {positions}"
        )
        grouped = _grouped(frame, columns)
        self._groups[key] = grouped
        return grouped

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers grouped in DuckDB, then encoded into the frequency set."""
        encoded, _ = encode_grouped(self.group(list(hierarchies)), hierarchies)
        return encoded

    # -- the release ---------------------------------------------------------------------

    def _release_table(self) -> str:
        return f"kanonym_release_{next(self._releases)}"

    def _hash_order(self, seed: int, alias: str, names: Sequence[str]) -> str:
        """``ORDER BY`` a seeded 64-bit hash of the rows' ``names`` columns: a permutation
        fixed by the seed, the same for equal rows (which are interchangeable)."""
        return f"ORDER BY hash({int(seed)}, {_columns(names, alias)})"

    def generalize(self, plan: Generalization) -> DuckDBRelease:
        """Build the release as a temporary table (not yet verified)."""
        names = plan.encoded.names
        order = [c for c in self.columns if c not in plan.drop]
        self._require_flat(order)
        selected: dict[str, str] = {}
        joins: list[str] = []
        keys: list[str] = []
        for j, name in enumerate(names):
            attribute = plan.encoded.attributes[j]
            level = plan.levels[j]
            labels = attribute.level_labels[level]
            codes = attribute.level_maps[level].tolist()
            leaves = list(zip(attribute.level_labels[0], codes, strict=True))
            null_code = next((code for leaf, code in leaves if leaf is None), -1)
            null_label = labels[null_code] if null_code >= 0 else None
            self._load(
                f"kanonym_map_{j}",
                pl.DataFrame(
                    [(leaf, code, labels[code]) for leaf, code in leaves if leaf is not None],
                    schema={"raw": pl.String, "code": pl.Int64, "label": pl.String},
                    orient="row",
                ),
            )
            raw = f"s.{_ident(name)}"
            joins.append(f"LEFT JOIN kanonym_map_{j} m{j} ON m{j}.raw = {raw}")
            selected[name] = (
                f"CASE WHEN {raw} IS NULL THEN {_literal(null_label)} ELSE m{j}.label END"
            )
            keys.append(f"CASE WHEN {raw} IS NULL THEN {null_code} ELSE m{j}.code END")
        where = ""
        suppressed = self._suppressed_classes(plan)
        if suppressed.height:
            self._load("kanonym_suppressed", suppressed)
            on = " AND ".join(f"x.g{j} = {key}" for j, key in enumerate(keys))
            joins.append(f"LEFT JOIN kanonym_suppressed x ON {on}")
            where = "WHERE x.g0 IS NULL"
        items = ", ".join(
            f"{selected[c]} AS {_ident(c)}" if c in selected else f"s.{_ident(c)}" for c in order
        )
        table = self._release_table()
        self._execute(
            f"CREATE TEMP TABLE {table} AS SELECT {items} FROM {_INPUT} s {' '.join(joins)} "
            f"{where} {self._hash_order(plan.seed, 's', self.columns)}"
        )
        rows = int(self._scalar(f"SELECT count(*) FROM {table}"))
        return DuckDBRelease(table, tuple(order), rows)

    def _suppressed_classes(self, plan: Generalization) -> pl.DataFrame:
        """The code tuples (at the node's levels) of the classes whose rows are suppressed."""
        attributes = plan.encoded.attributes
        codes = plan.encoded.frequency_set.codes[~plan.released]
        columns = {
            f"g{j}": a.level_maps[plan.levels[j]][codes[:, j]] for j, a in enumerate(attributes)
        }
        return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.Int64)).unique()

    def verify(self, released: DuckDBRelease, plan: Generalization, expected: Expected) -> None:
        """Re-check the release in SQL (see module docstring).

        Raises:
            VerificationError: the number of rows differs from the search's, too
                many rows are suppressed, a class is below k, a released row is no
                input row generalized along the hierarchies, or a class fails a
                model on sensitive values (counted in DuckDB).
        """
        names = plan.encoded.names
        count = int(self._scalar(f"SELECT count(*) FROM {released.table}"))
        missing = self._rows - count
        if missing != expected.suppressed_rows or missing > expected.max_suppressed_rows:
            raise VerificationError(
                f"{self._source}: the release lacks {missing} input rows; the search suppressed "
                f"{expected.suppressed_rows} (limit {expected.max_suppressed_rows})"
            )
        self._verify_k(released, names, expected.k)
        self._verify_rows(released, plan, expected)
        verify_counted_models(self, released, names, expected)

    def _verify_k(self, released: DuckDBRelease, names: Sequence[str], k: int) -> None:
        """No class of the release (its rows grouped on ``names``) below k."""
        if not names:
            return
        small = int(
            self._scalar(
                f"SELECT count(*) FROM (SELECT 1 FROM {released.table} GROUP BY "
                f"{_columns(names)} HAVING count(*) < {int(k)})"
            )
        )
        if small:
            raise VerificationError(
                f"{self._source}: {small} released classes have fewer than k={k} rows"
            )

    def _stray(self, released: str, expected: str, width: int) -> int:
        """How many rows of the query ``released`` no row of ``expected`` (both ``width``
        columns) accounts for: the size of the multiset difference ``released EXCEPT ALL
        expected``, computed exactly by counting each distinct row on both sides (two
        ``GROUP BY``) and joining the counts, the missing value equal to itself. DuckDB runs
        ``EXCEPT ALL`` with a window over every row: 20 times slower on 10M rows."""
        names = [f"_kanonym_c{i}" for i in range(width)]
        columns = ", ".join(names)
        on = " AND ".join(f"r.{n} IS NOT DISTINCT FROM g.{n}" for n in names)
        return int(
            self._scalar(
                f"SELECT coalesce(sum(r.n - coalesce(g.n, 0)), 0) FROM "
                f"(SELECT {columns}, count(*) AS n FROM ({released}) q({columns}) GROUP BY ALL) r "
                f"LEFT JOIN (SELECT {columns}, count(*) AS n FROM ({expected}) q({columns}) "
                f"GROUP BY ALL) g ON {on} WHERE g.n IS NULL OR r.n > g.n"
            )
        )

    def _verify_rows(
        self, released: DuckDBRelease, plan: Generalization, expected: Expected
    ) -> None:
        """Every released row is a distinct input row generalized along the hierarchies
        (labels recomputed from :attr:`Hierarchy.levels`, not from the plan's mappings)."""
        names = plan.encoded.names
        expressions: dict[str, str] = {}
        joins: list[str] = []
        for j, name in enumerate(names):
            hierarchy = expected.hierarchies[name]
            level = plan.levels[j]
            pairs = [
                (leaf, hierarchy.levels[level][row])
                for row, leaf in enumerate(hierarchy.leaves)
                if leaf is not None
            ]
            null_label = next(
                (
                    hierarchy.levels[level][row]
                    for row, leaf in enumerate(hierarchy.leaves)
                    if leaf is None
                ),
                None,
            )
            self._load(
                f"kanonym_check_{j}",
                pl.DataFrame(pairs, schema={"raw": pl.String, "label": pl.String}, orient="row"),
            )
            raw = f"s.{_ident(name)}"
            joins.append(f"LEFT JOIN kanonym_check_{j} c{j} ON c{j}.raw = {raw}")
            expressions[name] = (
                f"CASE WHEN {raw} IS NULL THEN {_literal(null_label)} ELSE c{j}.label END"
            )
        generalized = ", ".join(expressions.get(c, f"s.{_ident(c)}") for c in released.columns)
        stray = self._stray(
            f"SELECT {_columns(released.columns)} FROM {released.table}",
            f"SELECT {generalized} FROM {_INPUT} s {' '.join(joins)}",
            len(released.columns),
        )
        if stray:
            raise VerificationError(
                f"{self._source}: {stray} released rows are no input row generalized at levels "
                f"{dict(zip(names, plan.levels, strict=True))}"
            )

    def recode(self, plan: TupleRecoding) -> DuckDBRelease:
        """Build a local recoding's release as a temporary table (not yet verified): the
        plan's tuples and pieces loaded, one ``CREATE TEMP TABLE ... AS SELECT`` joining
        them (the missing value equal to itself), the rows of split units ranked with
        ``row_number()`` in the plan's order (text compared byte by byte, missing first),
        shuffled by a seeded hash."""
        order = [c for c in self.columns if c not in plan.drop]
        self._require_flat(order)
        self._load("kanonym_tuples", plan.tuples)
        on = " AND ".join(
            f"s.{_ident(key)} IS NOT DISTINCT FROM t.{_ident(TupleRecoding.key(i))}"
            for i, key in enumerate(plan.keys)
        )
        labels = [TupleRecoding.label(j) for j in range(len(plan.names))]
        raws = [_RAW.format(j) for j in range(len(plan.names))]
        position = {name: j for j, name in enumerate(plan.names)}

        def output(rows: str, labelled: str) -> str:
            """The released columns (labels from ``labelled``) and the input values."""
            items = [
                f"{labelled}.{_ident(labels[position[c]])} AS {_ident(c)}"
                if c in position
                else f"{rows}.{_ident(c)} AS {_ident(c)}"
                for c in order
            ]
            items.extend(
                f"{rows}.{_ident(n)} AS {_ident(r)}" for n, r in zip(plan.names, raws, strict=True)
            )
            return ", ".join(items)

        split = _ident(TupleRecoding.SPLIT)
        unit = _ident(TupleRecoding.UNIT)
        branches = [
            f"SELECT {output('s', 't')} FROM {_INPUT} s JOIN kanonym_tuples t ON {on} "
            f"WHERE NOT t.{split}"
        ]
        if plan.pieces.height:
            self._load("kanonym_pieces", plan.pieces)
            ranking = ", ".join(f"s.{_ident(c)} NULLS FIRST" for c in plan.ranked(self.columns))
            ranked = (
                f"SELECT s.*, t.{unit} AS {unit}, row_number() OVER (PARTITION BY t.{unit} "
                f"ORDER BY {ranking}) AS _kanonym_rank FROM {_INPUT} s JOIN kanonym_tuples t "
                f"ON {on} WHERE t.{split}"
            )
            branches.append(
                f"SELECT {output('r', 'p')} FROM ({ranked}) r JOIN kanonym_pieces p ON "
                f"p.{unit} = r.{unit} AND r._kanonym_rank BETWEEN "
                f"p.{_ident(TupleRecoding.FIRST)} AND p.{_ident(TupleRecoding.LAST)}"
            )
        table = self._release_table()
        self._execute(
            f"CREATE TEMP TABLE {table} AS SELECT * FROM ({' UNION ALL '.join(branches)}) u "
            f"{self._hash_order(plan.seed, 'u', [*order, *raws])}"
        )
        rows = int(self._scalar(f"SELECT count(*) FROM {table}"))
        return DuckDBRelease(table, tuple(order), rows)

    def verify_recoding(
        self, released: DuckDBRelease, plan: TupleRecoding, expected: Expected
    ) -> None:
        """Re-check a local recoding's release in SQL, sharing nothing with the plan's
        tuples: as many rows as the input; with each quasi-identifier's input value in
        place of its label, the release is the input (their multiset difference is
        empty); every distinct (label, input value) pair covers
        (:func:`~kanonym.engine.base.verify_covering`, one ``GROUP BY GROUPING SETS``); no
        class below k; the models on sensitive values.

        Raises:
            VerificationError: naming the first failure.
        """
        count = int(self._scalar(f"SELECT count(*) FROM {released.table}"))
        if count != self._rows:
            raise VerificationError(
                f"{self._source}: the release holds {count} rows, the input {self._rows}; a "
                "local recoding releases every row"
            )
        raws = {name: _RAW.format(j) for j, name in enumerate(plan.names)}
        as_input = ", ".join(_ident(raws.get(c, c)) for c in released.columns)
        stray = self._stray(
            f"SELECT {as_input} FROM {released.table}",
            f"SELECT {_columns(released.columns)} FROM {_INPUT}",
            len(released.columns),
        )
        if stray:
            raise VerificationError(
                f"{self._source}: {stray} released rows are no input row with its "
                "quasi-identifiers recoded"
            )
        verify_covering(self._source, self._label_pairs(released, plan.names, raws), plan, expected)
        self._verify_k(released, plan.names, expected.k)
        verify_counted_models(self, released, plan.names, expected)

    def _label_pairs(
        self, released: DuckDBRelease, names: Sequence[str], raws: Mapping[str, str]
    ) -> list[list[tuple[str | None, str | None]]]:
        """Per quasi-identifier, the distinct (label, input value) pairs of the release: one
        scan (``GROUPING SETS``)."""
        if not names:
            return []
        columns = [c for name in names for c in (name, raws[name])]
        sets = ", ".join(f"({_ident(n)}, {_ident(raws[n])})" for n in names)
        flags = [f"_kanonym_set_{j}" for j in range(len(names))]
        grouping = ", ".join(
            f"GROUPING({_ident(n)}) AS {f}" for n, f in zip(names, flags, strict=True)
        )
        frame = self._query(
            f"SELECT {_columns(columns)}, {grouping} FROM {released.table} "
            f"GROUP BY GROUPING SETS ({sets})"
        )
        pairs = []
        for j, name in enumerate(names):
            # The rows of set j: the one whose flag is 0 (its label is grouped).
            mine = frame.filter(pl.col(flags[j]) == 0)
            pairs.append(list(zip(mine.get_column(name), mine.get_column(raws[name]), strict=True)))
        return pairs

    def counts(self, released: DuckDBRelease, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` in the release with their counts (one
        ``GROUP BY``)."""
        if not columns:
            return Grouped(pl.DataFrame(height=1), np.array([released.rows], np.int64))
        positions = ", ".join(str(j + 1) for j in range(len(columns)))
        frame = self._query(
            f"SELECT {_columns(columns)}, count(*) AS {_COUNT} FROM {released.table} "
            f"GROUP BY {positions}"
        )
        return _grouped(frame, columns)

    def fetch(self, released: DuckDBRelease) -> pl.DataFrame:
        """The release's rows (text columns), in their shuffled order, through Arrow."""
        frame = self._query(released.select())
        return frame.select(pl.col(c).cast(pl.String) for c in released.columns)

    # -- publishing ----------------------------------------------------------------------

    def publishes(self, destination: str) -> bool:
        """A ``duckdb://`` table, and every local file (Parquet, or CSV as kanonym writes it:
        :func:`kanonym.io.serialize` without a dialect) are written by :meth:`publish`; any
        other URL is not this engine's."""
        return is_duckdb_url(destination) or (
            "://" not in destination and not destination.startswith("spark-table:")
        )

    def publish(self, released: DuckDBRelease, destination: str, *, replace: bool) -> None:
        """Write the verified release to ``destination``: a table of a DuckDB database file
        (created in one transaction), or a Parquet or CSV file (by its extension) written by
        DuckDB's ``COPY`` to a temporary file beside it and renamed into place.

        Raises:
            InputError: ``destination`` is the input, exists and ``replace`` is false
                (:class:`~kanonym.errors.DestinationExistsError`), or cannot be
                written (nothing is left).
        """
        if is_duckdb_url(destination):
            self._publish_table(released, DuckDBLocation.parse(destination, what="output"), replace)
        else:
            self._publish_file(released, Path(destination), replace)

    def _publish_table(
        self, released: DuckDBRelease, target: DuckDBLocation, replace: bool
    ) -> None:
        """Create ``target`` as a copy of the release and commit: readers of the database
        see the whole table or none. The database file is attached for writing only while
        the table is created: the input's, attached read-only, is attached again for it
        (then read-only again); another file beside it (then detached)."""
        ours = self.location is not None and same_file(target.path, self.location.path)
        if ours:
            assert self.location is not None
            self._execute(f"DETACH DATABASE IF EXISTS {_ident(_SOURCE)}")
            self._attach(self.location.path, read_only=False)
        elif target.path.is_dir() or not target.path.parent.is_dir():
            raise InputError(f"{target.shown}: cannot create or open {target.path}")
        else:
            self._execute(f"ATTACH {_literal(str(target.path))} AS {_ident(_TARGET)}")
        database = _SOURCE if ours else _TARGET
        try:
            self._create(released, target, database, replace)
        finally:
            self._execute(f"DETACH DATABASE IF EXISTS {_ident(database)}")
            if ours:
                assert self.location is not None
                self._attach(self.location.path, read_only=True)

    def _create(
        self, released: DuckDBRelease, target: DuckDBLocation, database: str, replace: bool
    ) -> None:
        """Create ``target``'s table in the attached ``database`` in one transaction."""
        import duckdb

        name = f"{_ident(database)}.{_ident(target.schema)}.{_ident(target.table)}"
        exists = self._scalar(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
            f"{_literal(database)} AND schema_name = {_literal(target.schema)} AND "
            f"table_name = {_literal(target.table)}"
        )
        if exists and not replace:
            raise DestinationExistsError(target.shown, f"table {target.schema}.{target.table}")
        try:
            self.connection.execute("BEGIN TRANSACTION")
            if replace:
                self.connection.execute(f"DROP TABLE IF EXISTS {name}")
            self.connection.execute(f"CREATE TABLE {name} AS {released.select()}")
            self.connection.execute("COMMIT")
        except duckdb.Error as error:
            with contextlib.suppress(duckdb.Error):
                self.connection.execute("ROLLBACK")
            raise InputError(f"{target.shown}: {_first_line(error)}") from None

    def _publish_file(self, released: DuckDBRelease, target: Path, replace: bool) -> None:
        import duckdb

        if self.path is not None and same_file(target, self.path):
            raise InputError(
                f"output {target} is the input table {self.path}: writing it would destroy it; "
                "choose another path"
            )
        if target.is_dir():
            raise InputError(f"{target}: cannot write: is a directory")
        if target.exists() and not replace:
            raise DestinationExistsError(str(target), "file")
        if not target.parent.is_dir():
            raise InputError(f"{target}: cannot write: directory {target.parent} does not exist")
        temporary = target.with_name(f".kanonym-{secrets.token_hex(8)}.tmp")
        options = (
            "FORMAT parquet"
            if format_for(target) == "parquet"
            # kanonym's CSV (kanonym.io.serialize without a dialect): a header, `,`, LF,
            # quotes only around a delimiter, a quote or a line break, the missing value an
            # empty field. No comment character: DuckDB would quote a leading `#` for it.
            else "FORMAT csv, HEADER true, DELIMITER ',', QUOTE '\"', ESCAPE '\"', "
            "NEW_LINE '\\n', COMMENT '', COMPRESSION 'none'"
        )
        try:
            self.connection.execute(
                f"COPY ({released.select()}) TO {_literal(str(temporary))} ({options})"
            )
            with temporary.open("rb+") as handle:
                os.fsync(handle.fileno())
            if replace:
                temporary.replace(target)
            else:
                # A hard link fails if the destination appeared meanwhile: never clobbered.
                os.link(temporary, target)
            sync_directory(target.parent)
        except FileExistsError:
            raise DestinationExistsError(str(target), "file") from None
        except duckdb.Error as error:
            raise InputError(f"{target}: cannot write: {_first_line(error)}") from None
        except OSError as err:
            raise InputError(f"{target}: cannot write: {err.strerror or err}") from None
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)

    def close(self) -> None:
        """Discard what was not published: close the connection (temporary tables and the
        attached database go with it) and remove the engine's folder."""
        with contextlib.suppress(Exception):
            self.connection.close()
        self._cleanup()


@dataclass(frozen=True, eq=False)
class DuckDBRelease:
    """A release built in DuckDB: a temporary table of the engine's connection.

    Attributes:
        table: the temporary table's name.
        columns: the released columns, in order (a local recoding's table also
            holds the input values its re-check compares the labels with).
        rows: the number of released rows.
    """

    table: str
    columns: tuple[str, ...]
    rows: int

    def select(self) -> str:
        """``SELECT`` of the released columns, in the release's (shuffled) order."""
        return f"SELECT {_columns(self.columns)} FROM {self.table}"


def _grouped(frame: pl.DataFrame, columns: Sequence[str]) -> Grouped:
    """A grouping's frame (the columns as text, then the count) as :class:`Grouped`."""
    counts = frame.get_column(_COUNT).cast(pl.Int64).to_numpy()
    values = frame.select(pl.col(c).cast(pl.String) for c in columns)
    return Grouped(values, np.ascontiguousarray(counts))


def _open_raw(path: Path, *, compressed: bool) -> io.BufferedIOBase:
    """The file's bytes, decompressed if gzip."""
    if compressed:
        return gzip.open(path, "rb")
    return path.open("rb")


def _raw_head(path: Path, *, compressed: bool) -> bytes:
    with _open_raw(path, compressed=compressed) as raw:
        return raw.read(_SNIFF_BYTES + 1)


def _utf8_prefix(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes, perhaps cut inside a character) is UTF-8."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True
