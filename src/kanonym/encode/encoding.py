"""Dictionary encoding of quasi-identifiers against their hierarchies.

Every quasi-identifier column is encoded once: each distinct value present in
the data becomes a dense integer *leaf code*, and for every level of the
column's value generalization hierarchy (Samarati 2001, "Protecting
respondents' identities in microdata release", IEEE TKDE 13(6)) a lookup array
maps a leaf code to a dense code of its generalization at that level. All later
work (search, transformation) uses these arrays, never the strings.

Only leaves that occur in the data are encoded, so a hierarchy that lists many
unused values (as ARX files often do) costs nothing in the search.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"),
    ...                       ("*", "*", "*")))
    >>> enc = encode(pl.DataFrame({"zip": ["02141", "02138", "02141"]}), {"zip": h})
    >>> enc.attributes[0].row_codes.tolist(), enc.attributes[0].level_maps[1].tolist()
    ([1, 0, 1], [0, 1])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.hierarchy import Hierarchy

Codes = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class EncodedAttribute:
    """One quasi-identifier, encoded.

    Attributes:
        name: the column name.
        hierarchy: the hierarchy it was encoded against.
        row_codes: leaf code of every row (``int64``, length n).
        level_maps: ``level_maps[j][leaf_code]`` is the dense code of that
            leaf's generalization at level j; ``level_maps[0]`` is the identity.
        level_labels: ``level_labels[j][code]`` is the label (``None`` for the
            missing value) of a level-j code.
    """

    name: str
    hierarchy: Hierarchy
    row_codes: Codes
    level_maps: tuple[Codes, ...]
    level_labels: tuple[tuple[str | None, ...], ...]

    @property
    def height(self) -> int:
        """The hierarchy's highest level."""
        return len(self.level_maps) - 1

    def cardinality(self, level: int) -> int:
        """How many distinct generalized values the data has at ``level``."""
        return len(self.level_labels[level])


@dataclass(frozen=True, eq=False)
class EncodedTable:
    """All quasi-identifiers of a table, encoded; the input of every search."""

    attributes: tuple[EncodedAttribute, ...]
    n_rows: int

    @property
    def names(self) -> tuple[str, ...]:
        """Quasi-identifier names in input order."""
        return tuple(a.name for a in self.attributes)

    @property
    def heights(self) -> tuple[int, ...]:
        """Hierarchy heights in input order: the lattice's top node."""
        return tuple(a.height for a in self.attributes)

    def row_code_matrix(self) -> npt.NDArray[np.int64]:
        """Leaf codes as an ``(n_rows, n_qi)`` matrix."""
        if not self.attributes:
            return np.zeros((self.n_rows, 0), dtype=np.int64)
        return np.column_stack([a.row_codes for a in self.attributes])


def _encode_attribute(column: pl.Series, hierarchy: Hierarchy) -> EncodedAttribute:
    leaf_index = {leaf: i for i, leaf in enumerate(hierarchy.leaves)}
    present = column.unique().to_list()
    # Order present leaves as the hierarchy lists them so codes are deterministic
    # and independent of row order.
    present.sort(key=leaf_index.__getitem__)
    code_of = {value: code for code, value in enumerate(present)}
    row_codes = column.replace_strict(code_of, return_dtype=pl.Int64).to_numpy()

    hierarchy_rows = [leaf_index[value] for value in present]
    level_maps: list[Codes] = []
    level_labels: list[tuple[str | None, ...]] = []
    for level_values in hierarchy.levels:
        dense: dict[str | None, int] = {}
        mapped = [dense.setdefault(level_values[row], len(dense)) for row in hierarchy_rows]
        level_maps.append(np.asarray(mapped, dtype=np.int64))
        level_labels.append(tuple(dense))
    return EncodedAttribute(
        name=column.name,
        hierarchy=hierarchy,
        row_codes=np.ascontiguousarray(row_codes, dtype=np.int64),
        level_maps=tuple(level_maps),
        level_labels=tuple(level_labels),
    )


def encode(frame: pl.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
    """Encode the quasi-identifier columns of ``frame``.

    ``hierarchies`` maps each quasi-identifier (in input order) to a hierarchy
    that already covers every value of its column (see
    :func:`kanonym.hierarchy.resolve`); values are compared as strings, the
    missing value (null) being one value of its own.
    """
    attributes = tuple(
        _encode_attribute(frame.get_column(name).cast(pl.String), hierarchy)
        for name, hierarchy in hierarchies.items()
    )
    return EncodedTable(attributes=attributes, n_rows=frame.height)
