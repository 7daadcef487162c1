"""The engine seam: every step that reads or writes rows goes through one interface.

kanonym's pipeline runs in one direction: read -> declare -> frequency set ->
search -> transform -> verify -> write + report. Only four of those steps
touch rows, and they are the engine's:

1. **group**: the distinct raw tuples of the quasi-identifiers (and of the
   sensitive columns the models read) with their counts, one ``GROUP BY``
   over the table (:meth:`Engine.group`). It is the only step that reads
   every row before the search. The (small) distinct tuples are then
   dictionary-encoded against the hierarchies into the frequency set
   (:func:`kanonym.encode.encode_grouped`), which is all the search, the
   privacy models, the utility metrics and the lattice ever see.
2. **transform**: apply the transformation the search chose, given as data
   (:class:`Generalization`): per quasi-identifier the level, from which each
   raw value's label follows (:meth:`Generalization.labels`); which
   frequency-set tuples are released (the others are suppressed); the
   identifying columns to drop; the seed of the row shuffle
   (:meth:`Engine.generalize`). A local recoding (Mondrian) is given as the
   labels of each grouped tuple (:class:`TupleRecoding`,
   :meth:`ServerEngine.recode`).
3. **verify**: re-check the released table independently of the search
   (:meth:`Engine.verify` with :mod:`kanonym.verify`; a local recoding:
   :meth:`ServerEngine.verify_recoding`), before anything is written.
4. **write**: the release replaces its destination atomically, after the
   re-check passed.

An engine that can group and join (a database, Spark) can therefore serve the
whole pipeline while the rows stay where they are; the search runs unchanged
on the frequency set. :class:`kanonym.engine.EmbeddedEngine` (Polars and the
compiled kernels, in memory) is the default; :class:`ServerEngine` states what an
engine that keeps the rows where they live (PostgreSQL, Spark) serves besides.

Example:
    >>> import polars as pl
    >>> from kanonym.engine import EmbeddedEngine
    >>> from kanonym.io import load
    >>> engine = EmbeddedEngine(load(pl.DataFrame({"zip": ["02138", "02139", "02138"]})))
    >>> grouped = engine.group(["zip"])
    >>> grouped.values.get_column("zip").to_list(), grouped.counts.tolist()
    (['02138', '02139'], [2, 1])
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.encode import EncodedTable, Grouped
from kanonym.errors import InputError, VerificationError
from kanonym.hierarchy import Hierarchy
from kanonym.verify import ModelDeclaration, verify_models
from kanonym.verify.local import uncovered
from kanonym.verify.models import SensitiveRule, derives_sizes, read
from kanonym.verify.risk import judges_release

BoolArray = npt.NDArray[np.bool_]
# An engine's handle on a release it keeps where the rows are (ServerEngine).
ReleaseT = TypeVar("ReleaseT")
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class Generalization:
    """A full-domain transformation with tuple suppression, as data an engine applies.

    Full-domain generalization (Samarati 2001) replaces every value of a
    quasi-identifier by its ancestor at one hierarchy level; rows of classes
    that fail the models are removed (minimal required suppression, Samarati
    & Sweeney 1998); the rest are released in random order (Sweeney 2002,
    section 4.1: the unsorted matching attack).

    Attributes:
        encoded: the quasi-identifiers' dictionaries and frequency set.
        levels: the chosen level of each quasi-identifier, in ``encoded`` order.
        released: per frequency-set tuple, whether its rows are released.
        drop: columns removed from the release (the identifying ones).
        seed: the seed of the row shuffle.
    """

    encoded: EncodedTable
    levels: tuple[int, ...]
    released: BoolArray
    drop: tuple[str, ...]
    seed: int

    def labels(self, attribute: int) -> dict[str | None, str | None]:
        """Raw value -> released label for one quasi-identifier (what a database joins with).

        Example:
            >>> import numpy as np, polars as pl
            >>> from kanonym.encode import encode
            >>> from kanonym.hierarchy import Hierarchy
            >>> h = Hierarchy("zip", (("02138", "02141"), ("0213*", "0214*"), ("*", "*")))
            >>> enc = encode(pl.DataFrame({"zip": ["02138", "02141"]}), {"zip": h})
            >>> Generalization(enc, (1,), np.ones(2, bool), (), 0).labels(0)
            {'02138': '0213*', '02141': '0214*'}
        """
        a = self.encoded.attributes[attribute]
        level = self.levels[attribute]
        shown = a.level_labels[level]
        pairs = zip(a.level_labels[0], a.level_maps[level].tolist(), strict=True)
        return {leaf: shown[code] for leaf, code in pairs}

    def suppressed_tuples(self) -> list[tuple[str | None, ...]]:
        """The raw quasi-identifier tuples whose rows are suppressed."""
        leaves = [a.level_labels[0] for a in self.encoded.attributes]
        codes = self.encoded.frequency_set.codes[~self.released]
        return [tuple(leaves[j][c] for j, c in enumerate(row)) for row in codes.tolist()]


@dataclass(frozen=True, eq=False)
class TupleRecoding:
    """A local recoding with nothing suppressed, as data an engine applies.

    Local recoding (Mondrian: LeFevre, DeWitt & Ramakrishnan 2006) labels rows
    class by class, so equal values may be released differently and no
    mapping per value exists. The partitioning runs on the engine's grouping
    of the quasi-identifiers and the sensitive columns the models read
    (:meth:`kanonym.recoding.Mondrian.partition_grouped`) and says, per
    grouped tuple, which labels its rows get. Tuples equal in every code the
    partitioning read form a *unit* (two spellings of one number, ``5`` and
    ``5.0``, are one); a unit's rows get one set of labels, unless relaxed cuts
    split it: then its rows are ranked by the columns the release keeps, in
    input order, compared as text byte by byte (PostgreSQL's ``COLLATE "C"``,
    Spark's binary strings) with the missing value first, and its *pieces*
    take them in that order (the rule :func:`kanonym.transform.recode` follows
    in memory). Identical rows are interchangeable, so every engine releases
    one multiset. The engine joins the input with :attr:`tuples` on the raw
    key values (the missing value equal to itself), ranks the rows of split
    units, labels every row, drops the identifying columns and shuffles the
    rows by the seed.

    Attributes:
        names: the quasi-identifiers, in order; column ``label(j)`` of
            :attr:`tuples` and :attr:`pieces` holds the label of ``names[j]``.
        keys: the columns tuples are told apart by: the quasi-identifiers,
            then the sensitive columns the partitioning read; column
            ``key(i)`` of :attr:`tuples` holds ``keys[i]``.
        tuples: one row per distinct raw tuple of ``keys`` (values as
            strings, the missing value null): its keys, its unit (``UNIT``),
            whether the unit is split (``SPLIT``) and, if it is not, its labels.
        pieces: per piece of a split unit: the unit (``UNIT``), the ranks of
            its rows in the unit (``FIRST`` to ``LAST``, counted from 1) and
            its labels.
        numeric: the quasi-identifiers labelled by numeric ranges (the others
            by hierarchy nodes): how the re-check reads their labels.
        drop: columns removed from the release (the identifying ones).
        seed: the seed of the row shuffle.
    """

    UNIT = "_kanonym_unit"
    SPLIT = "_kanonym_split"
    FIRST = "_kanonym_first"
    LAST = "_kanonym_last"

    names: tuple[str, ...]
    keys: tuple[str, ...]
    tuples: pl.DataFrame
    pieces: pl.DataFrame
    numeric: frozenset[str]
    drop: tuple[str, ...]
    seed: int

    @staticmethod
    def key(i: int) -> str:
        """The column of :attr:`tuples` holding ``keys[i]``."""
        return f"_kanonym_key_{i}"

    @staticmethod
    def label(j: int) -> str:
        """The column of :attr:`tuples` and :attr:`pieces` holding the label of ``names[j]``."""
        return f"_kanonym_label_{j}"

    def ranked(self, columns: Sequence[str]) -> list[str]:
        """The columns the rows of a split unit are compared by: the input's ``columns``
        the release keeps, in order, less the keys that hold one value throughout a unit
        (all but the numeric quasi-identifiers, whose unit may hold two spellings of a
        number): leaving out columns equal within the unit changes no ranking. Never
        empty for a split unit: only cuts along a numeric quasi-identifier split units.

        Example:
            >>> plan = TupleRecoding(("age", "zip"), ("age", "zip"), pl.DataFrame(),
            ...                      pl.DataFrame(), frozenset({"age"}), ("name",), 0)
            >>> plan.ranked(["name", "age", "zip", "visits"])
            ['age', 'visits']
        """
        equal = set(self.keys) - self.numeric
        return [c for c in columns if c not in self.drop and c not in equal]


@dataclass(frozen=True, eq=False)
class Released:
    """A transformed table, not yet verified nor written.

    Attributes:
        table: the released rows.
        source_rows: for each released row, the input row it comes from (the
            verifier compares every released row with its source; never written).
    """

    table: pl.DataFrame
    source_rows: IntArray


@dataclass(frozen=True, eq=False)
class Expected:
    """What the independent re-check holds a release to (:meth:`Engine.verify`).

    Attributes:
        hierarchies: each quasi-identifier's hierarchy, to check every released
            label against its input value at the chosen level.
        k: the smallest class size allowed.
        suppressed_rows: the rows the search says the release suppresses
            (the count the report states).
        max_suppressed_rows: the suppression limit.
        models: the privacy models, as declarations the re-check reads
            (:class:`kanonym.verify.ModelDeclaration`), checked by its own
            definitions.
        population: when the input is a sample of a population table, the
            population's classes at the release's levels, generalized by the
            re-check's own code
            (:func:`kanonym.verify.population.population_classes`), for the
            models that read it.
    """

    hierarchies: Mapping[str, Hierarchy]
    k: int
    suppressed_rows: int
    max_suppressed_rows: int
    models: Sequence[ModelDeclaration]
    population: pl.DataFrame | None = None


class Engine(Protocol):
    """Where the rows live and how they are read, grouped, transformed and checked.

    Contract: :meth:`group` is exact (no sampling, missing values form a
    value of their own, values compared as strings); :meth:`encode` returns a
    frequency set whose counts sum to :attr:`rows`; :meth:`generalize`
    releases exactly the rows of the released tuples, each quasi-identifier
    replaced by its label, the dropped columns absent, the order a seeded
    permutation; nothing is written before :func:`kanonym.verify` passed.
    """

    @property
    def name(self) -> str:
        """The engine's name (``embedded``)."""
        ...

    @property
    def source(self) -> str:
        """The input, as messages name it (a path, or ``<DataFrame>``)."""
        ...

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        ...

    @property
    def rows(self) -> int:
        """The input's number of rows."""
        ...

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as strings (to build or check its hierarchy)."""
        ...

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct raw tuples of ``columns`` with their counts (one pass over the rows)."""
        ...

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers grouped, then encoded into the frequency set."""
        ...

    def generalize(self, plan: Generalization) -> Released:
        """Apply a full-domain generalization with tuple suppression (not yet verified)."""
        ...

    def verify(self, released: Released, plan: Generalization, expected: Expected) -> None:
        """Re-check ``released`` against its input with :mod:`kanonym.verify` (which shares
        no code with the search, the models or the encoding).

        Raises:
            VerificationError: a released row does not match its input at the
                chosen levels, a class is below k, the suppression differs from
                ``expected``, or a model fails by its definition.
        """
        ...


class ServerEngine(Protocol[ReleaseT]):
    """An engine whose rows stay where they live (a database, a Spark cluster).

    It serves the same steps as :class:`Engine`, but the release it builds
    stays there too: :meth:`generalize` returns a handle (a temporary table, a
    lazy DataFrame), :meth:`verify` re-checks it where it is, and only what is
    asked for leaves: :meth:`counts` (small aggregates for the report),
    :meth:`fetch` (every row, for a file written by kanonym or the API's
    ``Result.table``), :meth:`publish` (the engine's own output: a table in
    the same database, Parquet through Spark's commit protocol). Contract as
    :class:`Engine`'s, and: nothing is visible to other readers before
    :meth:`publish` returns, and :meth:`close` discards what was not published.
    """

    @property
    def name(self) -> str:
        """The engine's name (``postgres``, ``spark``)."""
        ...

    @property
    def source(self) -> str:
        """The input as messages name it (credentials redacted)."""
        ...

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        ...

    @property
    def rows(self) -> int:
        """The input's number of rows."""
        ...

    def require(self, names: Sequence[str]) -> None:
        """Raise :class:`~kanonym.errors.InputError` naming the first of ``names`` the
        input lacks."""
        ...

    def distinct(self, *columns: str) -> dict[str, list[str | None]]:
        """The distinct values of ``columns`` as strings (one pass where the engine can)."""
        ...

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as strings."""
        ...

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct raw tuples of ``columns`` (as strings) with their counts."""
        ...

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers grouped where the rows are, then encoded locally."""
        ...

    def generalize(self, plan: Generalization) -> ReleaseT:
        """Build the release where the rows are (not yet verified, not yet visible)."""
        ...

    def verify(self, released: ReleaseT, plan: Generalization, expected: Expected) -> None:
        """Re-check the release where it is, independently of the mapping that built it.

        Raises:
            VerificationError: as :meth:`Engine.verify`.
        """
        ...

    def recode(self, plan: TupleRecoding) -> ReleaseT:
        """Build a local recoding's release where the rows are (not yet verified, not yet
        visible): every row labelled as ``plan`` says, none suppressed."""
        ...

    def verify_recoding(self, released: ReleaseT, plan: TupleRecoding, expected: Expected) -> None:
        """Re-check a local recoding's release where it is, independently of ``plan``'s
        tuples: every input row released once, each label covering its row's own input
        value (a range holding the number, or the value or an ancestor in its hierarchy),
        no class below k, and every model on sensitive values.

        Raises:
            VerificationError: naming the first failure.
        """
        ...

    def counts(self, released: ReleaseT, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` in the release with their counts (the
        report's class sizes and distributions, without the rows)."""
        ...

    def fetch(self, released: ReleaseT) -> pl.DataFrame:
        """Every released row, as text columns, copied out in bulk."""
        ...

    def publishes(self, destination: str) -> bool:
        """Whether :meth:`publish` writes ``destination`` (a table of this database,
        Parquet through Spark's writer); other destinations are files kanonym writes from
        :meth:`fetch`."""
        ...

    def publish(self, released: ReleaseT, destination: str, *, replace: bool) -> None:
        """Make the verified release the engine's own output at ``destination``, all at
        once (one transaction, a commit protocol); an existing destination is refused
        unless ``replace``.

        Raises:
            InputError: ``destination`` is not one this engine writes, exists
                and ``replace`` is false, or cannot be written (nothing is left).
        """
        ...

    def close(self) -> None:
        """Discard whatever was not published and release the connection or session."""
        ...


def verify_covering(
    source: str,
    pairs: Sequence[Sequence[tuple[str | None, str | None]]],
    plan: TupleRecoding,
    expected: Expected,
) -> None:
    """Re-check a local recoding's labels on the distinct (label, input value) pairs of its
    release, ``pairs[j]`` for quasi-identifier ``plan.names[j]``, as the in-memory re-check
    does (:func:`kanonym.verify.local.uncovered`): a numeric range must hold the number, any
    other label must be the value or an ancestor of it in the column's hierarchy.

    Raises:
        VerificationError: naming the column, the label and the value.

    Example:
        >>> plan = TupleRecoding(("age",), ("age",), pl.DataFrame(), pl.DataFrame(),
        ...                      frozenset({"age"}), (), 0)
        >>> verify_covering("t", [[("30-39", "41")]], plan, Expected({}, 2, 0, 0, ()))
        Traceback (most recent call last):
        ...
        kanonym.errors.VerificationError: t: column 'age': the released label '30-39' does \
not cover the input value '41'
    """
    for name, found in zip(plan.names, pairs, strict=True):
        hierarchy = expected.hierarchies.get(name)
        wrong = uncovered(found, numeric=name in plan.numeric, hierarchy=hierarchy)
        if wrong:
            label, value = wrong[0]
            raise VerificationError(
                f"{source}: column '{name}': the released label {label!r} does not cover the "
                f"input value {value!r}"
            )


def sensitive_columns(models: Sequence[ModelDeclaration]) -> list[str]:
    """The sensitive columns the models read (each once, in order), as the re-check reads
    the declarations (:func:`kanonym.verify.models.read`)."""
    rules = [read(model) for model in models]
    return list(dict.fromkeys(r.attribute for r in rules if isinstance(r, SensitiveRule)))


def verify_counted_models(
    engine: ServerEngine[ReleaseT], released: ReleaseT, names: Sequence[str], expected: Expected
) -> None:
    """Re-check the models that read sensitive values on counts taken where the rows live:
    the release grouped on the quasi-identifiers and the sensitive columns, the input on the
    sensitive columns (two ``GROUP BY``), judged by :func:`kanonym.verify.verify_models`'s
    own definitions. A release with no such model costs nothing.

    Raises:
        VerificationError: a class fails a model.
    """
    attributes = sensitive_columns(expected.models)
    if (
        not attributes
        and expected.population is None
        and not derives_sizes(expected.models)
        and not judges_release(expected.models)
    ):
        return
    weight = "kanonym_rows"
    counted = engine.counts(released, [*names, *attributes])
    source = engine.group(attributes)
    verify_models(
        counted.values.with_columns(pl.Series(weight, counted.counts, pl.Int64)),
        columns=names,
        source=source.values.with_columns(pl.Series(weight, source.counts, pl.Int64)),
        models=expected.models,
        weight=weight,
        population=expected.population,
    )


@dataclass(frozen=True, eq=False)
class ServerRelease:
    """A verified release kept where the rows live, with the engine that holds it.

    What the result and its report need comes out as aggregates
    (:meth:`counts`); every row only when asked (:meth:`frame`: the API's
    ``Result.table``, a file kanonym writes itself), and :meth:`publish`
    makes it the engine's own output without the rows leaving. The engine's
    connection or session stays open until :meth:`close` (or until this
    object is garbage-collected).

    Attributes:
        engine: the engine that built and verified it.
        handle: the engine's own handle on it (a temporary table, a DataFrame).
        columns: the released columns, in order.
        rows: the number of released rows.
    """

    engine: ServerEngine[Any]
    handle: object
    columns: tuple[str, ...]
    rows: int

    def __post_init__(self) -> None:
        # A release nobody closes still ends its connection (and discards itself).
        weakref.finalize(self, self.engine.close)

    @functools.cached_property
    def _frame(self) -> pl.DataFrame:
        self._require_open()
        return self.engine.fetch(self.handle)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ended the engine's hold on the release."""
        return bool(self.__dict__.get("_closed", False))

    def _require_open(self) -> None:
        if self.closed:
            raise InputError(
                "the release was closed (Result.close, or the end of its `with` block): "
                "read or write it before closing"
            )

    def frame(self) -> pl.DataFrame:
        """Every released row, copied out once (text columns, in the shuffled order)."""
        return self._frame

    def counts(self, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` in the release, with their counts."""
        self._require_open()
        return self.engine.counts(self.handle, columns)

    def publishes(self, destination: str) -> bool:
        """Whether the engine writes ``destination`` itself (:meth:`ServerEngine.publishes`)."""
        return self.engine.publishes(destination)

    def publish(self, destination: str, *, replace: bool) -> None:
        """Make the release the engine's own output at ``destination``
        (:meth:`ServerEngine.publish`)."""
        self._require_open()
        self.engine.publish(self.handle, destination, replace=replace)

    def close(self) -> None:
        """Discard whatever was not published; end the connection or session. The rows
        read before (:meth:`frame`) stay readable."""
        self.__dict__["_closed"] = True
        self.engine.close()
