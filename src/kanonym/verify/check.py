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

import polars as pl

from kanonym.errors import VerificationError


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


def require_k_anonymous(
    released: pl.DataFrame, quasi_identifiers: Sequence[str], k: int
) -> ClassSizeSummary:
    """The release's class sizes; VerificationError unless it is k-anonymous."""
    summary = measure(released, quasi_identifiers, k)
    if not summary.k_anonymous:
        raise VerificationError(
            f"release is not {k}-anonymous: {summary.rows_below_k} rows in classes "
            f"smaller than {k} (smallest class {summary.smallest_class})"
        )
    return summary


def verify_release(
    released: pl.DataFrame,
    *,
    quasi_identifiers: Sequence[str],
    k: int,
    input_rows: int,
    max_suppressed_rows: int,
    removed_columns: Collection[str],
    allowed_values: Mapping[str, Collection[str | None]],
) -> ClassSizeSummary:
    """Re-check a release before it is written; raise VerificationError if it fails.

    Checks: no removed (identifying) column is present; every quasi-identifier
    value is one of the labels allowed at the chosen hierarchy level; the table
    is k-anonymous on the quasi-identifiers; no more than ``max_suppressed_rows``
    rows are missing from the input.
    """
    require_removed(released, removed_columns)
    missing = [c for c in quasi_identifiers if c not in released.columns]
    if missing:
        raise VerificationError(f"release lacks quasi-identifier column(s) {missing}")
    for column, allowed in allowed_values.items():
        values = released.get_column(column).cast(pl.String).unique().to_list()
        stray = [v for v in values if v not in allowed]
        if stray:
            raise VerificationError(
                f"release column '{column}' holds {stray[0]!r}, not a value of its hierarchy level"
            )
    suppressed = input_rows - released.height
    if not 0 <= suppressed <= max_suppressed_rows:
        raise VerificationError(
            f"release suppresses {suppressed} rows; the limit is {max_suppressed_rows}"
        )
    return require_k_anonymous(released, quasi_identifiers, k)
