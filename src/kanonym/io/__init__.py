"""Reading and writing tables faithfully and atomically.

Columns kanonym does not anonymize come out exactly as they went in, in a file
laid out like the input; a release is written completely or not at all.

Example:
    >>> import polars as pl
    >>> table = load(pl.DataFrame({"zip": ["02138", ""]}))
    >>> serialize(table.frame, fmt="csv", dialect=table.dialect)
    b'zip\\n02138\\n\\n'
"""

from kanonym.io.read import from_dataframe, load, read_table
from kanonym.io.table import CsvDialect, Table
from kanonym.io.write import format_for, serialize, write_atomic, write_table

__all__ = [
    "CsvDialect",
    "Table",
    "format_for",
    "from_dataframe",
    "load",
    "read_table",
    "serialize",
    "write_atomic",
    "write_table",
]
