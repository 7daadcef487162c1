"""The complementary release attack: releases of one table linked, k checked (Sweeney 2002).

Sweeney ("k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002,
section 4.2, Example 6) shows two 2-anonymous releases GT1 and GT3 of one
private table that, linked on the attribute they share outside the
quasi-identifier (Problem), reveal a table LT in which [white, 1964, male,
02138] and [white, 1965, female, 02139] are unique. :func:`audit` performs that
linking on any set of releases:

1. the releases are joined on every column they all share that is not a
   quasi-identifier (the *join columns*; equal values match, the missing value
   matches only itself);
2. a joined combination is kept only when, for every quasi-identifier, its
   values lie on one root path of the hierarchy (one is the other or one of
   its generalizations; the root ``*`` is compatible with everything);
3. each kept combination is *refined*: per quasi-identifier, the most specific
   of its values, which is what the attacker learns about that record;
4. the refined table is grouped into classes (equal refined tuples) and each
   class counts its *records*: for every release, the distinct rows of that
   release linked into the class, and the least of these counts (one person
   is one row in every release, so a class cannot hold more people than
   that). A class with fewer than k records breaks k-anonymity.

A quasi-identifier absent from a release is unknown there: its value is the
hierarchy's root. Values are compared as text.

The refined values of classes below k are exactly what must not be disclosed,
so :meth:`AuditResult.as_dict` (what ``kanonym audit --json`` prints) shows each
such class only *generalized*: per quasi-identifier, the most general value
the releases published for its linked rows, which every release already
discloses.

Everything is vectorized: releases are first reduced to their distinct tuples
with counts, so the joins grow with distinct tuples rather than rows, and
compatibility is a join against a per-quasi-identifier table of (value,
ancestor) pairs.

Example (Sweeney's Figure 5 in two rows per release):
    >>> from kanonym.hierarchy import Hierarchy
    >>> race = Hierarchy("race", (("black", "white"), ("person", "person")))
    >>> gt1 = pl.DataFrame({"race": ["person", "white"], "problem": ["flu", "cough"]})
    >>> gt3 = pl.DataFrame({"race": ["white", "white"], "problem": ["flu", "cough"]})
    >>> result = audit([gt1, gt3], {"race": race}, k=2)
    >>> result.join_columns, result.classes.rows(), result.k_anonymous
    (('problem',), [('white', 2)], True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from kanonym.errors import HierarchyError, InputError
from kanonym.hierarchy import Hierarchy, HierarchyBuilder, parse_hierarchy
from kanonym.hierarchy._values import show
from kanonym.io import load

if TYPE_CHECKING:
    import pandas

RECORDS = "records"
"""Column of :attr:`AuditResult.classes` holding each class's record count."""
CLASSES = "classes"
"""Column of :attr:`AuditResult.below_k` holding how many classes below k it covers."""
_PREFIX = "__kanonym_"
"""Prefix of the audit's working columns; release columns may not use it."""
_VALUE, _ANCESTOR, _HIT = f"{_PREFIX}value", f"{_PREFIX}ancestor", f"{_PREFIX}hit"


def ancestor_pairs(hierarchy: Hierarchy) -> pl.DataFrame:
    """Every (value, ancestor) pair of ``hierarchy``: the value or one of its generalizations.

    Columns ``value`` and ``ancestor`` (String), one row per distinct pair, over
    the labels of every level (a label repeated on several levels, as in ARX
    files where a value generalizes to itself, is one value). Two values are on
    one root path exactly when one of the two orders is a pair.

    Example:
        >>> h = Hierarchy("zip", (("02138", "02139"), ("0213*", "0213*"), ("*", "*")))
        >>> sorted(ancestor_pairs(h).filter(pl.col("value") == "02138").rows())
        [('02138', '*'), ('02138', '0213*'), ('02138', '02138')]
    """
    levels = [pl.Series(level, dtype=pl.String) for level in hierarchy.levels]
    # A label's generalizations are the labels above it in its leaves' rows;
    # the loop runs over pairs of levels, each step vectorized over the leaves.
    return (
        pl.concat(
            pl.DataFrame({"value": levels[low], "ancestor": levels[high]})
            for low in range(len(levels))
            for high in range(low, len(levels))
        )
        .unique()
        .sort("value", "ancestor", nulls_last=True)
    )


@dataclass(frozen=True, kw_only=True, eq=False)
class AuditResult:
    """The releases linked, refined and checked for k-anonymity.

    Attributes:
        k: the k checked.
        releases: the releases' names (file paths, or ``<DataFrame>``).
        columns: the quasi-identifiers' column names, as given.
        join_columns: the columns every release shares outside the quasi-identifier.
        linked_rows: combinations of one row per release that link (rows of
            Sweeney's LT).
        classes: the refined classes: one column per quasi-identifier (the
            refined values, raw: for the data holder's eyes only) and
            ``records``, the class's record count.
        below_k: the classes with fewer than k records, generalized: one column
            per quasi-identifier (the most general value published for the
            class's linked rows) and ``classes``, how many classes below k
            show as that tuple.
    """

    k: int
    releases: tuple[str, ...]
    columns: tuple[str, ...]
    join_columns: tuple[str, ...]
    linked_rows: int
    classes: pl.DataFrame
    below_k: pl.DataFrame

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InputError(f"k must be a whole number >= 1, got {self.k!r}")
        if len(self.releases) < 2:
            raise InputError(f"an audit links at least two releases, got {len(self.releases)}")
        if self.classes.columns != [*self.columns, RECORDS]:
            raise InputError(f"classes must have the columns {[*self.columns, RECORDS]}")
        if self.below_k.columns != [*self.columns, CLASSES]:
            raise InputError(f"below_k must have the columns {[*self.columns, CLASSES]}")
        if self.linked_rows < 0:
            raise InputError(f"linked_rows must be >= 0, got {self.linked_rows}")

    @property
    def classes_below_k(self) -> int:
        """Refined classes with fewer than k records."""
        return int(self.classes.filter(pl.col(RECORDS) < self.k).height)

    @property
    def records_below_k(self) -> int:
        """Records in refined classes with fewer than k records."""
        return int(self.classes.filter(pl.col(RECORDS) < self.k)[RECORDS].sum())

    @property
    def smallest_class(self) -> int | None:
        """Records in the smallest refined class (None when nothing links)."""
        smallest = self.classes[RECORDS].min()
        return None if smallest is None else int(smallest)  # type: ignore[arg-type]

    @property
    def k_anonymous(self) -> bool:
        """No refined class has fewer than k records (Sweeney 2002, Definition 3, on LT)."""
        return self.classes_below_k == 0

    def as_dict(self) -> dict[str, object]:
        """JSON-ready summary; classes below k appear only generalized, never refined."""
        return {
            "k": self.k,
            "releases": list(self.releases),
            "columns": list(self.columns),
            "join_columns": list(self.join_columns),
            "linked_rows": self.linked_rows,
            "classes": self.classes.height,
            "smallest_class": self.smallest_class,
            "classes_below_k": self.classes_below_k,
            "records_below_k": self.records_below_k,
            "k_anonymous": self.k_anonymous,
            "below_k": [
                {"class": {q: row[q] for q in self.columns}, CLASSES: row[CLASSES]}
                for row in self.below_k.iter_rows(named=True)
            ],
        }


def audit(
    releases: Sequence[str | Path | pl.DataFrame | pandas.DataFrame],
    quasi_identifiers: Mapping[str, Hierarchy | HierarchyBuilder | str | Path],
    *,
    k: int,
    delimiter: str | None = None,
    base_dir: Path | None = None,
) -> AuditResult:
    """Link ``releases`` on their shared non-quasi-identifier columns and check k.

    ``releases`` are files (CSV or Parquet, as :func:`kanonym.io.load` reads
    them) or DataFrames; ``quasi_identifiers`` maps each quasi-identifier to its
    hierarchy: a :class:`~kanonym.hierarchy.Hierarchy`, an ARX file, or the
    builders ``mask`` and ``suppress``, which are rebuilt from the released
    values (masking or suppressing a released value yields its own
    generalizations). ``interval`` and ``date`` hierarchies cannot be rebuilt
    from generalized labels: give them as ARX files.

    Raises:
        InputError: fewer than two releases, k < 1, a quasi-identifier in no
            release, no shared column to join on, a column named with the
            reserved prefix ``__kanonym_``, a quasi-identifier named
            ``records`` or ``classes``, or a hierarchy that cannot be rebuilt.
        HierarchyError: a released value is not in its hierarchy at any level.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"`k` must be a whole number >= 1, got {k!r}")
    if len(releases) < 2:
        raise InputError(f"an audit links at least two releases, got {len(releases)}")
    if not quasi_identifiers:
        raise InputError(
            "at least one quasi-identifier is required: `quasi_identifiers` maps each to its "
            "hierarchy"
        )
    qis = tuple(quasi_identifiers)
    for name in (RECORDS, CLASSES):
        if name in qis:
            raise InputError(f"quasi-identifier '{name}' clashes with the audit's '{name}' count")
    tables = [load(data, delimiter=delimiter) for data in releases]
    frames: list[pl.DataFrame] = []
    for table in tables:
        reserved = [c for c in table.frame.columns if c.startswith(_PREFIX)]
        if reserved:
            raise InputError(f"{table.source}: column '{reserved[0]}' uses the reserved prefix")
        try:
            # Values are compared as text, as kanonym check compares them.
            frames.append(table.frame.with_columns(pl.all().cast(pl.String)))
        except pl.exceptions.PolarsError as error:
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise InputError(
                f"{table.source}: a column cannot be read as text ({message})"
            ) from None
    sources = tuple(table.source for table in tables)
    for name in qis:
        if not any(name in frame.columns for frame in frames):
            raise InputError(f"quasi-identifier '{name}' is in none of the releases {sources}")
    shared = set(frames[0].columns).intersection(*(f.columns for f in frames[1:])) - set(qis)
    join = tuple(c for c in frames[0].columns if c in shared)
    hierarchies = {
        name: [_audit_hierarchy(name, spec, frames, sources, base_dir)]
        for name, spec in quasi_identifiers.items()
    }
    result = link(frames, sources, hierarchies, k, join=join)
    if result.linked_rows == 0:
        # Releases of one table that share columns link unless a column they are
        # joined on was generalized by one of them: a quasi-identifier left out.
        raise InputError(
            f"nothing linked: no row of {sources[0]} matches a row of the other releases on "
            f"{', '.join(join)}; if one of these columns was generalized or suppressed by a "
            "release, it is a quasi-identifier: name it with its hierarchy (an audit that "
            "links nothing proves nothing)"
        )
    return result


def link(
    frames: Sequence[pl.DataFrame],
    sources: Sequence[str],
    hierarchies: Mapping[str, Sequence[Hierarchy]],
    k: int,
    *,
    join: Sequence[str],
    classes_on: Sequence[str] | None = None,
) -> AuditResult:
    """Link released tables (values as text) and check k on the linked table.

    The core of :func:`audit`, for callers that hold the releases and their
    hierarchies already (the ledger). ``hierarchies`` gives, per
    quasi-identifier, every hierarchy the releases generalized it with: one,
    or several whose labels nest (:func:`nested_pairs`). ``join`` are the
    columns rows are matched on by equality; a quasi-identifier among them
    (released exactly by every release) is matched by equality. The classes
    are split by ``classes_on`` (default: every quasi-identifier): columns the
    attacker can tie to identities; the others only have to be compatible.

    Raises:
        InputError: no join column, or hierarchies whose labels cross.
        HierarchyError: a released value is in none of its hierarchies.
    """
    if not join:
        raise InputError(
            f"the releases {list(sources)} share no column outside the quasi-identifier "
            "to link them on"
        )
    qis = tuple(hierarchies)
    pairs = {
        name: ancestor_pairs(found[0]) if len(found) == 1 else nested_pairs(found, column=name)
        for name, found in hierarchies.items()
    }
    roots = {name: found[0].levels[-1][0] for name, found in hierarchies.items()}
    names = {
        name: " + ".join(dict.fromkeys(h.name for h in found))
        for name, found in hierarchies.items()
    }
    completed = [
        _complete(frame, source, roots, names, pairs)
        for frame, source in zip(frames, sources, strict=True)
    ]
    split = qis if classes_on is None else tuple(classes_on)
    return _link(completed, tuple(sources), qis, tuple(join), pairs, k, split)


def leaf_covers(hierarchies: Sequence[Hierarchy]) -> pl.DataFrame:
    """Every distinct (leaf, label) pair of ``hierarchies``: the label generalizes the leaf.

    Example:
        >>> h = Hierarchy("sex", (("F", "M"), ("*", "*")))
        >>> sorted(leaf_covers([h]).rows())
        [('F', '*'), ('F', 'F'), ('M', '*'), ('M', 'M')]
    """
    return pl.concat(
        pl.DataFrame(
            {
                "leaf": pl.Series(h.levels[0], dtype=pl.String),
                "label": pl.Series(level, dtype=pl.String),
            }
        )
        for h in hierarchies
        for level in h.levels
    ).unique()


def nested_pairs(hierarchies: Sequence[Hierarchy], *, column: str) -> pl.DataFrame:
    """(value, ancestor) pairs of several hierarchies of one attribute, by the leaves they cover.

    A label covers the leaves it generalizes, in whichever hierarchy it
    appears (the same label in two hierarchies covers the union). Labels whose
    leaf sets nest form one hierarchy again, and ``ancestor`` is a label whose
    leaves include ``value``'s; the releases of a growing table, each with a
    ``date`` or ``mask`` hierarchy built on its own values, nest that way.
    Labels that cross (``0-9`` and ``5-14``) cannot be linked by refinement.
    Two labels covering the same leaves are each other's ancestor: they say
    the same about a record.

    Raises:
        InputError: two labels cover overlapping but not nested sets of leaves.

    Example:
        >>> old = Hierarchy("date", (("1961-03-25",), ("1961",), ("*",)))
        >>> new = Hierarchy("date", (("1961-03-25", "1961-07-01"), ("1961-03", "1961-07"),
        ...                          ("1961", "1961"), ("*", "*")))
        >>> pairs = nested_pairs([old, new], column="birth")
        >>> sorted(pairs.filter(pl.col("value") == "1961").get_column("ancestor"))
        ['*', '1961']
    """
    covers = leaf_covers(hierarchies)
    sizes = covers.group_by("label").agg(pl.len().alias("size"))
    shared = (
        covers.join(covers, on="leaf", suffix="_above", nulls_equal=True)
        .group_by("label", "label_above")
        .agg(pl.len().alias("shared"))
        .join(sizes, on="label", nulls_equal=True)
        .join(
            sizes.rename({"label": "label_above", "size": "size_above"}),
            on="label_above",
            nulls_equal=True,
        )
    )
    crossing = shared.filter(
        (pl.col("shared") != pl.col("size")) & (pl.col("shared") != pl.col("size_above"))
    )
    if crossing.height:
        first = crossing.sort("label", "label_above", nulls_last=True).row(0, named=True)
        raise InputError(
            f"column '{column}': the hierarchies the releases used overlap without nesting "
            f"(labels {show(first['label'])} and {show(first['label_above'])} share some "
            "values but not all), so their releases cannot be linked by refinement; use one "
            "hierarchy for the column in every release"
        )
    return (
        shared.filter(pl.col("shared") == pl.col("size"))
        .select(pl.col("label").alias("value"), pl.col("label_above").alias("ancestor"))
        .unique()
        .sort("value", "ancestor", nulls_last=True)
    )


def _audit_hierarchy(
    name: str,
    spec: Hierarchy | HierarchyBuilder | str | Path,
    frames: Sequence[pl.DataFrame],
    sources: Sequence[str],
    base_dir: Path | None,
) -> Hierarchy:
    parsed = parse_hierarchy(str(spec), base_dir=base_dir) if isinstance(spec, str | Path) else spec
    if isinstance(parsed, Hierarchy):
        return parsed
    values = pl.concat([f.get_column(name) for f in frames if name in f.columns]).unique().to_list()
    where = " + ".join(sources)
    try:
        return parsed.build(values, column=name, source=where)
    except HierarchyError:
        raise
    except InputError as error:
        raise InputError(
            f"{error}; hierarchy {parsed.spec} of '{name}' cannot be rebuilt from released "
            "values: give it as an ARX file"
        ) from None


def _complete(
    frame: pl.DataFrame,
    source: str,
    roots: Mapping[str, str | None],
    names: Mapping[str, str],
    pairs: Mapping[str, pl.DataFrame],
) -> pl.DataFrame:
    """Add absent quasi-identifiers as the root; check every value is in its hierarchy."""
    for name, root in roots.items():
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(root, dtype=pl.String).alias(name))
            continue
        known = pairs[name].select(pl.col("value").alias(name)).unique()
        unknown = frame.select(name).unique().join(known, on=name, how="anti", nulls_equal=True)
        if unknown.height:
            first = unknown.sort(name, nulls_last=True)[name][0]
            raise HierarchyError(
                f"{source}: column '{name}': value {show(first)} is not in hierarchy "
                f"{names[name]} at any level"
            )
    return frame


def _on_path(
    frame: pl.DataFrame, pairs: pl.DataFrame, low: str, high: str, flag: str
) -> pl.DataFrame:
    """Add boolean column ``flag``: the value in ``high`` is ``low``'s value or above it."""
    marked = pairs.rename({"value": _VALUE, "ancestor": _ANCESTOR}).with_columns(
        pl.lit(True).alias(_HIT)
    )
    return (
        frame.join(
            marked, left_on=[low, high], right_on=[_VALUE, _ANCESTOR], how="left", nulls_equal=True
        )
        .with_columns(pl.col(_HIT).fill_null(False).alias(flag))
        .drop(_HIT)
    )


def _link(
    frames: Sequence[pl.DataFrame],
    sources: tuple[str, ...],
    qis: tuple[str, ...],
    join: tuple[str, ...],
    pairs: Mapping[str, pl.DataFrame],
    k: int,
    split: tuple[str, ...],
) -> AuditResult:
    tid = [f"{_PREFIX}tuple{i}" for i in range(len(frames))]
    count = [f"{_PREFIX}rows{i}" for i in range(len(frames))]
    # A quasi-identifier that is also a join column is equal in every linked
    # combination: nothing to refine, but it still splits the classes.
    refined = tuple(q for q in qis if q not in join)
    coarse = {q: f"{_PREFIX}coarse_{q}" for q in refined}
    new = {q: f"{_PREFIX}new_{q}" for q in refined}
    low, high = f"{_PREFIX}low", f"{_PREFIX}high"
    # Each release as its distinct (join, quasi-identifier) tuples with their row counts.
    tuples = [
        frame.group_by([*join, *refined])
        .agg(pl.len().alias(count[i]))
        .with_row_index(tid[i])
        .with_columns(pl.col(tid[i]).cast(pl.Int64))
        for i, frame in enumerate(frames)
    ]
    combined = tuples[0].with_columns(pl.col(q).alias(coarse[q]) for q in refined)
    for step in tuples[1:]:
        combined = combined.join(step.rename(new), on=list(join), how="inner", nulls_equal=True)
        for q in refined:
            # Refine to the lower value when the two lie on one root path, and keep
            # the higher of the new value and the most general one so far.
            combined = _on_path(combined, pairs[q], new[q], q, low)
            combined = _on_path(combined, pairs[q], q, new[q], high)
            combined = combined.filter(pl.col(low) | pl.col(high)).with_columns(
                pl.when(pl.col(low)).then(pl.col(new[q])).otherwise(pl.col(q)).alias(q)
            )
            combined = _on_path(combined, pairs[q], coarse[q], new[q], high)
            combined = combined.with_columns(
                pl.when(pl.col(high))
                .then(pl.col(new[q]))
                .otherwise(pl.col(coarse[q]))
                .alias(coarse[q])
            ).drop(new[q], low, high)
    linked_rows = int(
        combined.select(pl.fold(pl.lit(1, pl.Int64), lambda a, b: a * b, count).sum()).item() or 0
    )
    classes = _records(combined, split, tid, count)
    below = classes.filter(pl.col(RECORDS) < k).select(split)
    shown = [coarse.get(q, q) for q in split]
    below_k = (
        combined.join(below, on=list(split), how="semi", nulls_equal=True)
        .group_by(shown)
        .agg(pl.struct(list(split)).n_unique().alias(CLASSES))
        .rename({coarse[q]: q for q in split if q in coarse})
        .select(*split, pl.col(CLASSES).cast(pl.Int64))
        .sort(split, nulls_last=True)
    )
    return AuditResult(
        k=k,
        releases=sources,
        columns=split,
        join_columns=join,
        linked_rows=linked_rows,
        classes=classes,
        below_k=below_k,
    )


def _records(
    combined: pl.DataFrame, qis: tuple[str, ...], tid: Sequence[str], count: Sequence[str]
) -> pl.DataFrame:
    """Per refined class, the least over releases of the distinct rows linked into it."""
    per_release = [
        combined.select(*qis, t, n).unique().group_by(qis).agg(pl.col(n).sum())
        for t, n in zip(tid, count, strict=True)
    ]
    classes = per_release[0]
    for part in per_release[1:]:
        classes = classes.join(part, on=list(qis), how="inner", nulls_equal=True)
    return classes.select(*qis, pl.min_horizontal(*count).cast(pl.Int64).alias(RECORDS)).sort(
        qis, nulls_last=True
    )
