"""Dictionary encoding of quasi-identifiers against their hierarchies.

An engine groups the rows on their raw values first (its ``GROUP BY``, the
only step that reads every row; :func:`kanonym.encode.group_frame` in
memory) and :func:`encode_grouped` encodes the (small) grouped table: each
distinct value becomes a dense integer *leaf
code*, and for every level of the column's value generalization hierarchy
(Samarati 2001, "Protecting respondents' identities in microdata release",
IEEE TKDE 13(6)) a lookup array maps a leaf code to a dense code of its
generalization at that level. The distinct code tuples with their counts form
the frequency set (LeFevre, DeWitt & Ramakrishnan 2005), which is all the
search, the models and the metrics see.

Only leaves that occur in the data are encoded, so a hierarchy that lists many
unused values (as ARX files often do) costs nothing in the search.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"),
    ...                       ("*", "*", "*")))
    >>> enc = encode(pl.DataFrame({"zip": ["02141", "02138", "02141"]}), {"zip": h})
    >>> enc.frequency_set.codes.tolist(), enc.frequency_set.counts.tolist()
    ([[1], [0]], [2, 1])
    >>> enc.attributes[0].level_maps[1].tolist(), enc.attributes[0].level_labels[1]
    ([0, 1], ('0213*', '0214*'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.encode.dictionary import DictionaryCodes, dictionary_codes
from kanonym.encode.frequency import FrequencySet, IntArray
from kanonym.encode.grouping import Grouped
from kanonym.hierarchy import Hierarchy

Codes = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class EncodedAttribute:
    """One quasi-identifier's dictionary: its leaves' codes and their generalizations.

    Attributes:
        name: the column name.
        hierarchy: the hierarchy it was encoded against.
        level_maps: ``level_maps[j][leaf_code]`` is the dense code of that
            leaf's generalization at level j; ``level_maps[0]`` is the identity.
        level_labels: ``level_labels[j][code]`` is the label (``None`` for the
            missing value) of a level-j code.
    """

    name: str
    hierarchy: Hierarchy
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
    """All quasi-identifiers of a table, encoded, with their frequency set: the
    input of every search.

    Attributes:
        attributes: each quasi-identifier's dictionary, in input order.
        frequency_set: the distinct leaf-code tuples with their counts.
    """

    attributes: tuple[EncodedAttribute, ...]
    frequency_set: FrequencySet

    @property
    def names(self) -> tuple[str, ...]:
        """Quasi-identifier names in input order."""
        return tuple(a.name for a in self.attributes)

    @property
    def heights(self) -> tuple[int, ...]:
        """Hierarchy heights in input order: the lattice's top node."""
        return tuple(a.height for a in self.attributes)

    @property
    def n_rows(self) -> int:
        """Rows represented."""
        return self.frequency_set.n_rows

    def row_codes(self, attribute: int) -> Codes:
        """Leaf code of every row for one attribute (row-level: local recoding only).

        Needs the frequency set's row index, which only an engine holding the
        rows provides (:attr:`FrequencySet.row_tuple`).
        """
        return self.frequency_set.row_codes(attribute)


def _dictionary(
    name: str, present: list[str | None], hierarchy: Hierarchy
) -> tuple[list[str | None], EncodedAttribute]:
    """The present values in leaf order (their codes), and the attribute's dictionary."""
    leaf_index = {leaf: i for i, leaf in enumerate(hierarchy.leaves)}
    # Order present leaves as the hierarchy lists them so codes are deterministic
    # and independent of row order.
    present = sorted(present, key=leaf_index.__getitem__)
    hierarchy_rows = [leaf_index[value] for value in present]
    level_maps: list[Codes] = []
    level_labels: list[tuple[str | None, ...]] = []
    for level_values in hierarchy.levels:
        dense: dict[str | None, int] = {}
        mapped = [dense.setdefault(level_values[row], len(dense)) for row in hierarchy_rows]
        level_maps.append(np.asarray(mapped, dtype=np.int64))
        level_labels.append(tuple(dense))
    attribute = EncodedAttribute(
        name=name,
        hierarchy=hierarchy,
        level_maps=tuple(level_maps),
        level_labels=tuple(level_labels),
    )
    return present, attribute


def _attributes(
    dictionaries: DictionaryCodes, hierarchies: Mapping[str, Hierarchy]
) -> tuple[list[IntArray], tuple[EncodedAttribute, ...]]:
    """Per quasi-identifier (the dictionaries' columns, in order), the leaf code of each
    of its dictionary values, and its encoded attribute."""
    leaf_of: list[IntArray] = []
    attributes: list[EncodedAttribute] = []
    for name, values in zip(dictionaries.columns, dictionaries.values, strict=True):
        present, attribute = _dictionary(name, list(values), hierarchies[name])
        code_of = {value: code for code, value in enumerate(present)}
        leaf_of.append(np.array([code_of[v] for v in values], dtype=np.int64))
        attributes.append(attribute)
    return leaf_of, tuple(attributes)


def encode_grouped(
    grouped: Grouped, hierarchies: Mapping[str, Hierarchy]
) -> tuple[EncodedTable, IntArray]:
    """Encode distinct raw tuples (an engine's grouping) into the frequency set.

    ``grouped.values`` holds the quasi-identifier columns (and possibly
    others, such as sensitive columns, ignored here) as strings, one row per
    distinct raw tuple, with ``grouped.counts`` rows each. Returns the encoded
    table and, for each grouped tuple, the index of its frequency-set tuple
    (two raw tuples that differ only outside the quasi-identifiers share one).
    """
    dictionaries = dictionary_codes(grouped.values, list(hierarchies))
    leaf_of, attributes = _attributes(dictionaries, hierarchies)
    matrix = np.empty((len(grouped.counts), len(attributes)), dtype=np.int64)
    for j, leaf in enumerate(leaf_of):
        matrix[:, j] = leaf[dictionaries.codes[:, j]]
    frequency_set, group_tuple = FrequencySet.from_groups(
        matrix, grouped.counts, tuple(a.cardinality(0) for a in attributes)
    )
    return EncodedTable(attributes=attributes, frequency_set=frequency_set), group_tuple


def encode(
    frame: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    *,
    present: Mapping[str, Sequence[str | None]] | None = None,
) -> EncodedTable:
    """Encode the quasi-identifier columns of a table held in memory.

    ``hierarchies`` maps each quasi-identifier (in input order) to a hierarchy
    that already covers every value of its column (see
    :func:`kanonym.hierarchy.resolve`); values are compared as strings, the
    missing value (null) being one value of its own. The frequency set keeps
    each row's tuple (:attr:`FrequencySet.row_tuple`). ``present``: each
    column's distinct values as strings, when already known.

    The result equals :func:`encode_grouped` on the table's grouping (a
    property test holds them to it), but in memory each column is
    dictionary-coded on its rows (:func:`~kanonym.encode.dictionary_codes`)
    and the codes are looked up, packed and grouped by one compiled kernel:
    on adult, where 65 % of the rows are distinct tuples, grouping the raw
    strings first costs twice as much (benchmarks/README.md).
    """
    dictionaries = dictionary_codes(frame, list(hierarchies), present)
    leaf_of, attributes = _attributes(dictionaries, hierarchies)
    frequency_set = FrequencySet.from_lookups(
        dictionaries.codes, leaf_of, tuple(a.cardinality(0) for a in attributes)
    )
    return EncodedTable(attributes=attributes, frequency_set=frequency_set)
