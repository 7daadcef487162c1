"""Counting equivalence classes of a finished table, directly.

Example:
    >>> import polars as pl
    >>> t = pl.DataFrame({"race": ["b", "b", "w"], "zip": ["0213*"] * 3})
    >>> s = measure(t, ["race", "zip"], k=2)
    >>> s.smallest_class, s.rows_below_k, s.k_anonymous
    (1, 1, False)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym._html import summary_box, table
from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify.rows import verify_rows


@dataclass(frozen=True)
class ClassSizeSummary:
    """Equivalence-class sizes of a table over a set of columns.

    Attributes:
        rows: rows in the table.
        classes: distinct combinations of the columns' values.
        smallest_class: rows in the smallest class (``None`` for an empty table).
        rows_below_k: rows in classes smaller than k.
        k: the k asked about.
    """

    rows: int
    classes: int
    smallest_class: int | None
    rows_below_k: int
    k: int

    @property
    def k_anonymous(self) -> bool:
        """Sweeney 2002, Definition 3: every value combination occurs at least k times.

        A table with fewer rows than k is not k-anonymous (unless empty).
        """
        return self.rows_below_k == 0

    def __str__(self) -> str:
        """Two lines for people: whether the table is k-anonymous, and its classes.

        Example:
            >>> print(ClassSizeSummary(rows=5, classes=2, smallest_class=2, rows_below_k=0, k=2))
            2-anonymous: yes
            5 rows in 2 classes, smallest 2 rows; 0 rows in classes smaller than 2
        """
        smallest = "none" if self.smallest_class is None else f"{self.smallest_class:,} rows"
        return (
            f"{self.k}-anonymous: {'yes' if self.k_anonymous else 'no'}\n"
            f"{self.rows:,} rows in {self.classes:,} classes, smallest {smallest}; "
            f"{self.rows_below_k:,} rows in classes smaller than {self.k}"
        )

    def _repr_html_(self) -> str:
        """The counts as an HTML table, for notebooks (every value escaped)."""
        return summary_box(
            f"{self.k}-anonymous: {'yes' if self.k_anonymous else 'no'}", self._rows_html()
        )

    def _rows_html(self) -> str:
        return table(
            [
                ("rows", self.rows),
                ("classes", self.classes),
                ("smallest class", self.smallest_class),
                (f"rows in classes smaller than {self.k}", self.rows_below_k),
            ]
        )


def measure(frame: pl.DataFrame, columns: Sequence[str], k: int) -> ClassSizeSummary:
    """Group ``frame`` by ``columns`` (missing values group together) and count."""
    sizes = frame.group_by(list(columns)).len()["len"]
    return ClassSizeSummary(
        rows=frame.height,
        classes=sizes.len(),
        smallest_class=int(sizes.min()) if sizes.len() else None,  # type: ignore[arg-type]
        rows_below_k=int(sizes.filter(sizes < k).sum()),
        k=k,
    )


def require_removed(released: pl.DataFrame, removed_columns: Collection[str]) -> None:
    """VerificationError if the release still holds a column that had to be removed."""
    leaked = [c for c in removed_columns if c in released.columns]
    if leaked:
        raise VerificationError(f"release still holds identifying column(s) {leaked}")


def require_k_anonymous(released: pl.DataFrame, columns: Sequence[str], k: int) -> ClassSizeSummary:
    """The release's class sizes; VerificationError unless it is k-anonymous."""
    summary = measure(released, columns, k)
    if not summary.k_anonymous:
        raise VerificationError(
            f"release is not {k}-anonymous: {summary.rows_below_k} rows in classes "
            f"smaller than {k} (smallest class {summary.smallest_class})"
        )
    return summary


def verify_release(
    released: pl.DataFrame,
    *,
    source: pl.DataFrame,
    source_rows: npt.NDArray[np.int64],
    columns: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int],
    k: int,
    suppressed_rows: int,
    max_suppressed_rows: int,
    removed_columns: Collection[str],
) -> ClassSizeSummary:
    """Re-check a full-domain release before it is written; raise VerificationError if it fails.

    ``columns`` names the quasi-identifier columns; ``source`` is the input
    table and ``source_rows[i]`` the input row that released row i comes from;
    ``levels`` the chosen hierarchy level of each quasi-identifier;
    ``suppressed_rows`` the rows the report says were removed.
    Checks: no removed (identifying) column is present; each released row is
    the generalization to ``levels`` of exactly one input row, its other cells
    unchanged (:func:`kanonym.verify.rows.verify_rows`); the input rows released
    by no row are exactly ``suppressed_rows``, at most ``max_suppressed_rows``;
    the table is k-anonymous on the quasi-identifiers.
    """
    require_removed(released, removed_columns)
    missing = [c for c in columns if c not in released.columns]
    if missing:
        raise VerificationError(f"release lacks quasi-identifier column(s) {missing}")
    verify_rows(
        released,
        source=source,
        source_rows=source_rows,
        columns=columns,
        hierarchies=hierarchies,
        removed_columns=removed_columns,
        levels=levels,
    )
    # One-to-one: the rows no released row comes from are exactly the rows missing.
    suppressed = source.height - released.height
    if suppressed != suppressed_rows:
        raise VerificationError(
            f"release suppresses {suppressed} rows; the report counts {suppressed_rows}"
        )
    if suppressed > max_suppressed_rows:
        raise VerificationError(
            f"release suppresses {suppressed} rows; the limit is {max_suppressed_rows}"
        )
    return require_k_anonymous(released, columns, k)
