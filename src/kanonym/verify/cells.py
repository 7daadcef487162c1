"""Re-checking a cell-suppressed release cell by cell, against its input.

Independent of the search and of the encoding: every released row is compared
with the input row it comes from (the shuffle is given), each
quasi-identifier's expected label is looked up in the hierarchy's own table of
levels, and the release is regrouped by its values. Checks: no identifying
column remains and every other input column does, in order; every input row is
released exactly once (cell suppression removes no row); every
quasi-identifier value is its row's label at the chosen level or the
hierarchy's root (a blanked cell); every other column holds its input row's
value (as text, :func:`kanonym.verify.rows.require_unchanged`), so that no
record is replaced by a copy of another; the rows holding a blanked cell are at
most the limit; the table is k-anonymous grouping the released values, ``*``
being an ordinary value. The blanked cells counted here are compared with the
search's by the caller. The models are checked by
:func:`kanonym.verify.verify_models` on the same table.

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"),
    ...                       ("*",) * 3))
    >>> source = pl.DataFrame({"zip": ["02138", "02139", "02141"]})
    >>> released = pl.DataFrame({"zip": ["*", "0213*", "*"]})
    >>> counts = verify_cells(released, source=source, source_rows=np.array([2, 0, 1]),
    ...     columns=["zip"], hierarchies={"zip": h}, levels={"zip": 1}, k=1,
    ...     max_rows=2, removed_columns=[])
    >>> counts.by_attribute, counts.rows
    ({'zip': 2}, 2)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.errors import VerificationError, echo
from kanonym.hierarchy import Hierarchy
from kanonym.verify.check import require_k_anonymous, require_removed
from kanonym.verify.rows import gathered, require_columns, require_unchanged


@dataclass(frozen=True)
class CellCounts:
    """Blanked cells of a release, counted from the table.

    Attributes:
        by_attribute: quasi-identifier -> cells showing the root where the
            row's generalized value is not the root.
        rows: rows with at least one blanked cell.
    """

    by_attribute: dict[str, int]
    rows: int

    @property
    def total(self) -> int:
        """Blanked cells over all quasi-identifiers."""
        return sum(self.by_attribute.values())

    @classmethod
    def none(cls, columns: Sequence[str]) -> CellCounts:
        """No blanked cell in any of ``columns`` (tuple suppression or none)."""
        return cls(by_attribute=dict.fromkeys(columns, 0), rows=0)


def expected_labels(column: pl.Series, hierarchy: Hierarchy, level: int) -> pl.Series:
    """Each value of ``column`` generalized to ``level`` by the hierarchy's table of levels."""
    mapping = dict(zip(hierarchy.levels[0], hierarchy.levels[level], strict=True))
    missing = mapping.pop(None, None)
    as_text = column.cast(pl.String)
    mapped = as_text.replace_strict(mapping, default=None, return_dtype=pl.String)
    return pl.select(
        pl.when(as_text.is_null()).then(pl.lit(missing, pl.String)).otherwise(mapped)
    ).to_series()


def verify_cells(
    released: pl.DataFrame,
    *,
    source: pl.DataFrame,
    source_rows: npt.NDArray[np.int64],
    columns: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int],
    k: int,
    max_rows: int,
    removed_columns: Collection[str],
) -> CellCounts:
    """Re-check a cell-suppressed release; raise VerificationError if it fails.

    ``columns`` names the quasi-identifier columns and ``source_rows[i]`` is
    the input row that released row i comes from. Returns the blanked cells counted from the table.
    """
    require_removed(released, removed_columns)
    expected_columns = require_columns(released, source, removed_columns)
    n = source.height
    if (
        released.height != n
        or len(source_rows) != n
        or not np.array_equal(np.sort(source_rows), np.arange(n))
    ):
        raise VerificationError(
            f"cell suppression releases every input row once: {released.height} rows "
            f"released of {n}"
        )
    others = [c for c in expected_columns if c not in columns]
    require_unchanged(released, gathered(source, others, source_rows), others, source_rows)
    blanked_rows = np.zeros(n, dtype=np.bool_)
    by_attribute: dict[str, int] = {}
    for name in columns:
        hierarchy = hierarchies[name]
        root = hierarchy.levels[-1][0]
        expected = expected_labels(source.get_column(name), hierarchy, levels[name]).gather(
            source_rows
        )
        shown = released.get_column(name).cast(pl.String)
        same = shown.eq_missing(expected).to_numpy()
        is_root = shown.is_null() if root is None else (shown == root).fill_null(False)
        blank_np = is_root.to_numpy() & ~same
        stray = ~(same | blank_np)
        if stray.any():
            row = int(np.flatnonzero(stray)[0])
            raise VerificationError(
                f"release column '{name}' holds {echo(shown[row])} where its row's value at "
                f"level {levels[name]} is {echo(expected[row])} (and the root is {echo(root)})"
            )
        by_attribute[name] = int(blank_np.sum())
        blanked_rows |= blank_np
    rows = int(blanked_rows.sum())
    if rows > max_rows:
        raise VerificationError(f"release blanks cells in {rows} rows; the limit is {max_rows}")
    require_k_anonymous(released, columns, k)
    return CellCounts(by_attribute=by_attribute, rows=rows)
