"""The embedded engine: the table in memory as a Polars DataFrame, the compiled kernels.

The frequency set keeps each row's tuple, so that applying a transformation
is a gather by row (:func:`kanonym.transform.generalize`) rather than a join.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.io import load
    >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*")))
    >>> engine = EmbeddedEngine(load(pl.DataFrame({"zip": ["02138", "02139", "02138"]})))
    >>> encoded = engine.encode({"zip": h})
    >>> encoded.frequency_set.counts.tolist(), engine.rows
    ([2, 1], 3)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kanonym.encode import EncodedTable, Grouped, distinct_strings, encode, group_frame
from kanonym.engine.base import Expected, Generalization, Released
from kanonym.hierarchy import Hierarchy
from kanonym.io import Table
from kanonym.transform import generalize
from kanonym.verify import verify_models, verify_release


class EmbeddedEngine:
    """The default engine: a :class:`~kanonym.io.Table` held in memory (see module docstring)."""

    name = "embedded"

    def __init__(self, table: Table) -> None:
        self.table = table
        # Distinct values per column: declaring the hierarchies and encoding both need them.
        self._distinct: dict[str, list[str | None]] = {}

    @property
    def source(self) -> str:
        """The input file, or ``<DataFrame>``."""
        return self.table.source

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        return tuple(self.table.frame.columns)

    @property
    def rows(self) -> int:
        """The input's number of rows."""
        return self.table.frame.height

    def require(self, names: Sequence[str]) -> None:
        """Raise :class:`~kanonym.errors.InputError` naming the first of ``names`` the table
        lacks."""
        self.table.require(names)

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as strings (computed once)."""
        return self.distinct(column)[column]

    def distinct(self, *columns: str) -> dict[str, list[str | None]]:
        """The distinct values of several columns as strings, found in one parallel query
        (:func:`~kanonym.encode.distinct_strings`) and kept for :meth:`encode`."""
        missing = [c for c in dict.fromkeys(columns) if c not in self._distinct]
        if missing:
            self._distinct.update(distinct_strings(self.table.frame, missing))
        return {c: self._distinct[c] for c in columns}

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct raw tuples of ``columns`` with their counts."""
        grouped, _ = group_frame(self.table.frame, columns)
        return grouped

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers encoded into the frequency set, which keeps each row's
        tuple for :meth:`generalize`.

        Equal to :func:`~kanonym.encode.encode_grouped` on :meth:`group`'s
        result; in memory, encoding each column on its rows and grouping the
        codes is the faster way to it (:func:`kanonym.encode.encode`).
        """
        return encode(self.table.frame, hierarchies, present=self._distinct)

    def generalize(self, plan: Generalization) -> Released:
        """The released table (generalized, suppressed, dropped, shuffled) and its
        rows' input rows."""
        row_tuple = plan.encoded.frequency_set.rows()
        table, source_rows = generalize(
            self.table.frame,
            plan.encoded,
            plan.levels,
            keep=plan.released[row_tuple],
            drop=plan.drop,
            seed=plan.seed,
        )
        return Released(table, source_rows)

    def verify(self, released: Released, plan: Generalization, expected: Expected) -> None:
        """Compare every released row with the input row it comes from, then check k and
        every model on the released table (:func:`kanonym.verify.verify_release`,
        :func:`kanonym.verify.verify_models`)."""
        names = plan.encoded.names
        verify_release(
            released.table,
            source=self.table.frame,
            source_rows=released.source_rows,
            columns=names,
            hierarchies=expected.hierarchies,
            levels=dict(zip(names, plan.levels, strict=True)),
            k=expected.k,
            suppressed_rows=expected.suppressed_rows,
            max_suppressed_rows=expected.max_suppressed_rows,
            removed_columns=plan.drop,
        )
        verify_models(
            released.table,
            columns=names,
            source=self.table.frame,
            models=expected.models,
            population=expected.population,
        )
