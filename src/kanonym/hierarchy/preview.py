"""A hierarchy previewed on a column: how many rows each generalized value would hold.

Choosing a hierarchy means seeing what each level does to the data: at level
``j`` every value of the column is replaced by its generalization
(Samarati 2001), so the rows under one generalized value are the sum of the
rows of the leaves below it. :func:`preview` gives those counts for every
level at once, by joining the column's value counts to the hierarchy's
levels and summing per level (no loop over rows), and lists the values the
hierarchy lacks, which a release would refuse.

The counts are of the input, for whoever prepares a release (the web
workbench shows them); they are not meant for a report, whose rules forbid
counts below k (:mod:`kanonym.report.content`).

Example:
    >>> import polars as pl
    >>> h = Hierarchy(name="zip", levels=(("02138", "02139", "02141"),
    ...                                   ("0213*", "0213*", "0214*"), ("*",) * 3))
    >>> for level in preview(h, pl.Series(["02138", "02139", "02139", "02141", "10001"])):
    ...     print(level.level, level.counts, level.uncovered)
    0 (('02139', 2), ('02138', 1), ('02141', 1)) (('10001', 1),)
    1 (('0213*', 3), ('0214*', 1)) (('10001', 1),)
    2 (('*', 4),) (('10001', 1),)
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from kanonym.errors import InputError
from kanonym.hierarchy.builders import HierarchyBuilder
from kanonym.hierarchy.hierarchy import Hierarchy

_LEAF = "leaf"
_ROWS = "rows"


@dataclass(frozen=True)
class LevelPreview:
    """The rows of a column under each value of one hierarchy level.

    Attributes:
        level: the hierarchy level, 0 (the values themselves) to its height.
        counts: ``(generalized value, rows)`` for each value at ``level`` that
            holds at least one row of the column, most rows first, ties in
            text order with the missing value (None) last.
        uncovered: ``(value, rows)`` for each value of the column that is not
            a leaf of the hierarchy, in the same order (the same on every
            level); a release with this hierarchy would refuse the column.
    """

    level: int
    counts: tuple[tuple[str | None, int], ...]
    uncovered: tuple[tuple[str | None, int], ...]

    @property
    def rows(self) -> int:
        """Rows the hierarchy covers (the sum of ``counts``)."""
        return sum(rows for _, rows in self.counts)


def preview(hierarchy: Hierarchy | HierarchyBuilder, values: pl.Series) -> list[LevelPreview]:
    """Each level of ``hierarchy`` with the rows of ``values`` under each of its values.

    ``values`` is the column; it is compared as text (cast to ``pl.String``),
    as kanonym reads tables, and a null is the missing value. A builder is
    built on the column's distinct values first (named by the Series' name).
    Returns one :class:`LevelPreview` per level, 0 to the height.

    Raises:
        InputError: ``values`` cannot be read as text (a nested column), or
            a builder cannot build on them (a word for ``interval``).

    Example:
        >>> import polars as pl
        >>> h = Hierarchy(name="sex", levels=(("F", "M", None), ("*", "*", "*")))
        >>> [p.counts for p in preview(h, pl.Series(["M", None, "F", "M"]))]
        [(('M', 2), ('F', 1), (None, 1)), (('*', 4),)]
    """
    try:
        text = values.cast(pl.String)
    except pl.exceptions.PolarsError as error:
        raise InputError(
            f"`values`: a column of {values.dtype} cannot be previewed as text"
        ) from error
    counted = text.alias(_LEAF).to_frame().group_by(_LEAF).len(name=_ROWS)
    if not isinstance(hierarchy, Hierarchy):
        distinct = counted.get_column(_LEAF).to_list()
        hierarchy = hierarchy.build(distinct, column=values.name, source="preview")
    names = [f"level {j}" for j in range(1, hierarchy.height + 1)]
    levels = pl.DataFrame(
        {_LEAF: hierarchy.levels[0], **dict(zip(names, hierarchy.levels[1:], strict=True))},
        schema=dict.fromkeys([_LEAF, *names], pl.String),
    )
    covered = counted.join(levels, on=_LEAF, how="inner", nulls_equal=True)
    absent = counted.join(levels, on=_LEAF, how="anti", nulls_equal=True)
    uncovered = _ranked(absent, _LEAF)
    return [
        LevelPreview(
            level=j,
            counts=_ranked(covered.group_by(name).agg(pl.col(_ROWS).sum()), name),
            uncovered=uncovered,
        )
        for j, name in enumerate([_LEAF, *names])
    ]


def _ranked(frame: pl.DataFrame, label: str) -> tuple[tuple[str | None, int], ...]:
    """``(label, rows)`` pairs, most rows first, ties in text order with the missing value last."""
    ordered = frame.sort([_ROWS, label], descending=[True, False], nulls_last=True)
    labels = ordered.get_column(label).to_list()
    return tuple(zip(labels, ordered.get_column(_ROWS).to_list(), strict=True))
