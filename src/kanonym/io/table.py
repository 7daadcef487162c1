"""The in-memory form of an input table and of the CSV layout it was read from.

kanonym writes a release that looks like its input: a :class:`CsvDialect`
records every layout detail the reader detected, so the writer can reproduce
the file byte for byte apart from the cells that were anonymized.

Example:
    >>> import polars as pl
    >>> dialect = CsvDialect(delimiter=";", line_terminator="\\r\\n", quote_all=False,
    ...                      encoding="utf-8", final_newline=True)
    >>> table = Table(frame=pl.DataFrame({"zip": ["02138"]}), source="in.csv", dialect=dialect)
    >>> table.frame["zip"].to_list()
    ['02138']
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from kanonym.errors import ColumnNotFoundError, InputError, NestedColumnError


@dataclass(frozen=True, kw_only=True)
class CsvDialect:
    """How a CSV file is laid out, as detected when it was read.

    Attributes:
        delimiter: The one-character field separator.
        quotechar: The quote character; a quote inside a quoted field is doubled.
        line_terminator: ``"\\n"`` or ``"\\r\\n"``, as found in the input.
        quote_all: Every field of the input (header included) was quoted, so every
            field of the output is quoted too; otherwise only fields that need it.
        encoding: Python codec name: ``"utf-8"``, ``"utf-8-sig"`` (the input had a
            byte order mark), ``"cp1252"`` or ``"latin-1"``.
        final_newline: The input ended with a line terminator.

    Example:
        >>> CsvDialect(delimiter=",", line_terminator="\\n", quote_all=False,
        ...            encoding="utf-8", final_newline=True).quotechar
        '"'
    """

    delimiter: str
    quotechar: str = '"'
    line_terminator: str
    quote_all: bool
    encoding: str
    final_newline: bool


@dataclass(frozen=True, kw_only=True)
class Table:
    """A loaded table, where it came from and, for CSV, how it was laid out.

    Attributes:
        frame: The data. For CSV every column is ``pl.String`` holding exactly the
            text of the file; a missing value (an empty field) is null.
        source: The path as given, or ``"<DataFrame>"`` for in-memory input; error
            messages start with it.
        dialect: The CSV layout, or None for Parquet and DataFrame input.
        sha256: Hex SHA-256 of the file's bytes as read (compressed ones for a
            gzip file), so a report can fingerprint exactly what was released;
            None for in-memory input.
        delimiter_hint: For a CSV file whose header was read as one column, the
            delimiter that splits it alike on every sampled line, if one does;
            a column then not found is reported with it.

    Example:
        >>> Table(frame=pl.DataFrame({"a": ["1"]}), source="<DataFrame>", dialect=None).source
        '<DataFrame>'
    """

    frame: pl.DataFrame
    source: str
    dialect: CsvDialect | None
    sha256: str | None = None
    delimiter_hint: str | None = None

    def require(self, columns: Sequence[str]) -> None:
        """Every named column exists and the table has rows; else an InputError naming the file.

        A missing column raises :class:`~kanonym.errors.ColumnNotFoundError`,
        whose message says what is likely wrong: a header read as one column
        (and the delimiter the file seems to use), a close name, or a
        ``COL=HIERARCHY`` where a column name was expected.

        Example:
            >>> table = Table(frame=pl.DataFrame({"zip": ["1"]}), source="t.csv", dialect=None)
            >>> table.require(["zp"])
            Traceback (most recent call last):
            ...
            kanonym.errors.ColumnNotFoundError: t.csv: column 'zp' not found; did you mean 'zip'?
        """
        for column in columns:
            if column not in self.frame.columns:
                raise self._not_found(column)
        if self.frame.height == 0:
            raise InputError(f"{self.source}: the table has no rows")

    def _not_found(self, column: str) -> ColumnNotFoundError:
        names = tuple(self.frame.columns)
        where = f"{self.source}: column '{column}' not found"
        hint = self.delimiter_hint
        if len(names) == 1 and hint is not None and self.dialect is not None:
            used = self.dialect.delimiter
            message = (
                f"{where}; with delimiter {used!r} the header is one column, {_cut(names[0])}, "
                f"but the file looks {hint!r}-separated: give `delimiter={hint!r}`"
            )
            return ColumnNotFoundError(
                message, source=self.source, column=column, columns=names, delimiter=hint
            )
        name, equals, _ = column.partition("=")
        if equals and name in names:
            reason = f"name the column alone, '{name}', without a hierarchy"
        else:
            close = difflib.get_close_matches(column, names, n=1)
            reason = f"did you mean '{close[0]}'?" if close else f"columns are {list(names)}"
        return ColumnNotFoundError(
            f"{where}; {reason}", source=self.source, column=column, columns=names
        )

    def require_flat(self, columns: Sequence[str]) -> None:
        """None of the named columns holds lists, arrays or structs; else a NestedColumnError.

        Example:
            >>> table = Table(frame=pl.DataFrame({"a": [[1]]}), source="t", dialect=None)
            >>> table.require_flat(["a"])  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            kanonym.errors.NestedColumnError: t: column 'a' holds lists; ...
        """
        nested = nested_columns(self.frame.schema)
        for column in columns:
            if column in nested:
                raise NestedColumnError(self.source, column, nested[column])


def nested_columns(schema: Mapping[str, pl.DataType]) -> dict[str, str]:
    """The columns of ``schema`` holding nested values -> ``lists``, ``arrays`` or ``structs``.

    Example:
        >>> nested_columns(pl.DataFrame({"a": [[1]], "b": ["x"], "c": [{"d": 1}]}).schema)
        {'a': 'lists', 'c': 'structs'}
    """
    kinds = {pl.List: "lists", pl.Array: "arrays", pl.Struct: "structs"}
    return {
        name: kinds.get(dtype.base_type(), "nested values")
        for name, dtype in schema.items()
        if dtype.is_nested()
    }


def _cut(name: str, limit: int = 60) -> str:
    """A long header shown in part: it is the whole first line when the delimiter is wrong."""
    return repr(name) if len(name) <= limit else repr(name[:limit]) + "..."
