"""Load person-specific tables faithfully: CSV (plain or gzip), Parquet, data frames.

CSV is read as text, never as inferred types: ZIP code ``02138`` stays
``"02138"`` and ``1.50`` stays ``"1.50"``. An empty field, quoted or not, is a
missing value (null), the one meaning of missing throughout kanonym. The layout
of the file (delimiter, quoting, line ends, encoding, final newline) is
recorded in a :class:`~kanonym.io.table.CsvDialect` so the release can be
written the same way. Bad input raises :class:`~kanonym.errors.InputError`
with a one-line message that names the file.

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "people.csv"
    >>> _ = path.write_bytes(b"zip;income\\r\\n02138;1.50\\r\\n02139;\\r\\n")
    >>> table = read_table(path)
    >>> table.frame.rows()
    [('02138', '1.50'), ('02139', None)]
    >>> table.dialect.delimiter, table.dialect.line_terminator
    (';', '\\r\\n')
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import itertools
import sys
import zipfile
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import polars as pl

from kanonym.errors import InputError, clip, echo
from kanonym.io.table import CsvDialect, Table
from kanonym.io.write import format_for

if TYPE_CHECKING:
    import pandas as pd

_PARQUET_MAGIC = b"PAR1"
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
"""A ZIP archive, or an empty one: .xlsx and .ods workbooks are ZIP archives."""
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""An OLE compound file: Excel 97-2003 .xls workbooks and other Office documents."""
_UTF8_BOM = b"\xef\xbb\xbf"
_QUOTE = '"'
_SNIFF_CANDIDATES = (",", ";", "\t", "|")
_HINT_CANDIDATES = (":", "^", "~", "#", " ")
"""Delimiters suggested, never sniffed, when a header reads as one column."""
_SNIFF_BYTES = 64 * 1024
_SNIFF_RECORDS = 50
_DATAFRAME_SOURCE = "<DataFrame>"


def read_table(path: str | Path, *, delimiter: str | None = None) -> Table:
    """Read a CSV (optionally gzip-compressed) or Parquet file.

    Parquet is recognised by its magic bytes or a ``.parquet``/``.pq`` name,
    gzip by its magic bytes; anything else is CSV with a header row. The CSV
    delimiter is ``delimiter`` or, when None, sniffed among ``,`` ``;`` tab and
    ``|`` (the one splitting the first records most consistently; ``,`` wins
    ties); it may also be named (:data:`DELIMITER_NAMES`: ``tab`` or ``\\t``,
    ``comma``, ``semicolon``, ``pipe``, ``space``). The encoding is UTF-8
    (``utf-8-sig`` with a byte order mark), else cp1252, else latin-1.

    Raises:
        InputError: the file is missing, a directory or unreadable, is empty, is
            a spreadsheet or a ZIP archive, has a ragged row or a misplaced quote
            (the message gives the line), has an empty or duplicate column name,
            or ``delimiter`` is unusable.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "t.csv"
        >>> _ = path.write_text('name,city\\n"Doe, J",""\\n')
        >>> read_table(path).frame.rows()
        [('Doe, J', None)]
    """
    source = str(path)
    if delimiter is not None:
        delimiter = delimiter_character(delimiter)
        _check_delimiter(delimiter, source)
    raw = _read_bytes(Path(path), source)
    sha256 = hashlib.sha256(raw).hexdigest()
    if raw.startswith(_PARQUET_MAGIC) or format_for(path) == "parquet":
        if delimiter is not None:
            raise InputError(f"{source}: `delimiter` applies to CSV input only; this is Parquet")
        return Table(frame=_read_parquet(raw, source), source=source, dialect=None, sha256=sha256)
    _refuse_documents(raw, source)
    if raw.startswith(_GZIP_MAGIC):
        raw = _gunzip(raw, source)
    frame, dialect, hint = _read_csv(raw, source, delimiter)
    return Table(frame=frame, source=source, dialect=dialect, sha256=sha256, delimiter_hint=hint)


def read_schema(path: str | Path) -> dict[str, pl.DataType] | None:
    """The column types of a Parquet file, from its footer alone; None for any other file.

    A CSV file's columns are all text, so only Parquet can hold nested values;
    this lets a job refuse them before the table is read. A file that is
    missing or unreadable gives None too: reading it says what is wrong.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "t.parquet"
        >>> pl.DataFrame({"codes": [["a"]]}).write_parquet(path)
        >>> read_schema(path)
        {'codes': List(String)}
    """
    try:
        with Path(path).open("rb") as handle:
            magic = handle.read(len(_PARQUET_MAGIC))
        if magic != _PARQUET_MAGIC and format_for(path) != "parquet":
            return None
        return dict(pl.read_parquet_schema(path))
    except (OSError, ValueError, pl.exceptions.PolarsError):
        return None


def from_dataframe(data: pl.DataFrame | pd.DataFrame) -> Table:
    """Wrap an in-memory Polars or pandas DataFrame as a :class:`Table`.

    A Polars frame is taken as is; a pandas frame is converted with NaN and
    None as null. In both, empty strings in String columns become null.

    Raises:
        InputError: ``data`` is not a DataFrame, has an empty or duplicate column
            name, or holds pandas values that have no Polars type.

    Example:
        >>> table = from_dataframe(pl.DataFrame({"zip": ["02138", ""]}))
        >>> table.frame["zip"].to_list(), table.source, table.dialect
        (['02138', None], '<DataFrame>', None)
    """
    if isinstance(data, pl.DataFrame):
        frame = data
    elif _is_pandas_dataframe(data):
        frame = _from_pandas(data)
    else:
        raise InputError(
            f"{_DATAFRAME_SOURCE}: expected a Polars or pandas DataFrame, got {type(data).__name__}"
        )
    _check_names(frame.columns, _DATAFRAME_SOURCE)
    return Table(frame=_empty_to_null(frame), source=_DATAFRAME_SOURCE, dialect=None)


def load(data: str | Path | pl.DataFrame | pd.DataFrame, *, delimiter: str | None = None) -> Table:
    """Read a file (see :func:`read_table`) or wrap a DataFrame (see :func:`from_dataframe`).

    Raises:
        InputError: as those two do, or a delimiter is given with a DataFrame.

    Example:
        >>> load(pl.DataFrame({"age": ["39"]})).frame["age"].to_list()
        ['39']
    """
    if isinstance(data, str | Path):
        return read_table(data, delimiter=delimiter)
    if delimiter is not None:
        raise InputError(f"{_DATAFRAME_SOURCE}: `delimiter` applies to CSV input only")
    return from_dataframe(data)


DELIMITER_NAMES = {
    "tab": "\t",
    "\\t": "\t",
    "comma": ",",
    "semicolon": ";",
    "pipe": "|",
    "space": " ",
}
"""Names a delimiter may be given by, besides the character itself (a tab is hard to type)."""


def delimiter_character(delimiter: str) -> str:
    """The character a delimiter names: itself, or the one of a name in :data:`DELIMITER_NAMES`.

    Names are case-insensitive; ``\\t`` is the two characters backslash and t,
    as a shell passes ``'\\t'``.

    Example:
        >>> delimiter_character("tab"), delimiter_character("\\\\t"), delimiter_character(";")
        ('\\t', '\\t', ';')
    """
    return DELIMITER_NAMES.get(delimiter.lower(), delimiter) if len(delimiter) > 1 else delimiter


def _check_delimiter(delimiter: str, source: str) -> None:
    if len(delimiter) != 1:
        names = ", ".join(DELIMITER_NAMES)
        raise InputError(
            f"{source}: `delimiter` {echo(delimiter)} must be one character or one of the names "
            f"{names}"
        )
    # Polars splits on a single byte, and quotes, line breaks and NUL have their own roles.
    if not delimiter.isascii() or delimiter in '"\r\n\x00':
        raise InputError(
            f"{source}: `delimiter` {echo(delimiter)} must be an ASCII character"
            " other than a quote, a line break or NUL"
        )


def _refuse_documents(raw: bytes, source: str) -> None:
    """Name a spreadsheet or archive by its magic bytes, whatever the file is called.

    Read as CSV they failed on NUL bytes with a guess at UTF-16.
    """
    save = "kanonym does not read workbooks: save it as CSV or Parquet"
    if raw.startswith(_OLE_MAGIC):
        raise InputError(
            f"{source}: is an Excel 97-2003 workbook (or another Microsoft Office document); {save}"
        )
    if not raw.startswith(_ZIP_MAGICS):
        return
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = set(archive.namelist())
            kind = (
                archive.read("mimetype").decode("ascii", "replace") if "mimetype" in names else ""
            )
    except (zipfile.BadZipFile, OSError, KeyError, RuntimeError):
        names, kind = set(), ""  # a damaged archive is still an archive
    if "xl/workbook.xml" in names:
        raise InputError(f"{source}: is an Excel workbook; {save}")
    if "spreadsheet" in kind:
        raise InputError(f"{source}: is an OpenDocument spreadsheet; {save}")
    raise InputError(
        f"{source}: is a ZIP archive, not a table; kanonym reads CSV (plain or gzip) and "
        "Parquet: unzip it, or if it is a spreadsheet, save it as CSV or Parquet"
    )


def _read_bytes(path: Path, source: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        reason = "file not found"
    except IsADirectoryError:
        reason = "is a directory, not a file"
    except PermissionError:
        reason = "permission denied"
    except OSError as err:
        reason = f"cannot read: {err.strerror or type(err).__name__}"
    # The name may be what could not be read (too long a name): shown cut.
    raise InputError(f"{clip(source)}: {reason}")


def _read_parquet(raw: bytes, source: str) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(io.BytesIO(raw))
    except (pl.exceptions.PolarsError, OSError) as err:
        raise InputError(f"{source}: not a readable Parquet file: {_first_line(err)}") from None
    _check_names(frame.columns, source)
    return _empty_to_null(frame)


def _gunzip(raw: bytes, source: str) -> bytes:
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as err:
        raise InputError(f"{source}: corrupt gzip data: {_first_line(err)}") from None


def _read_csv(
    raw: bytes, source: str, delimiter: str | None
) -> tuple[pl.DataFrame, CsvDialect, str | None]:
    """The frame, its layout and, for a header read as one column, the delimiter it seems to use."""
    encoding, body = _decode(raw, source)
    if not body:
        raise InputError(f"{source}: empty file, expected a header row")
    # Text never contains NUL; UTF-16 and binary files do, and would read as garbage.
    if b"\x00" in body:
        raise InputError(f"{source}: contains NUL bytes; not a CSV text file (UTF-16?)")
    separator = delimiter or _sniff_delimiter(body)
    try:
        records = _check_records(_physical_lines(body), separator, source)
        frame = _parse(body, separator, records.width, source)
    except pl.exceptions.PolarsError as err:
        # The checks above leave Polars nothing to object to; should it still,
        # the file is at fault, and the message must stay one line.
        raise InputError(f"{source}: malformed CSV: {_first_line(err)}") from None
    dialect = CsvDialect(
        delimiter=separator,
        line_terminator=_line_terminator(body, records.header_lines),
        quote_all=records.quote_all,
        encoding=encoding,
        final_newline=body.endswith(b"\n"),
    )
    hint = _other_delimiter(body, separator) if records.width == 1 else None
    return frame, dialect, hint


def _decode(raw: bytes, source: str) -> tuple[str, bytes]:
    """The detected codec and the content as UTF-8 without a byte order mark.

    Polars parses UTF-8 only, so cp1252 and latin-1 text is transcoded here and
    encoded back when the release is written.
    """
    if raw.startswith(_UTF8_BOM):
        body = raw[len(_UTF8_BOM) :]
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(
                f"{source}: starts with a UTF-8 byte order mark but is not UTF-8"
                f" (byte offset {err.start + len(_UTF8_BOM)})"
            ) from None
        return "utf-8-sig", body
    try:
        raw.decode("utf-8")  # only validates: Polars parses the bytes themselves
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8", raw
    try:
        text = raw.decode("cp1252")
    except UnicodeDecodeError:
        # cp1252 leaves five bytes (0x81 0x8D 0x8F 0x90 0x9D) undefined; latin-1 maps all 256.
        return "latin-1", raw.decode("latin-1").encode("utf-8")
    return "cp1252", text.encode("utf-8")


def _line_terminator(body: bytes, header_lines: int) -> str:
    """How the header record, ``header_lines`` physical lines long, ends."""
    end = -1
    for _ in range(header_lines):
        end = body.find(b"\n", end + 1)
    return "\r\n" if end > 0 and body[end - 1 : end] == b"\r" else "\n"


def _sniff_delimiter(body: bytes) -> str:
    """The candidate that splits the first records most consistently.

    A candidate scores by the share of sampled records with as many fields as
    the header, then by the header's width; one that leaves the header whole
    scores nothing. The earlier candidate wins ties, so ``,`` is the default.
    """
    # A cut multi-byte character can only be at the very end, in the dropped record.
    sample = body[:_SNIFF_BYTES].decode("utf-8", errors="ignore")
    complete = len(body) <= _SNIFF_BYTES
    best, best_score = ",", (0.0, 0)
    for candidate in _SNIFF_CANDIDATES:
        score = _split_consistency(sample, candidate, complete=complete)
        if score > best_score:
            best, best_score = candidate, score
    return best


def _other_delimiter(body: bytes, used: str) -> str | None:
    """The delimiter that splits every sampled record alike in two or more fields, if one does.

    Asked only when ``used`` left the header whole: a wrong delimiter given, or
    one that sniffing does not try (such as ``:``); the reader's caller names it
    when a column is then not found.
    """
    sample = body[:_SNIFF_BYTES].decode("utf-8", errors="ignore")
    complete = len(body) <= _SNIFF_BYTES
    for candidate in (*_SNIFF_CANDIDATES, *_HINT_CANDIDATES):
        if candidate != used:
            share, width = _split_consistency(sample, candidate, complete=complete)
            if share == 1.0 and width >= 2:
                return candidate
    return None


def _split_consistency(sample: str, delimiter: str, *, complete: bool) -> tuple[float, int]:
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter, quotechar=_QUOTE)
    records = list(itertools.islice(reader, _SNIFF_RECORDS + 1))
    if len(records) > _SNIFF_RECORDS or not complete:
        # The last record read may be cut short by the end of the sample.
        records = records[:-1]
    if not records or len(records[0]) < 2:
        return (0.0, 0)
    width = len(records[0])
    return (sum(len(record) == width for record in records) / len(records), width)


def _physical_lines(body: bytes) -> pl.Series:
    """The lines of ``body`` split at every LF (a trailing CR dropped), quotes ignored.

    NUL never occurs in ``body``, so splitting fields on it keeps each line whole.
    """
    lines = pl.read_csv(
        body, has_header=False, separator="\x00", quote_char=None, schema={"line": pl.String}
    ).get_column("line")
    # Polars reads a blank line as null; it is an empty line all the same.
    return lines.fill_null("")


class _Records(NamedTuple):
    width: int
    """Fields per record, as in the header."""
    quote_all: bool
    """Every field of every record is quoted."""
    header_lines: int
    """Physical lines the header spans (more than one if a name holds a line break)."""


def _check_records(lines: pl.Series, separator: str, source: str) -> _Records:
    """Check that every record has as many fields as the header and describe them.

    Polars pads short rows with nulls without a word, so field counts are checked
    here, vectorized over the physical lines of the file.
    """
    sep = f"\\x{{{ord(separator):X}}}"
    if lines.str.contains(_QUOTE, literal=True).any():
        skeleton, continued = _skeleton(lines, sep, source)
        quote_all = bool(skeleton.str.contains(f'^"(?:{sep}")*$').all())
    else:
        # Nothing is quoted: every line is a record and every separator is real.
        skeleton, continued = lines, pl.repeat(False, lines.len(), eager=True)
        quote_all = False
    # Polars ends lines at LF only; a CR outside quotes in a one-line file means CR line ends.
    if lines.len() == 1 and "\r" in skeleton[0]:
        raise InputError(f"{source}: lines end in a bare CR (classic Mac); use LF or CRLF")
    first_lines = (~continued).arg_true()
    separators = skeleton.str.count_matches(separator, literal=True)
    if first_lines.len() == lines.len():
        fields = separators + 1
    else:
        fields = (
            pl.DataFrame({"record": (~continued).cum_sum(), "separators": separators})
            .group_by("record", maintain_order=True)
            .agg(pl.col("separators").sum() + 1)
            .get_column("separators")
        )
    width = int(fields[0])
    ragged = (fields != width).arg_true()
    if ragged.len():
        record = ragged[0]
        raise InputError(
            f"{source}: line {first_lines[record] + 1} has {_fields(fields[record])},"
            f" the header has {width}"
        )
    header_lines = int(first_lines[1]) if first_lines.len() > 1 else lines.len()
    return _Records(width=width, quote_all=quote_all, header_lines=header_lines)


def _skeleton(lines: pl.Series, sep: str, source: str) -> tuple[pl.Series, pl.Series]:
    """Reduce every line to its skeleton, where each quoted field is a lone quote.

    What is left of a line are its unquoted fields, its field separators and one
    quote per quoted field. Returns the skeletons and, for every line, whether it
    continues a record (starts inside a quoted field). Raises on a misplaced
    quote or a quoted field never closed.
    """
    quotes = lines.str.count_matches(_QUOTE, literal=True)
    # In well-formed CSV the quotes pair up, so the parity of the quotes seen so
    # far tells whether a line break falls inside a quoted field.
    ends_inside = quotes.cum_sum() % 2 == 1
    starts_inside = ends_inside ^ (quotes % 2 == 1)
    # A field continuing on the next line is closed at the line's end and reopened
    # at the next line's start, so every line can be reduced on its own.
    skeleton = (
        pl.DataFrame({"line": lines, "starts": starts_inside, "ends": ends_inside})
        .select(
            pl.concat_str(
                pl.when("starts").then(pl.lit(_QUOTE)).otherwise(pl.lit("")),
                "line",
                pl.when("ends").then(pl.lit(_QUOTE)).otherwise(pl.lit("")),
            ).str.replace_all(f'(^|{sep})"(?:[^"]|"")*"', '${1}"')
        )
        .to_series()
    )
    misplaced = skeleton.str.contains(f'[^{sep}]"|"[^{sep}]').arg_true()
    if misplaced.len():
        raise InputError(
            f"{source}: line {misplaced[0] + 1}: misplaced quote; a quoted field must be"
            ' the whole field, and a quote inside it is written ""'
        )
    # Checked after misplaced quotes, which also upset the parity up to the end.
    if ends_inside[-1]:
        opened = (~starts_inside).arg_true()[-1]
        raise InputError(f"{source}: line {opened + 1}: a quoted field is never closed")
    return skeleton, starts_inside


def _fields(count: int) -> str:
    return "1 field" if count == 1 else f"{count} fields"


def _parse(body: bytes, separator: str, width: int, source: str) -> pl.DataFrame:
    """The data rows as String columns named by the header; empty fields null."""
    # The header is read as row 0 of the data, so that Polars does not rename
    # duplicate or empty names before they can be reported.
    schema = {f"column_{index}": pl.String for index in range(width)}
    rows = pl.read_csv(
        body,
        has_header=False,
        separator=separator,
        quote_char=_QUOTE,
        schema=schema,
        infer_schema=False,
    )
    names = [name or "" for name in rows.row(0)]
    _check_names(names, source)
    data = rows.slice(1).rename(dict(zip(schema, names, strict=True)))
    return _empty_to_null(data)


def _check_names(names: Sequence[str], source: str) -> None:
    for position, name in enumerate(names, start=1):
        if not name:
            raise InputError(f"{source}: column {position} has an empty name")
    duplicated = [name for name, count in Counter(names).items() if count > 1]
    if duplicated:
        raise InputError(f"{source}: duplicate column name {echo(duplicated[0])}")


def _empty_to_null(frame: pl.DataFrame) -> pl.DataFrame:
    """Empty strings become null: kanonym has one meaning of missing."""
    strings = pl.col(pl.String)
    return frame.with_columns(pl.when(strings != "").then(strings))


def _is_pandas_dataframe(data: object) -> bool:
    # Only an imported pandas can have made a pandas DataFrame, so looking in
    # sys.modules decides without importing pandas, which is optional and slow.
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


def _from_pandas(data: pd.DataFrame) -> pl.DataFrame:
    # Polars would name columns str(label); check those names first for a clear message.
    _check_names([str(label) for label in data.columns], _DATAFRAME_SOURCE)
    try:
        try:
            return pl.from_pandas(data, nan_to_null=True)
        except ImportError:
            # Polars converts pandas' string and nullable columns through pyarrow; without
            # it (pandas 3 keeps strings in Python objects then), convert column by column.
            return pl.DataFrame([_pandas_column(str(label), data[label]) for label in data.columns])
    except (ValueError, TypeError, pl.exceptions.PolarsError) as err:
        raise InputError(
            f"{_DATAFRAME_SOURCE}: cannot convert the pandas DataFrame: {_first_line(err)}"
        ) from None


def _pandas_column(name: str, column: pd.Series) -> pl.Series:
    """One pandas column as a Polars series without pyarrow; NaN, None and NA become null."""
    kind = column.dtype
    if isinstance(kind, np.dtype) and kind.kind in "biufmM":
        # Plain NumPy storage: handed over as an array (NaN of a float column as null).
        return pl.Series(name, column.to_numpy(), nan_to_null=True)
    # Strings, categories, nullable integers and booleans: their values, missing as None.
    values = column.astype(object).where(column.notna(), None).to_list()
    return pl.Series(name, values, strict=False)


def _first_line(err: BaseException) -> str:
    """The first line of a library's error, cut: it may quote a value of the file."""
    lines = str(err).strip().splitlines()
    return clip(lines[0]) if lines else type(err).__name__
