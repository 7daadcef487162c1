"""Quasi-identifiers as the axes Mondrian cuts: ordered numbers or hierarchy nodes.

Mondrian (LeFevre, DeWitt & Ramakrishnan 2006, "Mondrian multidimensional
k-anonymity", ICDE) sees each quasi-identifier as an axis and each row as a
point. A partition of the rows is summarized, per axis, by the smallest value
that covers all its points, and that summary is what the release shows:

* a **numeric** axis orders values by number; the summary is the range
  ``lo-hi`` of the partition's values (the value itself when lo == hi), and
  its normalized width is (hi − lo) / (max − min) over the column;
* a **categorical** axis follows the column's value generalization hierarchy;
  the summary is the lowest common ancestor (LCA) of the partition's values,
  the lowest hierarchy node above them all, and its normalized width is
  (leaves under it − 1) / (leaves − 1), counting the leaves present in the
  data.

Both widths are the normalized certainty penalty of a cell holding the summary
(:mod:`kanonym.metrics.local`), and Mondrian cuts the widest axis first.

Which quasi-identifiers are numeric is decided by :func:`numeric_flags`: those
the user names numeric or categorical are so; otherwise a column generalized
with the ``mask``, ``suppress`` or ``date`` builder is categorical (its
digits or dates are codes, not quantities: ZIP codes are masked, not
averaged), and any other column is numeric when every value in it is a
finite number (``34``, ``-2.5``, ``1e3``) and none is missing, since a missing
value has no place on the number line (it stays a value of its own in a
categorical axis).

Example:
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("age", (("40", "9", "25"), ("*",) * 3))
    >>> a = encode(pl.DataFrame({"age": ["40", "9", "25"]}), {"age": h}).attributes[0]
    >>> d = numeric_dimension(a, source="t.csv", required=True)
    >>> d.texts, d.row_codes.tolist(), d.labels(np.array([0, 1]), np.array([2, 1]))
    (('9', '25', '40'), [2, 0, 1], ['9-40', '25'])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedAttribute, EncodedTable
from kanonym.errors import InputError
from kanonym.hierarchy import DateBuilder, Hierarchy, HierarchyBuilder, MaskBuilder, SuppressBuilder
from kanonym.metrics.local import categorical_penalty, numeric_penalty

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Builders whose values are codes or dates: their hierarchy is the meaningful cut.
_CATEGORICAL_BUILDERS = (MaskBuilder, SuppressBuilder, DateBuilder)


@dataclass(frozen=True, eq=False, kw_only=True)
class NumericDimension:
    """A quasi-identifier cut by value: codes are ranks in numeric order.

    Attributes:
        name: the column.
        row_codes: each row's rank (0 = the smallest number).
        values: the number of each rank.
        texts: each rank's value as written (two spellings of one number,
            ``5`` and ``5.0``, are two ranks, ordered by text).
    """

    name: str
    row_codes: IntArray
    values: FloatArray
    texts: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.texts or len(self.values) != len(self.texts):
            raise ValueError(f"axis {self.name}: one value per text, and at least one")
        if np.any(np.diff(self.values) < 0):
            raise ValueError(f"axis {self.name}: values must be in increasing order")

    @property
    def numeric(self) -> bool:
        """True."""
        return True

    @property
    def cardinality(self) -> int:
        """How many distinct values the column holds."""
        return len(self.texts)

    def widths(self, low: IntArray, high: IntArray) -> FloatArray:
        """Normalized width of the ranges from rank ``low`` to rank ``high``."""
        span = float(self.values[-1] - self.values[0])
        return numeric_penalty(self.values[low], self.values[high], span)

    @property
    def label_space(self) -> int:
        """Label keys are below this."""
        return self.cardinality * self.cardinality

    def label_keys(self, low: IntArray, high: IntArray) -> IntArray:
        """One integer per range, equal exactly when the printed labels are equal."""
        return low * self.cardinality + high

    def label(self, key: int) -> str | None:
        """The printed range of a label key: ``lo-hi``, or the value when lo == hi."""
        low, high = divmod(key, self.cardinality)
        return self.texts[low] if low == high else f"{self.texts[low]}-{self.texts[high]}"

    def labels(self, low: IntArray, high: IntArray) -> list[str | None]:
        """The printed range of each ``(low, high)``."""
        return [self.label(key) for key in self.label_keys(low, high).tolist()]


@dataclass(frozen=True, eq=False, kw_only=True)
class CategoricalDimension:
    """A quasi-identifier cut along its hierarchy: codes are leaf codes.

    Attributes:
        name: the column.
        row_codes: each row's leaf code (as :mod:`kanonym.encode` numbers them).
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


def _number(text: str | None) -> float | None:
    """The value of a finite decimal number, or None (missing, text, NaN, infinite)."""
    if text is None:
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    value = float(number)
    # A finite decimal beyond float's range cannot be placed on the axis.
    return value if math.isfinite(value) else None


def numeric_dimension(
    attribute: EncodedAttribute, *, source: str, required: bool
) -> NumericDimension | None:
    """The attribute as a numeric axis; None when a value is not a number.

    Raises:
        InputError: ``required`` and a value is missing or not a finite
            number; the message names the column and the value.
    """
    labels = attribute.level_labels[0]
    numbers = [_number(label) for label in labels]
    for label, number in zip(labels, numbers, strict=True):
        if number is None:
            if not required:
                return None
            shown = "<missing>" if label is None else repr(label)
            raise InputError(
                f"{source}: column '{attribute.name}': value {shown} is not a number, "
                "so the column cannot be numeric (--numeric); missing values neither"
            )
    texts = [str(label) for label in labels]
    ordered = sorted(range(len(labels)), key=lambda code: (numbers[code], texts[code]))
    rank = np.empty(len(ordered), dtype=np.int64)
    rank[ordered] = np.arange(len(ordered), dtype=np.int64)
    return NumericDimension(
        name=attribute.name,
        row_codes=np.ascontiguousarray(rank[attribute.row_codes]),
        values=np.asarray([numbers[code] for code in ordered], dtype=np.float64),
        texts=tuple(texts[code] for code in ordered),
    )


def categorical_dimension(attribute: EncodedAttribute) -> CategoricalDimension:
    """The attribute as an axis cut along its hierarchy."""
    maps = np.stack(attribute.level_maps).astype(np.int64)
    leaves = maps.shape[1]
    leaves_under = np.stack([np.bincount(level, minlength=leaves) for level in maps])
    ids: dict[str | None, int] = {}
    label_ids = np.zeros(maps.shape, dtype=np.int64)
    for level, labels in enumerate(attribute.level_labels):
        label_ids[level, : len(labels)] = [ids.setdefault(label, len(ids)) for label in labels]
    return CategoricalDimension(
        name=attribute.name,
        row_codes=attribute.row_codes,
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
    encoded: EncodedTable, numeric: Sequence[bool], *, source: str = "<DataFrame>"
) -> tuple[Dimension, ...]:
    """The axes of ``encoded``, numeric where ``numeric`` says so."""
    axes: list[Dimension] = []
    for attribute, is_numeric in zip(encoded.attributes, numeric, strict=True):
        axis = numeric_dimension(attribute, source=source, required=True) if is_numeric else None
        axes.append(axis if axis is not None else categorical_dimension(attribute))
    return tuple(axes)
