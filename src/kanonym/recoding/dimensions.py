"""Quasi-identifiers as the axes Mondrian cuts: ordered numbers or hierarchy nodes.

Mondrian (LeFevre, DeWitt & Ramakrishnan 2006, "Mondrian multidimensional
k-anonymity", ICDE) sees each quasi-identifier as an axis and each row as a
point. A partition of the rows is summarized, per axis, by the smallest value
that covers all its points, and that summary is what the release shows:

* a **numeric** axis orders values by number; the summary is the
  partition's box on that axis, a range whose edges come from the cuts and
  the attribute's grid, never from a member's value alone
  (:mod:`kanonym.recoding.edges`): ``lo-hi`` for integers (hi included),
  ``[lo, hi)`` otherwise, or the value itself when every member holds it.
  Mondrian compares the partition's values, (max − min) over the column's;
  the published cell costs the box's width over the grid's (the NCP);
* a **categorical** axis follows the column's value generalization hierarchy;
  the summary is the lowest common ancestor (LCA) of the partition's values,
  the lowest hierarchy node above them all, and its normalized width is
  (leaves under it − 1) / (leaves − 1), counting the leaves present in the
  data.

Both are normalized certainty penalties (:mod:`kanonym.metrics.local`), and
Mondrian cuts the widest axis first.

Which quasi-identifiers are numeric is decided by :func:`numeric_flags`: those
the user names numeric or categorical are so; otherwise a column generalized
with the ``mask``, ``suppress`` or ``date`` builder is categorical (its
digits or dates are codes, not quantities: ZIP codes are masked, not
averaged), and any other column is numeric when every value in it is a
finite number (``34``, ``-2.5``, ``1e3``) and none is missing, since a missing
value has no place on the number line (it stays a value of its own in a
categorical axis). Two spellings of one number (``5``, ``5.0``) are one value.

Example (no interval grid: step 5, a tenth of the span rounded up; edges 5 and 45):
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("age", (("40", "9", "25"), ("*",) * 3))
    >>> a = encode(pl.DataFrame({"age": ["40", "9", "25"]}), {"age": h}).attributes[0]
    >>> d = numeric_dimension(a, source="t.csv", required=True)
    >>> d.texts, d.row_codes.tolist(), d.scale.step, (d.scale.low, d.scale.high)
    (('9', '25', '40'), [2, 0, 1], Decimal('5'), (Decimal('5'), Decimal('45')))
    >>> d = d.published(np.array([d.scale.low_code, edges.pack(3, 1), d.scale.high_code]),
    ...                 np.array([5.0, 30.0, 45.0]))
    >>> d.labels(np.array([0, 1, -2]), np.array([1, 2, -2]))
    ['5-29', '30-44', '25']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedAttribute, EncodedTable
from kanonym.errors import InputError
from kanonym.hierarchy import DateBuilder, Hierarchy, HierarchyBuilder, MaskBuilder, SuppressBuilder
from kanonym.metrics.local import categorical_penalty, numeric_penalty
from kanonym.recoding import edges

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Builders whose values are codes or dates: their hierarchy is the meaningful cut.
_CATEGORICAL_BUILDERS = (MaskBuilder, SuppressBuilder, DateBuilder)


def _no_edges() -> IntArray:
    return np.zeros(0, dtype=np.int64)


def _no_values() -> FloatArray:
    return np.zeros(0, dtype=np.float64)


@dataclass(frozen=True, eq=False, kw_only=True)
class NumericDimension:
    """A quasi-identifier cut by value: codes are ranks in numeric order.

    A summary ``(low, high)`` on this axis is, during the partitioning, the
    least and greatest rank of a partition's values; in a finished
    :class:`~kanonym.recoding.partitioning.Partitioning`, whose axes are
    :meth:`published`, it is what the release prints: the indices of the
    box's lower and upper edge in ``edge_codes``, or ``(-1 - r, -1 - r)`` when
    every member holds the value of rank r (printed as written).

    Attributes:
        name: the column.
        row_codes: each record's rank (0 = the smallest number); a record is
            a row, or a grouped tuple (:func:`dimensions`).
        values: the number of each rank.
        texts: each rank's value as written (of two spellings of one
            number, ``5`` and ``5.0``, the first in text order).
        scale: the grid and round steps edges are placed on
            (:mod:`kanonym.recoding.edges`).
        edge_codes: the exact edges the published ranges use (empty before).
        edge_values: their floats.
    """

    name: str
    row_codes: IntArray
    values: FloatArray
    texts: tuple[str, ...]
    scale: edges.Scale
    edge_codes: IntArray = field(default_factory=_no_edges)
    edge_values: FloatArray = field(default_factory=_no_values)

    def __post_init__(self) -> None:
        if not self.texts or len(self.values) != len(self.texts):
            raise ValueError(f"axis {self.name}: one value per text, and at least one")
        if np.any(np.diff(self.values) < 0):
            raise ValueError(f"axis {self.name}: values must be in increasing order")
        if len(self.edge_codes) != len(self.edge_values):
            raise ValueError(f"axis {self.name}: one float per edge code")

    @property
    def numeric(self) -> bool:
        """True."""
        return True

    @property
    def cardinality(self) -> int:
        """How many distinct values the column holds."""
        return len(self.texts)

    def widths(self, low: IntArray, high: IntArray) -> FloatArray:
        """Normalized width of the values from rank ``low`` to rank ``high`` (Mondrian's choice)."""
        span = float(self.values[-1] - self.values[0])
        return numeric_penalty(self.values[low], self.values[high], span)

    def published(self, codes: IntArray, values: FloatArray) -> NumericDimension:
        """This axis with the edge table its labels index: canonical codes and their floats."""
        return replace(self, edge_codes=codes, edge_values=values)

    def penalties(self, low: IntArray, high: IntArray) -> FloatArray:
        """NCP of published summaries: the box's width over the grid's; 0 for a single value."""
        single = low < 0
        if single.all():
            return np.zeros(len(low), dtype=np.float64)
        lower = self.edge_values[np.where(single, 0, low)]
        upper = self.edge_values[np.where(single, 0, high)]
        return np.where(single, 0.0, numeric_penalty(lower, upper, self.scale.width))

    @property
    def label_space(self) -> int:
        """Label keys are below this."""
        return len(self.edge_codes) ** 2 + self.cardinality

    def label_keys(self, low: IntArray, high: IntArray) -> IntArray:
        """One integer per published summary, equal exactly when the printed labels are equal."""
        n = len(self.edge_codes)
        return np.where(low < 0, n * n - 1 - low, low * n + high)

    def label(self, key: int) -> str | None:
        """The printed label of a key: ``lo-hi`` (integers), ``[lo, hi)``, or the value."""
        n = len(self.edge_codes)
        if key >= n * n:
            return self.texts[key - n * n]
        below, above = divmod(key, n)
        low = edges.edge_number(int(self.edge_codes[below]), self.texts)
        high = edges.edge_number(int(self.edge_codes[above]), self.texts)
        if self.scale.integral:
            return f"{int(low)}-{int(high) - 1}"
        return f"[{edges.text(low)}, {edges.text(high)})"

    def labels(self, low: IntArray, high: IntArray) -> list[str | None]:
        """The printed label of each published summary ``(low, high)``."""
        return [self.label(key) for key in self.label_keys(low, high).tolist()]


@dataclass(frozen=True, eq=False, kw_only=True)
class CategoricalDimension:
    """A quasi-identifier cut along its hierarchy: codes are leaf codes.

    Attributes:
        name: the column.
        row_codes: each record's leaf code (as :mod:`kanonym.encode` numbers
            them); a record is a row, or a grouped tuple (:func:`dimensions`).
        maps: ``maps[level, leaf]`` is the leaf's node (dense code) at ``level``.
        level_labels: ``level_labels[level][node]`` is the node's label.
        leaves_under: ``leaves_under[level, node]``: leaves present in the
            data under the node (0 past the level's last node).
        distinct_labels: every label of the hierarchy once (in level order).
        label_ids: ``label_ids[level, node]``: the index of the node's label
            in ``distinct_labels``.
    """

    name: str
    row_codes: IntArray
    maps: IntArray
    level_labels: tuple[tuple[str | None, ...], ...]
    leaves_under: IntArray
    distinct_labels: tuple[str | None, ...]
    label_ids: IntArray

    def __post_init__(self) -> None:
        shape = self.maps.shape
        if len(shape) != 2 or self.leaves_under.shape != shape or self.label_ids.shape != shape:
            raise ValueError(f"axis {self.name}: maps, leaves_under and label_ids differ in shape")
        if len(self.level_labels) != shape[0]:
            raise ValueError(f"axis {self.name}: one tuple of labels per level is needed")

    @property
    def numeric(self) -> bool:
        """False."""
        return False

    @property
    def cardinality(self) -> int:
        """How many distinct values (leaves) the column holds."""
        return int(self.maps.shape[1])

    @property
    def height(self) -> int:
        """The hierarchy's highest level."""
        return int(self.maps.shape[0]) - 1

    def widths(self, level: IntArray, node: IntArray) -> FloatArray:
        """Normalized width of the nodes ``(level, node)``."""
        return categorical_penalty(self.leaves_under[level, node], self.cardinality)

    def penalties(self, level: IntArray, node: IntArray) -> FloatArray:
        """NCP of cells holding the nodes ``(level, node)``: their widths."""
        return self.widths(level, node)

    @property
    def label_space(self) -> int:
        """Label keys are below this."""
        return len(self.distinct_labels)

    def label_keys(self, level: IntArray, node: IntArray) -> IntArray:
        """One integer per node, equal exactly when the labels are equal.

        A label can name nodes on several levels (ARX files repeat a value up
        a chain, ``married;married;*``); the release shows text, so they are one.
        """
        return self.label_ids[level, node]

    def label(self, key: int) -> str | None:
        """The label a key stands for."""
        return self.distinct_labels[key]

    def labels(self, level: IntArray, node: IntArray) -> list[str | None]:
        """The label of each node ``(level, node)``."""
        return [self.label(key) for key in self.label_keys(level, node).tolist()]


Dimension = NumericDimension | CategoricalDimension


def _number(text: str | None) -> Decimal | None:
    """The value of a finite decimal number, or None (missing, text, NaN, infinite)."""
    if text is None:
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    # A finite decimal beyond float's range cannot be placed on the axis.
    return number if math.isfinite(float(number)) else None


def numeric_dimension(
    attribute: EncodedAttribute,
    *,
    source: str,
    required: bool,
    rows: npt.NDArray[np.int64] | None = None,
) -> NumericDimension | None:
    """The attribute as a numeric axis; None when a value is not a number.

    ``rows`` holds each row's leaf code (the axis is then over rows); without
    it the axis is over the attribute's leaves, one "row" each.

    Its scale's grid step is the width of the hierarchy's first level when
    that is a regular interval grid (:func:`kanonym.recoding.edges.declared_step`).

    Raises:
        InputError: ``required`` and a value is missing or not a finite
            number; the message names the column and the value.
    """
    labels = attribute.level_labels[0]
    numbers = [_number(label) for label in labels]
    exact: list[Decimal] = []
    for label, number in zip(labels, numbers, strict=True):
        if number is None:
            if not required:
                return None
            shown = "<missing>" if label is None else repr(label)
            raise InputError(
                f"{source}: column '{attribute.name}': value {shown} is not a number, "
                "so the column cannot be numeric (`numeric`); missing values neither"
            )
        exact.append(number)
    texts = [str(label) for label in labels]
    ordered = sorted(range(len(labels)), key=lambda code: (exact[code], texts[code]))
    # One rank per number: no edge can fall between two spellings of it.
    rank = np.empty(len(ordered), dtype=np.int64)
    distinct: list[int] = []
    for code in ordered:
        if not distinct or exact[code] != exact[distinct[-1]]:
            distinct.append(code)
        rank[code] = len(distinct) - 1
    declared = (
        edges.declared_step(attribute.level_labels[1], attribute.level_maps[1].tolist(), exact)
        if attribute.height >= 1
        else None
    )
    return NumericDimension(
        name=attribute.name,
        row_codes=np.ascontiguousarray(rank if rows is None else rank[rows]),
        values=np.asarray([float(exact[code]) for code in distinct], dtype=np.float64),
        texts=tuple(texts[code] for code in distinct),
        scale=edges.scale([exact[code] for code in distinct], declared=declared),
    )


def categorical_dimension(
    attribute: EncodedAttribute, rows: npt.NDArray[np.int64]
) -> CategoricalDimension:
    """The attribute as an axis cut along its hierarchy; ``rows``: each row's leaf code."""
    maps = np.stack(attribute.level_maps).astype(np.int64)
    leaves = maps.shape[1]
    leaves_under = np.stack([np.bincount(level, minlength=leaves) for level in maps])
    ids: dict[str | None, int] = {}
    label_ids = np.zeros(maps.shape, dtype=np.int64)
    for level, labels in enumerate(attribute.level_labels):
        label_ids[level, : len(labels)] = [ids.setdefault(label, len(ids)) for label in labels]
    return CategoricalDimension(
        name=attribute.name,
        row_codes=rows,
        maps=maps,
        level_labels=attribute.level_labels,
        leaves_under=leaves_under.astype(np.int64),
        distinct_labels=tuple(ids),
        label_ids=label_ids,
    )


def numeric_flags(
    encoded: EncodedTable,
    hierarchies: Mapping[str, Hierarchy | HierarchyBuilder],
    *,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    source: str = "<DataFrame>",
) -> tuple[bool, ...]:
    """Per quasi-identifier, whether Mondrian treats it as numeric (rules: module docstring).

    ``hierarchies`` are the hierarchies or builders as the user gave them
    (before building), which tell a masked code from a quantity.

    Example:
        >>> import polars as pl
        >>> from kanonym.encode import encode
        >>> from kanonym.hierarchy import parse_hierarchy, resolve
        >>> frame = pl.DataFrame({"age": ["34", "51"], "zip": ["02138", "02139"]})
        >>> given = {"age": parse_hierarchy("interval:10"), "zip": parse_hierarchy("mask")}
        >>> encoded = encode(frame, {n: resolve(h, frame[n].to_list(), column=n, source="t")
        ...                          for n, h in given.items()})
        >>> numeric_flags(encoded, given), numeric_flags(encoded, given, categorical=["age"])
        ((True, False), (False, False))
    """
    flags = []
    for attribute in encoded.attributes:
        name = attribute.name
        if name in numeric:
            numeric_dimension(attribute, source=source, required=True)
            flags.append(True)
        elif name in categorical or isinstance(hierarchies.get(name), _CATEGORICAL_BUILDERS):
            flags.append(False)
        else:
            flags.append(numeric_dimension(attribute, source=source, required=False) is not None)
    return tuple(flags)


def dimensions(
    encoded: EncodedTable,
    numeric: Sequence[bool],
    *,
    source: str = "<DataFrame>",
    tuples: npt.NDArray[np.int64] | None = None,
) -> tuple[Dimension, ...]:
    """The axes of ``encoded``, numeric where ``numeric`` says so, over records whose
    frequency-set tuples are ``tuples`` (by default the rows: each row's tuple)."""
    axes: list[Dimension] = []
    if tuples is None:
        tuples = encoded.frequency_set.rows()
    for j, (attribute, is_numeric) in enumerate(zip(encoded.attributes, numeric, strict=True)):
        rows = np.ascontiguousarray(encoded.frequency_set.codes[:, j][tuples])
        axis = (
            numeric_dimension(attribute, source=source, required=True, rows=rows)
            if is_numeric
            else None
        )
        axes.append(axis if axis is not None else categorical_dimension(attribute, rows))
    return tuple(axes)
