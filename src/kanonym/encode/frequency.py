"""The frequency set: distinct quasi-identifier tuples with their counts.

A frequency set (LeFevre, DeWitt & Ramakrishnan 2005, "Incognito: efficient
full-domain k-anonymity", SIGMOD) holds each distinct combination of
quasi-identifier values once with the number of rows that carry it. Checking a
generalization needs only this set, which is usually far smaller than the
table (adult: 30,162 rows, 19.5k distinct tuples over 9 attributes).

Example:
    >>> import numpy as np
    >>> fs = FrequencySet.from_codes(np.array([[0, 1], [0, 1], [1, 0]]))
    >>> fs.codes.tolist(), fs.counts.tolist(), fs.row_tuple.tolist()
    ([[0, 1], [1, 0]], [2, 1], [0, 0, 1])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from kanonym.encode.grouping import count_hashed

IntArray = npt.NDArray[np.int64]

# Keys stay below 2**62 so that multiplying by one more radix cannot overflow.
KEY_LIMIT = 1 << 62


def pack_codes(
    columns: Sequence[npt.NDArray[np.int64]], radices: Sequence[int]
) -> tuple[IntArray, int]:
    """Pack parallel columns of integer codes into one ``int64`` key per row.

    ``columns[j]`` holds codes in ``range(radices[j])``. Keys are mixed-radix
    numbers; when their product would overflow, the keys packed so far are
    re-numbered densely (``np.unique``) before continuing, so any number of
    columns can be packed. Equal rows get equal keys and different rows
    different keys. Returns the keys and the size of the key space.
    """
    if not columns:
        return np.zeros(0, dtype=np.int64), 1
    keys = np.asarray(columns[0], dtype=np.int64)
    space = max(int(radices[0]), 1)
    for column, radix in zip(columns[1:], radices[1:], strict=True):
        if space * radix >= KEY_LIMIT:
            distinct, keys = np.unique(keys, return_inverse=True)
            keys = keys.astype(np.int64, copy=False).reshape(-1)
            space = max(len(distinct), 1)
        keys = keys * radix + column
        space *= radix
    return keys, space


@njit(cache=True, nogil=True)
def _pack_looked_up(
    codes: npt.NDArray[np.uint32], lookups: IntArray, radices: IntArray, keys: IntArray
) -> None:
    """``keys[i]``: the mixed-radix key of row i's codes ``lookups[j, codes[i, j]]``.

    Looks every column's codes up and packs them in one pass per column, with
    no temporary code matrix (the caller ensures the keys cannot overflow).
    """
    keys[:] = 0
    for j in range(codes.shape[1]):
        column = codes[:, j]
        lookup = lookups[j]
        radix = radices[j]
        for i in range(codes.shape[0]):
            keys[i] = keys[i] * radix + lookup[column[i]]


@njit(cache=True, nogil=True)
def _looked_up_rows(codes: npt.NDArray[np.uint32], lookups: IntArray, rows: IntArray) -> IntArray:
    """The looked-up codes (as in :func:`_pack_looked_up`) of the given rows only."""
    m = codes.shape[1]
    out = np.empty((rows.shape[0], m), dtype=np.int64)
    for t in range(rows.shape[0]):
        for j in range(m):
            out[t, j] = lookups[j, codes[rows[t], j]]
    return out


@dataclass(frozen=True, eq=False)
class FrequencySet:
    """Distinct code tuples, their counts, and each row's tuple.

    Attributes:
        codes: ``(n_tuples, n_qi)`` leaf codes of each distinct tuple, in the
            order the tuples first appear in the rows (not sorted).
        counts: rows per tuple.
        row_tuple: for each input row, the index of its tuple, when an engine
            holding the rows in memory built the set (None otherwise). Only
            row-level steps read it (applying a transformation, local
            recoding); the search, the models and the metrics never do.
        population: when the table is a sample (a research subset) of a
            population table, the population's rows per tuple; the tuples are
            then the population's, and ``counts`` may be 0 for tuples of the
            population absent from the sample (see
            :func:`kanonym.encode.encode_with_population`). None otherwise.
    """

    codes: IntArray
    counts: IntArray
    row_tuple: IntArray | None = None
    population: IntArray | None = None

    @property
    def n_rows(self) -> int:
        """Rows represented."""
        return int(self.counts.sum())

    def rows(self) -> IntArray:
        """Each input row's tuple index.

        Raises:
            ValueError: the engine that built the set keeps no rows in memory.
        """
        if self.row_tuple is None:
            raise ValueError("this frequency set has no row index (its engine keeps the rows)")
        return self.row_tuple

    def row_codes(self, attribute: int) -> IntArray:
        """Leaf code of every input row for one attribute (needs the row index)."""
        return np.ascontiguousarray(self.codes[:, attribute][self.rows()])

    @classmethod
    def from_groups(
        cls, matrix: npt.NDArray[np.int64], counts: IntArray, radices: tuple[int, ...]
    ) -> tuple[FrequencySet, IntArray]:
        """The frequency set of grouped code tuples, and each group's tuple index.

        ``matrix`` holds one row of leaf codes per group of rows (an engine's
        grouping, possibly on more columns than these), ``counts`` its rows.
        Tuples are numbered in the order of their first group.
        """
        keys, _ = pack_codes([matrix[:, j] for j in range(matrix.shape[1])], radices)
        if matrix.shape[1] == 0:
            keys = np.zeros(matrix.shape[0], dtype=np.int64)
        groups = np.arange(len(keys), dtype=np.int64)
        first, tuple_counts, group_tuple = count_hashed(
            keys, np.ascontiguousarray(counts, dtype=np.int64), groups
        )
        return cls(codes=matrix[first], counts=tuple_counts), group_tuple

    @classmethod
    def from_codes(
        cls, matrix: npt.NDArray[np.int64], radices: tuple[int, ...] | None = None
    ) -> FrequencySet:
        """Build the frequency set of an ``(n_rows, n_qi)`` code matrix."""
        if radices is None:
            radices = tuple(int(matrix[:, j].max(initial=-1)) + 1 for j in range(matrix.shape[1]))
        keys, _ = pack_codes([matrix[:, j] for j in range(matrix.shape[1])], radices)
        if matrix.shape[1] == 0:
            keys = np.zeros(matrix.shape[0], dtype=np.int64)
        # Tuples in order of first appearance; hashing beats sorting 10x here.
        rows = np.arange(len(keys), dtype=np.int64)
        first, counts, row_tuple = count_hashed(keys, np.ones_like(rows), rows)
        return cls(codes=matrix[first], counts=counts, row_tuple=row_tuple)

    @classmethod
    def from_lookups(
        cls, codes: npt.NDArray[np.uint32], lookups: Sequence[IntArray], radices: tuple[int, ...]
    ) -> FrequencySet:
        """The frequency set of rows whose code in column j is ``lookups[j][codes[i, j]]``,
        in ``range(radices[j])`` (``codes``: a column-major dictionary-code matrix).

        Equal to :meth:`from_codes` on the looked-up code matrix, which is
        never built: keys are packed straight from ``codes``.
        """
        n, m = codes.shape
        if m == 0 or math.prod(radices) >= KEY_LIMIT:
            matrix = np.empty((n, m), dtype=np.int64, order="F")
            for j in range(m):
                matrix[:, j] = lookups[j][codes[:, j]]
            return cls.from_codes(matrix, radices)
        table = np.zeros((m, max(len(lookup) for lookup in lookups)), dtype=np.int64)
        for j, lookup in enumerate(lookups):
            table[j, : len(lookup)] = lookup
        keys = np.empty(n, dtype=np.int64)
        _pack_looked_up(codes, table, np.asarray(radices, np.int64), keys)
        rows = np.arange(n, dtype=np.int64)
        first, counts, row_tuple = count_hashed(keys, np.ones_like(rows), rows)
        return cls(codes=_looked_up_rows(codes, table, first), counts=counts, row_tuple=row_tuple)
