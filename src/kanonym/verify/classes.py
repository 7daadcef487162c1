"""The equivalence classes of a finished table and their sensitive values, counted.

The table is grouped with Polars on its quasi-identifier columns as released
(missing values group together, as everywhere in kanonym); in each class a
sensitive attribute's values are counted as text, the missing value being a
value of its own. Nothing is taken from the search's codes or frequency set.

Example:
    >>> import polars as pl
    >>> t = pl.DataFrame({"zip": ["0213*", "0213*", "0214*"], "disease": ["flu", "flu", None]})
    >>> list(class_value_counts(t, ["zip"], "disease"))
    [{'flu': 2}, {None: 1}]
    >>> value_counts(t.get_column("disease"))
    {'flu': 2, None: 1}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import polars as pl

from kanonym.verify.definitions import Value

# Classes are turned into Python dicts this many at a time, so that a table of
# millions of classes is never held as Python objects all at once.
_CLASSES_PER_BATCH = 50_000


def _free(frame: pl.DataFrame, stem: str) -> str:
    """A column name not in ``frame``."""
    name = f"__kanonym_{stem}"
    while name in frame.columns:
        name += "_"
    return name


def value_counts(column: pl.Series, weights: pl.Series | None = None) -> dict[Value, int]:
    """Rows holding each value of ``column`` (as text; the missing value is a value).

    Values come in text order, the missing value last. With ``weights``, each
    entry of ``column`` stands for that many rows (a table counted by value).
    """
    frame = column.cast(pl.String).rename("value").to_frame()
    if weights is None:
        counted = frame.group_by("value").len()
    else:
        counted = (
            frame.with_columns(weights.cast(pl.Int64).alias("len"))
            .group_by("value")
            .agg(pl.col("len").sum())
        )
    counted = counted.sort("value", nulls_last=True)
    return dict(zip(counted["value"].to_list(), counted["len"].to_list(), strict=True))


def class_sizes(
    frame: pl.DataFrame, columns: Sequence[str], weight: str | None = None
) -> pl.Series:
    """The rows of each class of ``frame`` on ``columns`` (each row standing for ``weight``
    rows when that column is named)."""
    if weight is not None:
        rows = frame.get_column(weight).cast(pl.Int64)
        if not columns:
            return pl.Series("len", [rows.sum()] if frame.height else [], pl.Int64)
        return frame.group_by(list(columns)).agg(pl.col(weight).cast(pl.Int64).sum())[weight]
    if not columns:
        return pl.Series("len", [frame.height] if frame.height else [], pl.UInt32)
    return frame.group_by(list(columns)).len()["len"]


def class_value_counts(
    frame: pl.DataFrame, columns: Sequence[str], attribute: str, weight: str | None = None
) -> Iterator[dict[Value, int]]:
    """Per class of ``frame`` on ``columns``: rows holding each value of ``attribute`` (each
    row standing for ``weight`` rows when that column is named).

    Classes come in the order of their quasi-identifier values (missing last).
    """
    if frame.height == 0:
        return
    value, rows = _free(frame, "value"), _free(frame, "rows")
    keys = list(columns) or [_free(frame, "class")]
    counted = (
        frame.select(
            *(pl.col(q) for q in columns),
            *([] if columns else [pl.lit(0).alias(keys[0])]),
            pl.col(attribute).cast(pl.String).alias(value),
            (pl.lit(1) if weight is None else pl.col(weight)).cast(pl.Int64).alias(rows),
        )
        .group_by([*keys, value])
        .agg(pl.col(rows).sum())
        .group_by(keys)
        .agg(pl.col(value), pl.col(rows))
        .sort(keys, nulls_last=True)
    )
    for batch in counted.iter_slices(_CLASSES_PER_BATCH):
        for values, counts in zip(batch[value].to_list(), batch[rows].to_list(), strict=True):
            yield dict(zip(values, counts, strict=True))
