"""What the ledger reads of a release's source, wherever its rows live.

The policies (:mod:`kanonym.ledger.policy`) never need a source's rows one by
one: only its columns, the distinct values of a few of them with their counts
(a key column's, to check that no two records share a key and to hash the
keys; a column's values, to see whether an earlier hierarchy still covers
them; the sensitive columns', for a model's reference distribution) and a
fingerprint of its content. :class:`SourceRows` asks them of the engine that
holds the rows: in memory (:class:`~kanonym.engine.EmbeddedEngine`), or in a
PostgreSQL database (:class:`~kanonym.engine.postgres.PostgresEngine`: one
``GROUP BY`` each, and the fingerprint computed in the server).

Example:
    >>> import polars as pl
    >>> from kanonym.io import load
    >>> source = SourceRows(EmbeddedEngine(load(pl.DataFrame({"id": ["a", "b", "a"]}))))
    >>> source.counted(["id"]).rows()
    [('a', 2), ('b', 1)]
    >>> duplicated(source, "id")
    2
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from kanonym.engine import EmbeddedEngine
from kanonym.engine.postgres import PostgresEngine
from kanonym.errors import InputError
from kanonym.ledger.fingerprints import table_fingerprint

ROWS = "kanonym_rows"
"""Column of :meth:`SourceRows.counted`: how many rows hold the tuple."""


@dataclass(frozen=True)
class SourceRows:
    """A release's source as the ledger reads it, through the engine holding its rows."""

    engine: EmbeddedEngine | PostgresEngine

    @property
    def source(self) -> str:
        """The source as messages name it (a path, or a URL without its password)."""
        return self.engine.source

    @property
    def columns(self) -> tuple[str, ...]:
        """Its columns, in order."""
        return self.engine.columns

    def counted(self, columns: Sequence[str]) -> pl.DataFrame:
        """The distinct tuples of ``columns`` (values as text, the missing value null) with
        how many rows hold each (:data:`ROWS`): one grouping where the rows are."""
        grouped = self.engine.group(columns)
        return grouped.values.with_columns(pl.Series(ROWS, grouped.counts, pl.Int64))

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the content: the same content gives the same fingerprint.

        In memory, :func:`~kanonym.ledger.fingerprints.table_fingerprint`. In
        PostgreSQL, computed in one scan in the server: SHA-256 of the columns,
        the row count and the sum of every row's 64-bit hash (the first 16 hex
        digits of the MD5 of the row as PostgreSQL writes it), so the same rows
        in any order give the same fingerprint (another than a file's: a table
        exported to CSV is told apart from its source by content, though still
        linked to it by a key column).
        """
        engine = self.engine
        if isinstance(engine, EmbeddedEngine):
            return table_fingerprint(engine.table.frame)
        import psycopg
        from psycopg import sql

        row = sql.SQL("ROW({})::text").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in engine.columns)
        )
        query = sql.SQL(
            "SELECT count(*), coalesce(sum(('x' || left(md5({}), 16))::bit(64)::bigint::numeric), "
            "0)::text FROM {}"
        ).format(row, engine.relation)
        try:
            rows, total = engine.connection.execute(query).fetchone() or (0, "0")
        except psycopg.Error as error:
            engine.connection.rollback()
            raise InputError(f"{engine.source}: {str(error).strip().splitlines()[0]}") from None
        content = json.dumps(["postgresql rows v1", list(engine.columns), int(rows), str(total)])
        return hashlib.sha256(content.encode()).hexdigest()


def duplicated(source: SourceRows, column: str) -> int:
    """How many rows share their value of ``column`` with another row."""
    counts = source.counted([column]).get_column(ROWS)
    return int(counts.filter(counts > 1).sum())
