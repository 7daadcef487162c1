"""The streaming engine: a Parquet or CSV file anonymized without holding its rows in memory.

The embedded engine (:mod:`kanonym.engine.embedded`) reads the whole table;
10M Adult-shaped rows peak at about 5 GiB, so 100M do not fit a 24 GB
machine. This engine keeps the rows on disk and runs every step that reads
them on Polars' streaming engine (bounded memory, batch by batch), as the
engine seam (:mod:`kanonym.engine.base`) splits the work:

* **distinct** and **group** scan the file: each column's distinct values
  (one small ``group_by`` per column), then the quasi-identifier tuples with
  their counts, grouped on dictionary codes (an ``Enum`` of the distinct
  values; grouping the strings themselves is three times slower), each tuple
  with its first row so that the tuples come in the order they first appear,
  as the embedded engine numbers them (the metrics then agree to the bit).
* **generalize** maps each quasi-identifier through its level's labels (a
  gather by dictionary code, per batch), leaves out the suppressed classes
  (an anti-join on their code tuples) and writes the release to temporary
  Parquet files, one per *bucket*: each row goes to bucket ``hash(seed, row)
  mod B``. The release's row order is the buckets in turn, each permuted in
  memory by ``numpy.random.default_rng([seed, bucket])``. A uniform random
  assignment to buckets followed by a uniform permutation of each bucket is a
  uniform random permutation of the whole (every ordering has probability
  ``1/n!``), and only one bucket is ever in memory. The order differs from the
  embedded engine's for the same seed; the released multiset does not.
* **verify** re-checks the release with code that shares nothing with the
  mapping that built it: the input is scanned again, each quasi-identifier
  generalized from :attr:`Hierarchy.levels` itself, and both sides are
  grouped by class (the released quasi-identifier tuple) with the class's row
  count and the sum of a 64-bit hash of each of its whole rows (every released
  column). Each released class must be a class of the generalized input with
  as many rows and the same sum (so the same rows, up to a 2^-64 chance per
  class of a coincidence), of at least k rows, and the rows missing must be the
  search's suppressed count. Both sides group on classes, not rows, so the
  check fits in memory whatever the number of rows.
* **publish** streams the shuffled release to a temporary file beside the
  destination and renames it into place: Parquet, or CSV laid out like the
  input (byte for byte what the embedded engine writes for the same rows in
  the same order).

Values are read as :func:`kanonym.io.read_table` reads them: CSV as text in
its sniffed dialect (checked record by record, transcoded to UTF-8 when it is
not), Parquet with its types, empty strings as missing, quasi-identifiers
compared as strings. Temporary files live in one directory under the system's
temporary folder, removed by :meth:`StreamingEngine.close`.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kanonym.hierarchy import Hierarchy
    >>> path = Path(tempfile.mkdtemp()) / "zips.parquet"
    >>> pl.DataFrame({"zip": ["02138", "02139", "02138"]}).write_parquet(path)
    >>> engine = StreamingEngine(path)
    >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*")))
    >>> encoded = engine.encode({"zip": h})
    >>> encoded.frequency_set.counts.tolist(), engine.rows
    ([2, 1], 3)
    >>> engine.close()
"""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import os
import re
import secrets
import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

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
from kanonym.errors import InputError, NestedColumnError, VerificationError, clip
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
    _check_records,
    _first_line,
    _other_delimiter,
    _physical_lines,
    _refuse_documents,
    _sniff_delimiter,
    delimiter_character,
)
from kanonym.io.table import nested_columns
from kanonym.io.write import _DEFAULT_DIALECT, _unencodable, sync_directory

# Rows of one bucket held in memory at a time (the shuffle), in estimated bytes.
BUCKET_BYTES = 256 * 2**20
# CSV is checked and transcoded in blocks of about this many bytes.
_BLOCK = 64 * 2**20
_ROW = "_kanonym_row"
_BUCKET = "_kanonym_bucket"
_COUNT = "_kanonym_count"
_FIRST = "_kanonym_first"
_HASH = "_kanonym_hash"
_CODE = "_kanonym_code_{}"
# A local recoding's release keeps each quasi-identifier's input value (as a string) beside
# its label, for the re-check (never fetched nor published).
_RAW = "_kanonym_raw_{}"
# The seed of the re-check's row hash (any fixed value: both sides use it).
_CHECK_SEED = 0x6B616E6F


@dataclass(frozen=True, eq=False)
class StreamingRelease:
    """A release written to temporary Parquet files, one per bucket (not yet shuffled).

    Attributes:
        buckets: per bucket (in release order), its files.
        columns: the released columns, in order.
        schema: their types.
        seed: the seed of the shuffle.
        rows: the number of released rows.
        inputs: beside the released columns in the files, a local recoding's
            quasi-identifiers' input values (strings, for the re-check only).
    """

    buckets: tuple[tuple[int, tuple[Path, ...]], ...]
    columns: tuple[str, ...]
    schema: pl.Schema
    seed: int
    rows: int
    inputs: tuple[str, ...] = ()

    def scan(self, *, inputs: bool = False) -> pl.LazyFrame:
        """Every released row, in no particular order (for the checks and counts), with the
        input values of a local recoding's quasi-identifiers if ``inputs``."""
        files = [f for _, paths in self.buckets for f in paths]
        columns = [*self.columns, *self.inputs] if inputs else list(self.columns)
        if not files:
            schema = self.schema | dict.fromkeys(self.inputs, pl.String)
            return pl.LazyFrame(schema={c: schema[c] for c in columns})
        return pl.scan_parquet(files).select(columns)

    def shuffled(self) -> Iterator[pl.DataFrame]:
        """The released rows in their release order, one bucket at a time."""
        for bucket, paths in self.buckets:
            frame = pl.read_parquet(list(paths)).select(self.columns)
            order = np.random.default_rng([self.seed, bucket]).permutation(frame.height)
            yield frame[order]


class StreamingEngine:
    """A Parquet or CSV file whose rows stay on disk (see module docstring)."""

    name = "streaming"

    def __init__(self, path: str | Path, *, delimiter: str | None = None) -> None:
        self.path = Path(path)
        self._source = str(path)
        self._work = Path(tempfile.mkdtemp(prefix="kanonym-streaming-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._work, ignore_errors=True)
        self.dialect: CsvDialect | None = None
        self._hint: str | None = None
        try:
            self._input = self._open(delimiter)
            self._schema = self._input.collect_schema()
            self._rows = int(self._input.select(pl.len()).collect().item())
        except BaseException:
            self.close()
            raise
        self._distinct: dict[str, list[str | None]] = {}
        self._releases = 0

    # -- reading -------------------------------------------------------------------------

    def _open(self, delimiter: str | None) -> pl.LazyFrame:
        """The input as a lazy scan, read as :func:`kanonym.io.read_table` reads it."""
        source = self._source
        if delimiter is not None:
            delimiter = delimiter_character(delimiter)
            _check_delimiter(delimiter, source)
        try:
            with self.path.open("rb") as handle:
                head = handle.read(_SNIFF_BYTES + 1)
        except FileNotFoundError:
            raise InputError(f"{clip(source)}: file not found") from None
        except IsADirectoryError:
            raise InputError(f"{clip(source)}: is a directory, not a file") from None
        except OSError as err:
            raise InputError(f"{clip(source)}: cannot read: {err.strerror}") from None
        if head.startswith(_PARQUET_MAGIC) or format_for(self.path) == "parquet":
            if delimiter is not None:
                raise InputError(
                    f"{source}: `delimiter` applies to CSV input only; this is Parquet"
                )
            return self._open_parquet()
        _refuse_documents(head, source)
        return self._open_csv(head, delimiter)

    def _open_parquet(self) -> pl.LazyFrame:
        try:
            scan = pl.scan_parquet(self.path)
            names = scan.collect_schema().names()
        except (pl.exceptions.PolarsError, OSError) as err:
            raise InputError(
                f"{self._source}: not a readable Parquet file: {_first_line(err)}"
            ) from None
        _check_names(names, self._source)
        return _empty_to_null(scan)

    def _open_csv(self, head: bytes, delimiter: str | None) -> pl.LazyFrame:
        """Check the CSV record by record (as the in-memory reader does), transcoding it to
        UTF-8 beside the engine's other files when it is not UTF-8 already, and scan it."""
        text, encoding = self._utf8_body(head)
        with text.open("rb") as handle:
            sample = handle.read(_SNIFF_BYTES + 1)
        if not sample or sample == _UTF8_BOM:
            raise InputError(f"{self._source}: empty file, expected a header row")
        sample = sample.removeprefix(_UTF8_BOM)
        separator = delimiter or _sniff_delimiter(sample)
        width, quote_all, header, line_end, final = self._check_csv(text, separator)
        first = pl.read_csv(
            header,
            has_header=False,
            separator=separator,
            quote_char='"',
            n_rows=1,
            infer_schema=False,
            truncate_ragged_lines=True,
        )
        names = [name or "" for name in first.row(0)][:width]
        names += [""] * (width - len(names))
        _check_names(names, self._source)
        self.dialect = CsvDialect(
            delimiter=separator,
            line_terminator=line_end,
            quote_all=quote_all,
            encoding=encoding,
            final_newline=final,
        )
        self._hint = _other_delimiter(sample, separator) if width == 1 else None
        schema = {f"column_{index}": pl.String for index in range(width)}
        scan = pl.scan_csv(
            text,
            has_header=False,
            separator=separator,
            quote_char='"',
            schema=schema,
            infer_schema=False,
            empty_string_is_null=False,
        )
        # The header is row 0 of the data (as the in-memory reader reads it).
        return _empty_to_null(scan.slice(1).rename(dict(zip(schema, names, strict=True))))

    def _utf8_body(self, head: bytes) -> tuple[Path, str]:
        """A UTF-8 file with the CSV's text (the file itself when it is UTF-8 and not
        compressed) and the encoding it was read in, chosen as the in-memory reader
        chooses it: UTF-8, else cp1252, else latin-1."""
        compressed = head.startswith(_GZIP_MAGIC)
        if not compressed:
            if head.startswith(_UTF8_BOM):
                # A BOM file must be UTF-8 throughout (checked below, block by block).
                self._check_utf8(self.path, "utf-8-sig")
                return self.path, "utf-8-sig"
            if self._valid(self.path, "utf-8"):
                return self.path, "utf-8"
        target = self._work / "input.csv"
        for encoding in ("utf-8", "cp1252", "latin-1"):
            if self._transcode(encoding, target, compressed=compressed):
                if encoding == "utf-8" and self._starts_with_bom(target):
                    return target, "utf-8-sig"
                return target, encoding
        raise AssertionError("latin-1 decodes every byte")  # pragma: no cover

    @staticmethod
    def _starts_with_bom(path: Path) -> bool:
        with path.open("rb") as handle:
            return handle.read(len(_UTF8_BOM)) == _UTF8_BOM

    def _raw(self, *, compressed: bool) -> io.BufferedIOBase:
        if not compressed:
            return self.path.open("rb")
        return gzip.open(self.path, "rb")

    def _valid(self, path: Path, encoding: str) -> bool:
        """Whether the whole file decodes in ``encoding`` (read block by block)."""
        try:
            self._check_utf8(path, encoding)
        except InputError:
            return False
        return True

    def _check_utf8(self, path: Path, encoding: str) -> None:
        import codecs

        decoder = codecs.getincrementaldecoder(encoding)()
        offset = 0
        with path.open("rb") as handle:
            while block := handle.read(_BLOCK):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as err:
                    raise InputError(
                        f"{self._source}: starts with a UTF-8 byte order mark but is not UTF-8"
                        f" (byte offset {offset + err.start})"
                    ) from None
                offset += len(block)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as err:
            raise InputError(
                f"{self._source}: starts with a UTF-8 byte order mark but is not UTF-8"
                f" (byte offset {offset + err.start})"
            ) from None

    def _transcode(self, encoding: str, target: Path, *, compressed: bool) -> bool:
        """Write the file's text as UTF-8 to ``target``; False if it is not ``encoding``."""
        import codecs
        import zlib

        decoder = codecs.getincrementaldecoder(encoding)()
        try:
            with self._raw(compressed=compressed) as raw, target.open("wb") as out:
                while block := raw.read(_BLOCK):
                    out.write(decoder.decode(block).encode("utf-8"))
                out.write(decoder.decode(b"", final=True).encode("utf-8"))
        except UnicodeDecodeError:
            return False
        except (OSError, EOFError, zlib.error) as err:
            if compressed:
                raise InputError(f"{self._source}: corrupt gzip data: {_first_line(err)}") from None
            raise InputError(f"{self._source}: cannot read: {_first_line(err)}") from None
        return True

    def _check_csv(self, text: Path, separator: str) -> tuple[int, bool, bytes, str, bool]:
        """Check every record of ``text`` as the in-memory reader does, in blocks cut where
        no quoted field is open; returns the width, whether every field is quoted, the
        header record's bytes, its line terminator and whether the file ends with one."""
        width = 0
        quote_all = True
        header_lines = 1
        line_end = "\n"
        header = b""
        done_lines = 0
        last = b""
        with text.open("rb") as handle:
            carry = b""
            first = True
            while True:
                block = handle.read(_BLOCK)
                data = carry + block
                if first:
                    data = data.removeprefix(_UTF8_BOM)
                if not data:
                    break
                cut = _quote_closed_cut(data) if block else len(data)
                if cut <= 0:
                    carry = data
                    continue
                piece, carry = data[:cut], data[cut:]
                last = piece[-2:]
                body = piece if first else header + piece
                if first and not body.strip(b"\r\n"):
                    raise InputError(f"{self._source}: empty file, expected a header row")
                lines = _physical_lines(body)
                try:
                    records = _check_records(lines, separator, self._source)
                except InputError as err:
                    offset = done_lines - (0 if first else header_lines)
                    raise InputError(_shift_lines(str(err), offset)) from None
                if first:
                    width, header_lines = records.width, records.header_lines
                    header_end = _nth_line_end(piece, header_lines)
                    header = piece[: header_end + 1]
                    line_end = "\r\n" if piece[header_end - 1 : header_end] == b"\r" else "\n"
                    if not header.endswith(b"\n"):
                        header += b"\n"
                elif records.width != width:  # pragma: no cover - the header sets the width
                    raise InputError(f"{self._source}: ragged records")
                quote_all = quote_all and records.quote_all
                done_lines += piece.count(b"\n")
                first = False
                if not block:
                    break
        if first:
            raise InputError(f"{self._source}: empty file, expected a header row")
        return width, quote_all, header, line_end, last.endswith(b"\n")

    @property
    def source(self) -> str:
        """The input file, as given."""
        return self._source

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        return tuple(self._schema.names())

    @property
    def rows(self) -> int:
        """The input's number of rows (counted once, from the file's metadata for Parquet)."""
        return self._rows

    def require(self, names: Sequence[str]) -> None:
        """Raise :class:`~kanonym.errors.InputError` naming the first of ``names`` the
        input lacks (with the in-memory reader's hints), or if it has no rows."""
        stand_in = Table(
            frame=pl.DataFrame(schema=self._schema),
            source=self._source,
            dialect=self.dialect,
            delimiter_hint=self._hint,
        )
        missing = [n for n in names if n not in self._schema]
        if missing:
            stand_in.require(missing)
        if self._rows == 0:
            raise InputError(f"{self._source}: the table has no rows")

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as strings (computed once)."""
        return self.distinct(column)[column]

    def distinct(self, *columns: str) -> dict[str, list[str | None]]:
        """The distinct values of several columns as strings: one streaming ``group_by``
        per column, each reading its column alone."""
        missing = [c for c in dict.fromkeys(columns) if c not in self._distinct]
        if missing:
            nested = nested_columns({c: self._schema[c] for c in missing})
            if nested:
                column, kind = next(iter(nested.items()))
                raise NestedColumnError(self._source, column, kind)
            for column in missing:
                # One query per column: run together (collect_all), they share one scan,
                # which Polars then holds in memory (14 GiB for 100M rows).
                frame = (
                    self._input.group_by(pl.col(column).cast(pl.String))
                    .agg()
                    .collect(engine="streaming")
                )
                self._distinct[column] = frame.get_column(column).to_list()
        return {c: self._distinct[c] for c in columns}

    def _codes(self, column: str) -> tuple[pl.Expr, list[str]]:
        """Each row's dictionary code of ``column`` (its values as strings, in an ``Enum``
        of the distinct ones; null for the missing value), and those values in code order."""
        values = [v for v in self.distinct_values(column) if v is not None]
        code = pl.col(column).cast(pl.String).cast(pl.Enum(values)).to_physical()
        return code, values

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` (as strings) with their counts, in the order
        they first appear: one streaming ``group_by`` on dictionary codes."""
        if not columns:
            height = 1 if self._rows > 0 else 0
            return Grouped(pl.DataFrame(height=height), np.full(height, self._rows, np.int64))
        self.require(columns)
        codes = {c: self._codes(c) for c in columns}
        counted = (
            self._input.with_row_index(_ROW)
            .select(pl.col(_ROW), *(code.alias(c) for c, (code, _) in codes.items()))
            .group_by(list(columns))
            .agg(pl.len().alias(_COUNT), pl.col(_ROW).min().alias(_FIRST))
            .collect(engine="streaming")
            .sort(_FIRST)
        )
        values = pl.DataFrame(
            [
                pl.Series(c, values, pl.String).gather(counted.get_column(c)).alias(c)
                for c, (_, values) in codes.items()
            ]
        )
        counts = counted.get_column(_COUNT).cast(pl.Int64).to_numpy()
        return Grouped(values, np.ascontiguousarray(counts))

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers grouped on disk, then encoded into the frequency set."""
        encoded, _ = encode_grouped(self.group(list(hierarchies)), hierarchies)
        return encoded

    # -- the release ---------------------------------------------------------------------

    def _mapped(
        self, column: str, leaves: Sequence[str | None], shown: Sequence[str | None]
    ) -> pl.Expr:
        """``column`` (as strings) replaced, row by row, by ``shown[i]`` where ``leaves[i]``
        is its value: a gather by dictionary code, which the streaming engine runs per batch."""
        present = [leaf for leaf in leaves if leaf is not None]
        labels = [label for leaf, label in zip(leaves, shown, strict=True) if leaf is not None]
        missing = next((lab for leaf, lab in zip(leaves, shown, strict=True) if leaf is None), None)
        code = (
            pl.col(column)
            .cast(pl.String)
            .cast(pl.Enum(present))
            .to_physical()
            .fill_null(len(present))
        )
        return pl.lit(pl.Series([*labels, missing], dtype=pl.String)).gather(code).alias(column)

    def generalize(self, plan: Generalization) -> StreamingRelease:
        """Write the release (generalized, suppressed, identifying columns dropped) to
        temporary Parquet files, one per bucket of the shuffle (not yet verified)."""
        names = plan.encoded.names
        order = [c for c in self.columns if c not in plan.drop]
        nested = nested_columns({c: self._schema[c] for c in order})
        if nested:
            column, kind = next(iter(nested.items()))
            raise NestedColumnError(self._source, column, kind)
        labelled: list[pl.Expr] = []
        coded: list[pl.Expr] = []
        for j, name in enumerate(names):
            attribute = plan.encoded.attributes[j]
            level_map = attribute.level_maps[plan.levels[j]].tolist()
            shown = attribute.level_labels[plan.levels[j]]
            leaves = attribute.level_labels[0]
            labelled.append(self._mapped(name, leaves, [shown[c] for c in level_map]))
            present = [leaf for leaf in leaves if leaf is not None]
            codes = [c for leaf, c in zip(leaves, level_map, strict=True) if leaf is not None]
            missing = next(
                (c for leaf, c in zip(leaves, level_map, strict=True) if leaf is None), -1
            )
            raw = pl.col(name).cast(pl.String).cast(pl.Enum(present)).to_physical()
            coded.append(
                pl.lit(pl.Series([*codes, missing], dtype=pl.Int64))
                .gather(raw.fill_null(len(present)))
                .alias(_CODE.format(j))
            )
        kept = int(plan.encoded.frequency_set.counts[plan.released].sum())
        frame = self._input.with_row_index(_ROW)
        suppressed = self._suppressed_classes(plan)
        if suppressed.height:
            frame = frame.with_columns(coded).join(
                suppressed.lazy(), on=list(suppressed.columns), how="anti"
            )
        return self._sink(frame.with_columns(*labelled), order, (), plan.seed, kept)

    def _sink(
        self,
        frame: pl.LazyFrame,
        order: Sequence[str],
        inputs: Sequence[str],
        seed: int,
        kept: int,
    ) -> StreamingRelease:
        """Write the released rows of ``frame`` (its columns ``order`` and ``inputs``, with the
        input's row index) to temporary Parquet files, one per bucket ``hash(seed, row)``."""
        buckets = max(1, math.ceil(kept * self._row_bytes() / BUCKET_BYTES))
        frame = frame.with_columns(
            (pl.col(_ROW).hash(seed) % buckets).cast(pl.UInt32).alias(_BUCKET)
        ).select(*order, *inputs, _BUCKET)
        self._releases += 1
        folder = self._work / f"release-{self._releases}"
        frame.sink_parquet(
            pl.PartitionBy(folder, key=_BUCKET, include_key=False, approximate_bytes_per_file=None),
            mkdir=True,
            compression="lz4",
            row_group_size=64 * 1024,
            engine="streaming",
        )
        parts: list[tuple[int, tuple[Path, ...]]] = []
        if folder.exists():
            for directory in folder.iterdir():
                bucket = int(directory.name.rsplit("=", 1)[1])
                parts.append((bucket, tuple(sorted(directory.glob("*.parquet")))))
        parts.sort()
        schema = frame.collect_schema()
        schema = pl.Schema({c: schema[c] for c in order})
        return StreamingRelease(tuple(parts), tuple(order), schema, seed, kept, tuple(inputs))

    def recode(self, plan: TupleRecoding) -> StreamingRelease:
        """Write a local recoding's release to temporary Parquet files, one per bucket of
        the shuffle (not yet verified): each row's labels by a join with the plan's tuples
        on the raw key values (missing equal to missing), streamed. The rows of units a
        relaxed cut split are read once more and ranked in memory (only those rows, only
        the released columns) to take their pieces in the plan's order."""
        names = plan.names
        order = [c for c in self.columns if c not in plan.drop]
        nested = nested_columns({c: self._schema[c] for c in order})
        if nested:
            column, kind = next(iter(nested.items()))
            raise NestedColumnError(self._source, column, kind)
        keys = [TupleRecoding.key(i) for i in range(len(plan.keys))]
        labels = [TupleRecoding.label(j) for j in range(len(names))]
        raws = [_RAW.format(j) for j in range(len(names))]
        frame = (
            self._input.with_row_index(_ROW)
            .with_columns(
                pl.col(c).cast(pl.String).alias(key) for c, key in zip(plan.keys, keys, strict=True)
            )
            .join(plan.tuples.lazy(), on=keys, how="inner", nulls_equal=True)
        )
        chosen = [pl.col(label) for label in labels]
        if plan.pieces.height:
            split = self._split_labels(frame, plan)
            frame = frame.join(split.lazy(), on=_ROW, how="left", suffix="_piece")
            chosen = [
                pl.when(pl.col(TupleRecoding.SPLIT))
                .then(pl.col(f"{label}_piece"))
                .otherwise(pl.col(label))
                for label in labels
            ]
        frame = frame.with_columns(
            *(pl.col(n).cast(pl.String).alias(r) for n, r in zip(names, raws, strict=True)),
            *(label.alias(n) for label, n in zip(chosen, names, strict=True)),
        )
        return self._sink(frame, order, raws, plan.seed, self._rows)

    def _split_labels(self, frame: pl.LazyFrame, plan: TupleRecoding) -> pl.DataFrame:
        """The labels of every row of a split unit (by row index): the unit's rows ranked by
        the released columns (as strings, byte order, missing first), the ranks' pieces."""
        ranked_by = plan.ranked(self.columns)
        rows = (
            frame.filter(pl.col(TupleRecoding.SPLIT))
            .select(
                _ROW,
                TupleRecoding.UNIT,
                *(
                    pl.col(c).cast(pl.String).alias(f"_kanonym_rank_{i}")
                    for i, c in enumerate(ranked_by)
                ),
            )
            .collect(engine="streaming")
            .sort(
                [TupleRecoding.UNIT, *(f"_kanonym_rank_{i}" for i in range(len(ranked_by)))],
                nulls_last=False,
            )
        )
        pieces = plan.pieces.sort(TupleRecoding.UNIT, TupleRecoding.FIRST)
        # Split units in increasing order, each unit's rows in rank order: the n-th row of
        # them all falls in the piece whose cumulative count first exceeds n.
        sizes = (
            pieces.get_column(TupleRecoding.LAST) - pieces.get_column(TupleRecoding.FIRST) + 1
        ).to_numpy()
        piece = np.searchsorted(np.cumsum(sizes), np.arange(rows.height), side="right")
        labels = [TupleRecoding.label(j) for j in range(len(plan.names))]
        return pieces.select(labels)[piece].with_columns(rows.get_column(_ROW))

    def verify_recoding(
        self, released: StreamingRelease, plan: TupleRecoding, expected: Expected
    ) -> None:
        """Re-check a local recoding's release with code that shares nothing with the plan's
        tuples: as many rows as the input and no class below k; with each
        quasi-identifier's input value in place of its label, the release is the input
        (per input tuple, its row count and the sum of a 64-bit hash of its rows, as
        :meth:`verify` compares classes); every distinct (label, input value) pair covers
        (:func:`~kanonym.engine.base.verify_covering`); the models on sensitive values.

        Raises:
            VerificationError: naming the first failure.
        """
        names = list(plan.names)
        order = list(released.columns)
        raws = dict(zip(names, released.inputs, strict=True))
        release = released.scan(inputs=True)
        as_input = release.select(
            pl.col(raws[c]).alias(c) if c in raws else pl.col(c) for c in order
        )
        source = self._input.select(order).with_columns(pl.col(n).cast(pl.String) for n in names)
        queries = [
            release.group_by(names).agg(pl.len().alias(_COUNT)),
            _classes(as_input, names, order),
            _classes(source, names, order),
            *(release.group_by(n, raws[n]).agg() for n in names),
        ]
        classes, found_out, found_in, *pairs = pl.collect_all(queries, engine="streaming")
        count = int(classes.get_column(_COUNT).sum())
        if count != self._rows:
            raise VerificationError(
                f"{self._source}: the release holds {count} rows, the input {self._rows}; a local "
                "recoding releases every row"
            )
        matched = found_out.join(
            found_in, on=names, how="left", nulls_equal=True, suffix="_in"
        ).filter(
            pl.col(f"{_COUNT}_in").is_null()
            | (pl.col(_COUNT) != pl.col(f"{_COUNT}_in"))
            | (pl.col(f"{_HASH}_lo") != pl.col(f"{_HASH}_lo_in"))
            | (pl.col(f"{_HASH}_hi") != pl.col(f"{_HASH}_hi_in"))
        )
        if matched.height:
            stray = int(matched.get_column(_COUNT).sum())
            raise VerificationError(
                f"{self._source}: {stray} released rows are no input row with its "
                "quasi-identifiers recoded"
            )
        verify_covering(self._source, [p.rows() for p in pairs], plan, expected)
        small = int((classes.get_column(_COUNT) < expected.k).sum())
        if small:
            raise VerificationError(
                f"{self._source}: {small} released classes have fewer than k={expected.k} rows"
            )
        verify_counted_models(self, released, names, expected)

    def _row_bytes(self) -> float:
        """The estimated in-memory size of one input row (from its first rows)."""
        sample = self._input.head(10_000).collect()
        return sample.estimated_size() / max(sample.height, 1)

    def _suppressed_classes(self, plan: Generalization) -> pl.DataFrame:
        """The code tuples (at the node's levels) of the classes whose rows are suppressed."""
        attributes = plan.encoded.attributes
        codes = plan.encoded.frequency_set.codes[~plan.released]
        columns = {
            _CODE.format(j): a.level_maps[plan.levels[j]][codes[:, j]]
            for j, a in enumerate(attributes)
        }
        return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.Int64)).unique()

    def verify(self, released: StreamingRelease, plan: Generalization, expected: Expected) -> None:
        """Re-check the release against the input, class by class (see module docstring).

        Raises:
            VerificationError: a released row is no input row generalized along
                the hierarchies, the number of rows differs from the search's,
                too many rows are suppressed, a class is below k, or a class fails
                a model on sensitive values (counted by a streaming ``group_by``).
        """
        names = list(plan.encoded.names)
        order = [c for c in self.columns if c not in plan.drop]
        if list(released.columns) != order:
            raise VerificationError(
                f"{self._source}: the release's columns {list(released.columns)} are not the "
                f"input's without the removed ones {order}"
            )
        recomputed = []
        for j, name in enumerate(names):
            hierarchy = expected.hierarchies[name]
            level = plan.levels[j]
            recomputed.append(self._mapped(name, hierarchy.leaves, hierarchy.levels[level]))
        source = self._input.with_columns(recomputed).select(order)
        classes_in = _classes(source, names, order)
        classes_out = _classes(released.scan(), names, order)
        found_in, found_out = pl.collect_all([classes_in, classes_out], engine="streaming")
        count = int(found_out.get_column(_COUNT).sum())
        missing = self._rows - count
        if missing != expected.suppressed_rows or missing > expected.max_suppressed_rows:
            raise VerificationError(
                f"{self._source}: the release lacks {missing} input rows; the search suppressed "
                f"{expected.suppressed_rows} (limit {expected.max_suppressed_rows})"
            )
        small = int((found_out.get_column(_COUNT) < expected.k).sum())
        if names and small > 0:
            raise VerificationError(
                f"{self._source}: {small} released classes have fewer than k={expected.k} rows"
            )
        keys = names or [_FIRST]
        matched = found_out.join(
            found_in, on=keys, how="left", nulls_equal=True, suffix="_in"
        ).filter(
            pl.col(f"{_COUNT}_in").is_null()
            | (pl.col(_COUNT) != pl.col(f"{_COUNT}_in"))
            | (pl.col(f"{_HASH}_lo") != pl.col(f"{_HASH}_lo_in"))
            | (pl.col(f"{_HASH}_hi") != pl.col(f"{_HASH}_hi_in"))
        )
        if matched.height:
            stray = int(matched.get_column(_COUNT).sum())
            raise VerificationError(
                f"{self._source}: {stray} released rows are no input row generalized at levels "
                f"{dict(zip(names, plan.levels, strict=True))}"
            )
        verify_counted_models(self, released, names, expected)

    def counts(self, released: StreamingRelease, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` in the release (as strings) with their counts
        (one streaming ``group_by``)."""
        if not columns:
            return Grouped(pl.DataFrame(height=1), np.array([released.rows], np.int64))
        absent = next((c for c in columns if c not in released.columns), None)
        if absent is not None:
            raise InputError(f"{self._source}: the release has no column '{absent}'")
        counted = (
            released.scan()
            .group_by(pl.col(c).cast(pl.String) for c in columns)
            .agg(pl.len().alias(_COUNT))
            .collect(engine="streaming")
        )
        counts = counted.get_column(_COUNT).cast(pl.Int64).to_numpy()
        return Grouped(counted.drop(_COUNT), np.ascontiguousarray(counts))

    def fetch(self, released: StreamingRelease) -> pl.DataFrame:
        """Every released row, in the release order (in memory: the API's ``Result.table``)."""
        frames = list(released.shuffled())
        if not frames:
            return pl.DataFrame(schema=released.schema)
        return pl.concat(frames)

    def publishes(self, destination: str) -> bool:
        """Every local file is written by :meth:`publish` (streamed, never held in memory);
        a URL or a catalog table is not this engine's."""
        return "://" not in destination and not destination.startswith("spark-table:")

    def publish(self, released: StreamingRelease, destination: str, *, replace: bool) -> None:
        """Write the verified release to ``destination`` (Parquet, or CSV in the input's
        dialect, by its extension), streamed to a temporary file beside it and renamed into
        place; an existing file is refused unless ``replace``.

        Raises:
            InputError: ``destination`` is the input, exists and ``replace`` is false, or
                cannot be written (nothing is left).
        """
        target = Path(destination)
        if same_file(target, self.path):
            raise InputError(
                f"output {target} is the input table {self.path}: writing it would destroy it; "
                "choose another path"
            )
        if target.is_dir():
            raise InputError(f"{target}: cannot write: is a directory")
        if target.exists() and not replace:
            raise InputError(f"{target}: file exists; choose another or replace it (replace=True)")
        temporary = target.with_name(f".kanonym-{secrets.token_hex(8)}.tmp")
        try:
            if format_for(target) == "parquet":
                self._write_parquet(released, temporary)
            else:
                self._write_csv(released, temporary)
            with temporary.open("rb+") as handle:
                os.fsync(handle.fileno())
            if replace:
                temporary.replace(target)
            else:
                # A hard link fails if the destination appeared meanwhile: never clobbered.
                os.link(temporary, target)
                temporary.unlink()
            sync_directory(target.parent)
        except FileExistsError:
            raise InputError(
                f"{target}: file exists; choose another or replace it (replace=True)"
            ) from None
        except OSError as err:
            reason = (
                f"directory {target.parent} does not exist"
                if isinstance(err, FileNotFoundError)
                else err.strerror or type(err).__name__
            )
            raise InputError(f"{target}: cannot write: {reason}") from None
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)

    def _write_parquet(self, released: StreamingRelease, path: Path) -> None:
        from polars.io.plugins import register_io_source

        def batches(
            with_columns: list[str] | None,
            predicate: pl.Expr | None,
            n_rows: int | None,
            _: int | None,
        ) -> Iterator[pl.DataFrame]:
            del with_columns, predicate, n_rows  # the whole release is written
            yield from released.shuffled()

        source = register_io_source(batches, schema=released.schema)
        source.sink_parquet(path, engine="streaming")

    def _write_csv(self, released: StreamingRelease, path: Path) -> None:
        """The CSV the embedded engine writes for the same rows (kanonym.io.write), one
        bucket at a time: quoting is decided field by field, so the pieces add up to it."""
        dialect = self.dialect or _DEFAULT_DIALECT
        encoding = dialect.encoding
        end = dialect.line_terminator
        header = True
        with path.open("wb") as out:
            frames: Iterator[pl.DataFrame] = released.shuffled()
            empty = pl.DataFrame(schema=released.schema)
            for frame in _with_header(frames, empty):
                text = frame.write_csv(
                    include_header=header,
                    separator=dialect.delimiter,
                    quote_char=dialect.quotechar,
                    line_terminator=end,
                    quote_style="always" if dialect.quote_all else "necessary",
                    null_value="",
                )
                try:
                    out.write(text.encode(encoding))
                except UnicodeEncodeError as err:
                    raise InputError(_unencodable(frame, err.object[err.start], encoding)) from None
                # A byte order mark starts the file only.
                encoding = "utf-8" if encoding == "utf-8-sig" else encoding
                header = False
        if not dialect.final_newline:
            terminator = end.encode(encoding)
            with path.open("rb+") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(size - len(terminator), 0))
                if handle.read() == terminator:
                    handle.truncate(size - len(terminator))

    def close(self) -> None:
        """Remove the engine's temporary files (whatever was not published)."""
        self._cleanup()


def _with_header(frames: Iterator[pl.DataFrame], empty: pl.DataFrame) -> Iterator[pl.DataFrame]:
    """``frames``, or one empty frame when there are none (the header is written all the same)."""
    any_frame = False
    for frame in frames:
        any_frame = True
        yield frame
    if not any_frame:
        yield empty


def _empty_to_null(scan: pl.LazyFrame) -> pl.LazyFrame:
    """Empty strings become null, as the in-memory reader reads them."""
    strings = pl.col(pl.String)
    return scan.with_columns(pl.when(strings != "").then(strings))


def _classes(rows: pl.LazyFrame, names: Sequence[str], order: Sequence[str]) -> pl.LazyFrame:
    """Per class (the tuple of ``names``): its rows and the sum of a 64-bit hash of each
    whole row (``order``), in two 32-bit halves so that the sums cannot overflow."""
    keys = [pl.col(n) for n in names] or [pl.lit(0).alias(_FIRST)]
    hashed = rows.select(
        *keys,
        pl.struct(list(order)).hash(_CHECK_SEED).alias(_HASH),
    )
    return hashed.group_by(list(names) or [_FIRST]).agg(
        pl.len().alias(_COUNT),
        (pl.col(_HASH) % 2**32).sum().alias(f"{_HASH}_lo"),
        (pl.col(_HASH) // 2**32).sum().alias(f"{_HASH}_hi"),
    )


def _quote_closed_cut(data: bytes) -> int:
    """The end (after its LF) of the last line of ``data`` after which no quoted field is
    open, or 0 if there is none (quotes pair up in well-formed CSV, so parity decides)."""
    end = data.rfind(b"\n")
    while end >= 0:
        if data.count(b'"', 0, end) % 2 == 0:
            return end + 1
        end = data.rfind(b"\n", 0, end)
    return 0


def _nth_line_end(data: bytes, lines: int) -> int:
    """The offset of the LF that ends physical line ``lines`` (1-based) of ``data``."""
    end = -1
    for _ in range(lines):
        found = data.find(b"\n", end + 1)
        if found < 0:
            return len(data)
        end = found
    return end


def _shift_lines(message: str, offset: int) -> str:
    """A reader message for one block with its line numbers made the file's."""
    if offset == 0:
        return message
    return re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) + offset}", message)
