"""Tying every released row to the one input row it comes from.

Grouping a released table shows whether its classes are large enough, not
whether its rows are the input's: a row moved to another class of at least k
rows, a cell of a column released unchanged altered, or one record of a k-row
class replaced by a copy of another (k rows, k-1 people) all leave the classes'
sizes as they were. So the release is compared with its input row by row:
``source_rows[i]`` is the input row that released row i comes from (the
transform knows it: the rows it kept, in the order of its shuffle; it is kept in
memory, never written). Checks (:func:`verify_rows`):

* every input column but the removed ones is released, in the input's order;
* ``source_rows`` is a one-to-one matching: one input row per released row,
  each input row at most once, so no row is released twice or made up;
* each quasi-identifier cell *covers* its input value: it is the value's
  label at the chosen level of the attribute's hierarchy, or (without levels,
  as when the ledger keeps what an earlier release published) the value or
  any of its ancestors, looked up among the hierarchy's (value, label) pairs
  (:func:`label_pairs`), both numbered by the hierarchy (:func:`codes`);
* every other released column holds its input row's value, compared as text
  (missing equals missing), and keeps its type.

The row i named in a message is the released row's position. Values of the
columns released unchanged are never printed (they may identify someone);
quasi-identifier values are, cut to a few dozen characters
(:func:`kanonym.errors.echo`).
Nothing here comes from ``search``, ``lattice``, ``models``, ``encode`` or
``release``: the hierarchy's own table of levels is read directly.

Example (row 0 of the release is input row 1; then rows 0 and 2 swapped sources,
which their ZIPs, both 0213*, cannot show):
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"),
    ...                       ("*",) * 3))
    >>> source = pl.DataFrame({"zip": ["02138", "02139", "02141"], "n": [1, 2, 3]})
    >>> released = pl.DataFrame({"zip": ["0213*", "0214*", "0213*"], "n": [2, 3, 1]})
    >>> verify_rows(released, source=source, source_rows=np.array([1, 2, 0]),
    ...             columns=["zip"], hierarchies={"zip": h}, levels={"zip": 1},
    ...             removed_columns=[])
    >>> verify_rows(released, source=source, source_rows=np.array([0, 2, 1]),
    ...             columns=["zip"], hierarchies={"zip": h}, levels={"zip": 1},
    ...             removed_columns=[])
    Traceback (most recent call last):
    ...
    kanonym.errors.VerificationError: release row 0, column 'n' differs from its input row 0
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NoReturn

import numpy as np
import numpy.typing as npt
import polars as pl
from polars.exceptions import ComputeError, InvalidOperationError

from kanonym.errors import VerificationError, echo
from kanonym.hierarchy import Hierarchy

IntArray = npt.NDArray[np.int64]
# Numbers of values and labels: half the memory of int64 on a table of millions of rows.
CodeArray = npt.NDArray[np.int32]


def numbered(categories: Sequence[str | None]) -> list[str | None]:
    """``categories`` in the order :func:`codes` numbers them: the missing value (if any) last.

    Example:
        >>> numbered(["a", None, "b"])
        ['a', 'b', None]
    """
    return [c for c in categories if c is not None] + ([None] if None in categories else [])


def codes(
    frame: pl.DataFrame, categories: Mapping[str, Sequence[str | None]]
) -> dict[str, CodeArray]:
    """Per column named in ``categories``: each value's number among its categories.

    Definition: ``numbered(categories[column]).index(value)`` (the categories
    distinct), -1 for a value not among them; the missing value (None) is a
    category like any other, numbered last. Values are compared as text, as the
    encoding reads them. Vectorized: each column is cast to an enumeration of
    its categories, whose codes are the numbers, all columns in one Polars query
    (run in parallel).

    Example:
        >>> frame = pl.DataFrame({"a": ["b", None, "x", "a"]})
        >>> codes(frame, {"a": ["a", None, "b"]})["a"].tolist()
        [1, 2, -1, 0]
    """
    known = {name: [c for c in values if c is not None] for name, values in categories.items()}
    physical = frame.select(
        pl.col(name)
        .cast(pl.String)
        .cast(pl.Enum(known[name]), strict=False)
        .to_physical()
        .cast(pl.Int32)
        for name in categories
    )
    out = {}
    for name, values in categories.items():
        column = physical.get_column(name)
        if not column.null_count():
            out[name] = column.to_numpy()
            continue
        # Null: a missing value, or a value outside the enumeration.
        missing = len(known[name]) if None in values else -1
        coded = column.fill_null(-1).to_numpy(writable=True)
        coded[frame.get_column(name).is_null().to_numpy()] = missing
        out[name] = coded
    return out


def label_pairs(
    hierarchy: Hierarchy, level: int | None = None
) -> tuple[list[str | None], IntArray]:
    """The labels of ``hierarchy``, numbered, and the (leaf, label) pairs a released cell may show.

    Definition: with ``level``, each leaf with its generalization at that level
    (one label per leaf: full-domain generalization); without, with every label
    on the leaf's path to the root, itself included (the value or one of its
    ancestors). Source: the hierarchy's table of levels, ``levels[j][i]`` being
    leaf i at level j (Samarati 2001, section 3). Returns the distinct labels of
    every level (:func:`numbered`: the missing value an ordinary label, last)
    and the pairs as ``leaf * len(labels) + label``, sorted, leaves numbered
    as ``numbered(hierarchy.leaves)``.

    Example:
        >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*"), ("*", "*")))
        >>> labels, pairs = label_pairs(h, 1)
        >>> [(numbered(h.leaves)[p // len(labels)], labels[p % len(labels)]) for p in pairs]
        [('02138', '0213*'), ('02139', '0213*')]
        >>> labels, pairs = label_pairs(h)
        >>> sorted(labels[p % len(labels)] for p in pairs if p // len(labels) == 0)
        ['*', '0213*', '02138']
    """
    labels = _labels(hierarchy)
    chosen = range(len(hierarchy.levels)) if level is None else (level,)
    leaves = np.arange(len(hierarchy.levels[0]), dtype=np.int64)
    pairs = np.concatenate(
        [
            leaves * len(labels) + _label_of_leaf(hierarchy, labels, j).astype(np.int64)
            for j in chosen
        ]
    )
    return labels, np.unique(pairs)


def _labels(hierarchy: Hierarchy) -> list[str | None]:
    """The distinct labels of every level, numbered as :func:`codes` numbers them.

    A label repeated on several levels (ARX files where a value generalizes
    to itself) is one label.
    """
    return numbered(list(dict.fromkeys(value for level in hierarchy.levels for value in level)))


def _label_of_leaf(hierarchy: Hierarchy, labels: list[str | None], level: int) -> CodeArray:
    """Per leaf, numbered as ``numbered(hierarchy.leaves)``, the number in ``labels`` of its
    generalization at ``level``."""
    position = {label: i for i, label in enumerate(labels)}
    parent = dict(zip(hierarchy.levels[0], hierarchy.levels[level], strict=True))
    return np.array([position[parent[v]] for v in numbered(hierarchy.levels[0])], dtype=np.int32)


def gathered(source: pl.DataFrame, columns: Sequence[str], rows: IntArray) -> pl.DataFrame:
    """``columns`` of ``source`` at ``rows``, in that order (row i is input row ``rows[i]``).

    Column by column: a frame of no columns has no rows to gather from.
    """
    return pl.DataFrame([source.get_column(c).gather(rows) for c in columns])


def require_columns(
    released: pl.DataFrame, source: pl.DataFrame, removed_columns: Collection[str]
) -> list[str]:
    """The input's columns but the removed ones; VerificationError unless the release has them.

    The release must hold exactly these, in the input's order: a column added
    or lost by the transform is a fault.
    """
    expected = [c for c in source.columns if c not in removed_columns]
    if released.columns != expected:
        raise VerificationError(f"release has columns {released.columns}, expected {expected}")
    return expected


def require_one_to_one(source_rows: IntArray, released_rows: int, input_rows: int) -> None:
    """VerificationError unless ``source_rows`` matches each released row to its own input row.

    Definition: one entry per released row, each an input row (0 to
    ``input_rows - 1``), no input row twice. Two released rows from one input
    row would count one person twice (a class of k rows, k-1 people).

    Example:
        >>> require_one_to_one(np.array([2, 0, 2]), 3, 3)
        Traceback (most recent call last):
        ...
        kanonym.errors.VerificationError: input row 2 is released twice
    """
    if source_rows.ndim != 1 or len(source_rows) != released_rows:
        raise VerificationError(
            f"the transform gave {len(source_rows)} source rows for {released_rows} released rows"
        )
    outside = (source_rows < 0) | (source_rows >= input_rows)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise VerificationError(
            f"release row {row} comes from row {int(source_rows[row])}, not an input row "
            f"(the input has {input_rows})"
        )
    counts = np.bincount(source_rows, minlength=input_rows)
    if (counts > 1).any():
        raise VerificationError(f"input row {int(np.flatnonzero(counts > 1)[0])} is released twice")


def _same(shown: pl.Series, held: pl.Series) -> pl.Series:
    """Per row, whether the two cells are equal as text (missing equals missing).

    Text as a CSV file would show the value, so that ``-0.0`` and ``0.0``
    differ and NaN equals NaN. A column with no text form (binary, Python
    objects) is compared by value, element by element if Polars cannot.
    """
    try:
        if shown.dtype != pl.String:
            shown, held = shown.cast(pl.String), held.cast(pl.String)
    except (InvalidOperationError, ComputeError):
        pass  # no text form: compared by value below
    try:
        return shown.eq_missing(held)
    except (InvalidOperationError, ComputeError):
        pairs = zip(shown.to_list(), held.to_list(), strict=True)
        return pl.Series([a is b or a == b for a, b in pairs], dtype=pl.Boolean)


def require_unchanged(
    released: pl.DataFrame, originals: pl.DataFrame, columns: Sequence[str], source_rows: IntArray
) -> None:
    """VerificationError unless every column in ``columns`` holds its input row's value.

    ``originals`` is the input gathered by ``source_rows`` (row i the source of
    released row i). Values are compared as text (:func:`_same`); a column's
    type must be kept too. No value is printed.
    """
    for name in columns:
        shown, held = released.get_column(name), originals.get_column(name)
        if shown.dtype != held.dtype:
            raise VerificationError(
                f"release column '{name}' is {shown.dtype}; the input's is {held.dtype}"
            )
        same = _same(shown, held)
        if not same.all():
            row = int(same.arg_min())  # type: ignore[arg-type]
            raise VerificationError(
                f"release row {row}, column '{name}' differs from its input row "
                f"{int(source_rows[row])}"
            )


def require_covered(
    released: pl.DataFrame,
    source: pl.DataFrame,
    source_rows: IntArray,
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int] | None,
) -> None:
    """VerificationError unless each released cell covers its input value (:func:`label_pairs`).

    For each column of ``hierarchies``, released row i's cell must cover the
    value of input row ``source_rows[i]``: be its label at ``levels[column]``,
    or without levels the value or one of its ancestors. Values and labels are
    numbered by the hierarchies (:func:`codes`) and each row's (value, label)
    pair looked up among the allowed ones, all vectorized: no string is
    gathered or joined.
    """
    labels = {name: _labels(h) for name, h in hierarchies.items()}
    values = codes(source, {name: h.levels[0] for name, h in hierarchies.items()})
    shown = codes(released, labels)
    for name, hierarchy in hierarchies.items():
        value, label = values[name][source_rows], shown[name]
        level = None if levels is None else levels[name]
        if level is None:
            _, pairs = label_pairs(hierarchy)
            key = value.astype(np.int64) * len(labels[name]) + label
            # searchsorted finds where each key would go; it is allowed if it is there.
            at = np.minimum(np.searchsorted(pairs, key), len(pairs) - 1)
            wrong = (value < 0) | (label < 0) | (pairs[at] != key)
        else:
            # One label per leaf: a lookup by the leaf's position, cheaper than a search.
            expected = _label_of_leaf(hierarchy, labels[name], level)
            # value is -1 only for a value outside the hierarchy, then wrong anyway.
            wrong = expected[value] != label
            if (value < 0).any():
                wrong |= value < 0
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            _uncovered(released, source, name, row, int(source_rows[row]), hierarchy, level)


def _uncovered(
    released: pl.DataFrame,
    source: pl.DataFrame,
    name: str,
    row: int,
    input_row: int,
    hierarchy: Hierarchy,
    level: int | None,
) -> NoReturn:
    """Raise the VerificationError for released ``row`` not covering its input value."""
    shown = released.get_column(name).cast(pl.String)[row]
    held = source.get_column(name).cast(pl.String)[input_row]
    where = f"release row {row}, column '{name}'"
    if held not in hierarchy.levels[0]:
        raise VerificationError(
            f"{where}: its input value {echo(held)} is not in hierarchy {hierarchy.name}"
        )
    if level is None:
        raise VerificationError(
            f"{where}: {echo(shown)} is not {echo(held)} or an ancestor of it in hierarchy "
            f"{hierarchy.name}"
        )
    at = hierarchy.levels[0].index(held)
    raise VerificationError(
        f"{where}: {echo(shown)} where its input value {echo(held)} is "
        f"{echo(hierarchy.levels[level][at])} at level {level}"
    )


def verify_rows(
    released: pl.DataFrame,
    *,
    source: pl.DataFrame,
    source_rows: IntArray,
    columns: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    removed_columns: Collection[str],
    levels: Mapping[str, int] | None = None,
) -> None:
    """Raise VerificationError unless each released row generalizes exactly one input row.

    ``columns`` names the quasi-identifier columns and ``source_rows[i]`` is
    the input row released row i comes from. With ``levels`` every
    quasi-identifier cell must be its input value's label at
    that level; without, the value or any ancestor (see the module docstring
    for every check). Suppressed rows are the input rows no released row
    comes from; how many there may be is the caller's to check.
    """
    expected = require_columns(released, source, removed_columns)
    require_one_to_one(source_rows, released.height, source.height)
    require_covered(
        released,
        source,
        source_rows,
        {name: hierarchies[name] for name in columns},
        levels,
    )
    others = [c for c in expected if c not in columns]
    require_unchanged(released, gathered(source, others, source_rows), others, source_rows)
