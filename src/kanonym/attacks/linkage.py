"""The linking attack: match identified records against a release (``kanonym link``).

Sweeney (2002, section 1, Figure 1) re-identified the Governor of Massachusetts
by linking medical data to a voter list on ZIP code, birth date and sex;
Samarati's slides (2008) show the same with Sue J. Doe, the only divorced
woman born 64/04/12 living in 94142. This module mounts that attack on any
release: every row of an external table (an *identity*, e.g. a named voter) is
compared with every released row on pairs of columns (external column, release
column), and the released rows it matches are counted.

A released cell matches an external value when it is

* ``*`` (a suppressed cell), whatever the value;
* for a column with a hierarchy, the value itself or any of its
  generalizations at any level (a generalized value matches every raw value it
  covers); a released value at no level of the hierarchy matches no value;
* for a column without one, the same text.

The missing value is an ordinary value: it matches itself (and its
generalizations), never another value. Values are compared as text. An external
value absent from its column's hierarchy is an error (the attacker's data must
be expressible in the release's terms).

A compared release column given no hierarchy must hold raw values: a
generalized label (``30-39``, ``021**``, ``1964``) matches no raw value, so
every identity would match nothing and the attack would look like a success
of the release. Such a column is refused (:class:`GeneralizedReleaseError`,
asking for its hierarchy) when some of its released values look generalized
and the external column never holds them (:func:`generalized_labels`: a range,
an interval, a bound or a value with ``*`` in it; ``*`` alone is a suppressed
cell and matches anything), or when the two columns hardly share values: most
released rows hold a value no identity has, and most identities a value no
released row has. A release that is k-anonymous on the
compared columns leaves every identity with 0 or at least k matches: a released
class matches an identity as a whole.

The count is vectorized: the external values are expanded into the labels that
could match them (one small table per column, kept to labels the release
column holds), then joined column by column against the release's distinct
value combinations, pruning at each step the label prefixes no released row
has; no pair of rows is ever compared in Python.

Example (Sue's row in Samarati 2008 is unique on ZIP, birth date and sex):
    >>> import polars as pl
    >>> release = pl.DataFrame({"zip": ["94142", "94141", "94139"],
    ...                         "dob": ["64/04/12", "64/09/13", "64/04/15"],
    ...                         "sex": ["F", "F", "F"]})
    >>> voters = pl.DataFrame({"name": ["Sue J. Doe"], "zip": ["94142"],
    ...                        "dob": ["64/04/12"], "sex": ["F"]})
    >>> pairs = [("zip", "zip"), ("dob", "dob"), ("sex", "sex")]
    >>> s = link_frames(release, voters, pairs, {})
    >>> s.unique_matches, s.below_k, dict(s.distribution)
    (1, 1, {1: 1})
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from kanonym.attacks.defaults import DEFAULT_K
from kanonym.attacks.measures import shorten
from kanonym.errors import InputError, echo
from kanonym.hierarchy import Hierarchy

SUPPRESSED = "*"
"""A released cell holding this matches every value."""

UNMATCHED_SHARE = 0.5
"""A compared column is taken as generalized (:func:`generalized_labels`) when more
than this share of its released rows (suppressed and missing cells aside) hold
values no identity has, and more than this share of the identities values no
released row has. One side alone is no evidence: a voter list may cover a town
and the release one hospital, or the reverse."""

_GENERALIZED = re.compile(
    r"""
    ^\s*(?:
        # a range or interval of numbers: 30-39, [30, 40), 30..39, 30 to 39
        [\[(]?\s*-?\d+(?:\.\d+)?\s*(?:-|–|\.\.|,|\bto\b)\s*-?\d+(?:\.\d+)?\s*[\])]?
        # a bound: <20, >= 80, 80+
      | (?:[<>]=?|≤|≥)\s*-?\d+(?:\.\d+)?
      | -?\d+(?:\.\d+)?\s*\+
        # a masked value: 021**, *-12 (but not * alone, a suppressed cell)
      | .*[^*\s].*\*.* | .*\*.*[^*\s].*
    )\s*$
    """,
    re.VERBOSE,
)
"""Labels shaped like a generalization: a range or interval of numbers, a bound,
or a value with ``*`` in it besides ``*`` alone."""


class GeneralizedReleaseError(InputError):
    """Compared release columns hold generalized values but were given no hierarchy.

    ``columns`` maps each such release column to a few of its generalized
    labels, and ``source`` names the release, so the command line can ask for
    the hierarchies with its own flag (``--qi COL=HIERARCHY``).

    Example:
        >>> error = GeneralizedReleaseError("release.csv", {"age": ("30-39", "40-49")})
        >>> error.columns["age"]
        ('30-39', '40-49')
    """

    def __init__(self, source: str, columns: Mapping[str, tuple[str, ...]]) -> None:
        self.source = source
        self.columns = dict(columns)
        held = "; ".join(
            f"'{name}' holds e.g. {', '.join(echo(label) for label in labels)}"
            for name, labels in self.columns.items()
        )
        wanted = ", ".join(f"'{name}': ..." for name in self.columns)
        super().__init__(
            f"{source}: the release looks generalized and no hierarchy was given for it "
            f"({held}); generalized values match no raw value of the external table, so "
            "every identity would match nothing. Give the hierarchies the release was made "
            f"with: quasi_identifiers={{{wanted}}} (any hierarchy spec anonymize takes)"
        )


@dataclass(frozen=True, kw_only=True)
class LinkageSummary:
    """How many released rows each external identity matches (``kanonym.link``).

    Attributes:
        identities: rows of the external table.
        zero_matches: identities matching no released row.
        unique_matches: identities matching exactly one (re-identified).
        below_k: identities matching 1 to k - 1 rows (uniques included).
        k: the k of ``below_k``.
        distribution: number of matches -> identities with that many, ascending.
    """

    identities: int
    zero_matches: int
    unique_matches: int
    below_k: int
    k: int
    distribution: Mapping[int, int]

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")
        if sum(self.distribution.values()) != self.identities:
            raise ValueError("the distribution must count every identity once")
        expected = (
            self.distribution.get(0, 0),
            self.distribution.get(1, 0),
            sum(n for matches, n in self.distribution.items() if 1 <= matches < self.k),
        )
        if (self.zero_matches, self.unique_matches, self.below_k) != expected:
            raise ValueError("zero_matches, unique_matches and below_k contradict the distribution")

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym link --json`` prints.

        Example:
            >>> LinkageSummary(identities=3, zero_matches=1, unique_matches=1, below_k=1, k=2,
            ...                distribution={0: 1, 1: 1, 4: 1}).as_dict()["distribution"]
            {'0': 1, '1': 1, '4': 1}
        """
        return {
            "identities": self.identities,
            "zero_matches": self.zero_matches,
            "unique_matches": self.unique_matches,
            "below_k": self.below_k,
            "k": self.k,
            "distribution": {str(m): n for m, n in self.distribution.items()},
        }

    def text(self) -> str:
        """Two lines for people."""
        return (
            f"{self.identities} identities: {self.zero_matches} match no record, "
            f"{self.unique_matches} exactly one (re-identified), {self.below_k} fewer than "
            f"k={self.k}\nmatches (records: identities): {shorten(self.distribution)}"
        )


def _key(i: int) -> str:
    return f"__kanonym_label{i}"


def _value(i: int) -> str:
    return f"__kanonym_value{i}"


_ID, _COUNT, _IDENTITIES, _MATCHES = (
    "__kanonym_id",
    "__kanonym_count",
    "__kanonym_identities",
    "__kanonym_matches",
)


def _candidates(
    i: int,
    values: pl.Series,
    labels: pl.Series,
    hierarchy: Hierarchy | None,
) -> pl.DataFrame:
    """Pairs (external value, released label that matches it), for labels the release holds."""
    value, key = _value(i), _key(i)
    if hierarchy is None:
        pairs = pl.DataFrame({value: values, key: values})
    else:
        leaves = list(hierarchy.leaves)
        pairs = pl.DataFrame(
            {
                value: leaves * len(hierarchy.levels),
                key: [label for level in hierarchy.levels for label in level],
            },
            schema={value: pl.String, key: pl.String},
        )
    suppressed = pl.DataFrame({value: values, key: [SUPPRESSED] * values.len()})
    return (
        pl.concat([pairs, suppressed.cast(pl.String)])
        .unique()
        .join(labels.to_frame(key), on=key, how="semi", nulls_equal=True)
    )


def generalized_labels(released: pl.Series, external: pl.Series) -> tuple[str, ...]:
    """A few released labels showing that ``released`` was generalized; empty when
    it looks raw next to the ``external`` column it is compared with.

    Values are compared as text; suppressed (``*``) and missing cells are left
    out. The column looks generalized when a value the external column never
    holds is shaped like a generalization (``30-39``, ``[30, 40)``, ``>= 80``,
    ``021**``), or when the columns hardly share values (labels such as
    ``1964`` for ``1964-04-12``, or ``adult``): see :data:`UNMATCHED_SHARE`.

    Example:
        >>> ages = pl.Series(["30-39", "30-39", "40-49"])
        >>> generalized_labels(ages, pl.Series(["34", "41"]))
        ('30-39', '40-49')
        >>> generalized_labels(pl.Series(["1964", "1965"]), pl.Series(["1964-04-12"]))
        ('1964', '1965')
        >>> generalized_labels(pl.Series(["34", "*", "52"]), pl.Series(["34"]))
        ()
    """
    values = released.cast(pl.String).drop_nulls()
    counts = values.filter(values != SUPPRESSED).value_counts(sort=True, name=_COUNT)
    if counts.height == 0:
        return ()
    domain = set(external.cast(pl.String).drop_nulls().to_list())
    labels = counts.to_series(0).to_list()
    rows = counts.get_column(_COUNT).to_list()
    absent = [(label, n) for label, n in zip(labels, rows, strict=True) if label not in domain]
    shaped = [label for label, _ in absent if _GENERALIZED.match(label)]
    if shaped:
        return tuple(shaped[:3])
    identities = external.cast(pl.String).drop_nulls()
    known = identities.is_in(labels).sum() if identities.len() else 0
    if (
        sum(n for _, n in absent) > UNMATCHED_SHARE * sum(rows)
        and identities.len() - known > UNMATCHED_SHARE * identities.len()
    ):
        return tuple(label for label, _ in absent[:3])
    return ()


def link_frames(
    release: pl.DataFrame,
    external: pl.DataFrame,
    on: Sequence[tuple[str, str]],
    hierarchies: Mapping[str, Hierarchy],
    *,
    k: int = DEFAULT_K,
    release_source: str = "<release>",
    external_source: str = "<external>",
    check_generalized: bool = True,
) -> LinkageSummary:
    """Count the released rows matching each external row (rules: the module docstring).

    ``on`` pairs (external column, release column); ``hierarchies`` maps a
    release column of ``on`` to the hierarchy its values were generalized with.
    ``check_generalized=False`` compares a column without a hierarchy as text
    even when it looks generalized (its generalized values then match nothing).

    Raises:
        InputError: k below 1, no pair, a column missing or paired twice, a
            hierarchy for a column not compared, no external rows.
        GeneralizedReleaseError: a compared release column without a
            hierarchy holds generalized values (:func:`generalized_labels`).
        HierarchyError: an external value is not in its column's hierarchy.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"`k` must be a whole number >= 1, got {echo(k)}")
    check_pairs(
        release,
        external,
        on,
        hierarchies,
        release_source=release_source,
        external_source=external_source,
    )
    if external.height == 0:
        raise InputError(f"{external_source}: the table has no rows")
    generalized = {
        release_column: labels
        for external_column, release_column in on
        if check_generalized
        and release_column not in hierarchies
        and (
            labels := generalized_labels(
                release.get_column(release_column), external.get_column(external_column)
            )
        )
    }
    if generalized:
        raise GeneralizedReleaseError(release_source, generalized)
    width = len(on)
    keys = [_key(i) for i in range(width)]
    values = [_value(i) for i in range(width)]
    released = (
        release.select(
            pl.col(name).cast(pl.String).alias(key) for (_, name), key in zip(on, keys, strict=True)
        )
        .group_by(keys)
        .agg(pl.len().cast(pl.Int64).alias(_COUNT))
    )
    identities = (
        external.select(
            pl.col(name).cast(pl.String).alias(value)
            for (name, _), value in zip(on, values, strict=True)
        )
        .group_by(values)
        .agg(pl.len().cast(pl.Int64).alias(_IDENTITIES))
        .with_row_index(_ID)
    )
    frontier = identities.select(_ID, *values)
    for i, (external_column, release_column) in enumerate(on):
        distinct = identities[_value(i)].unique()
        hierarchy = hierarchies.get(release_column)
        if hierarchy is not None:
            hierarchy.covers(distinct.to_list(), column=external_column, source=external_source)
        candidates = _candidates(i, distinct, released[_key(i)].unique(), hierarchy)
        frontier = frontier.join(candidates, on=_value(i), nulls_equal=True).drop(_value(i))
        if i < width - 1:
            # Keep only label prefixes some released row starts with.
            prefixes = released.select(keys[: i + 1]).unique()
            frontier = frontier.join(prefixes, on=keys[: i + 1], how="semi", nulls_equal=True)
    matched = (
        frontier.join(released, on=keys, nulls_equal=True)
        .group_by(_ID)
        .agg(pl.col(_COUNT).sum().alias(_MATCHES))
    )
    counted = (
        identities.select(_ID, _IDENTITIES)
        .join(matched, on=_ID, how="left")
        .with_columns(pl.col(_MATCHES).fill_null(0))
        .group_by(_MATCHES)
        .agg(pl.col(_IDENTITIES).sum())
        .sort(_MATCHES)
    )
    distribution = dict(
        zip(counted[_MATCHES].to_list(), counted[_IDENTITIES].to_list(), strict=True)
    )
    return LinkageSummary(
        identities=external.height,
        zero_matches=distribution.get(0, 0),
        unique_matches=distribution.get(1, 0),
        below_k=sum(n for matches, n in distribution.items() if 1 <= matches < k),
        k=k,
        distribution=distribution,
    )


def check_pairs(
    release: pl.DataFrame,
    external: pl.DataFrame,
    on: Sequence[tuple[str, str]],
    hierarchy_columns: Collection[str],
    *,
    release_source: str,
    external_source: str,
) -> None:
    """Raise InputError unless every pair names existing columns, each once, and
    every hierarchy belongs to a compared release column."""
    if not on:
        raise InputError("link needs at least one pair of columns to compare (`on`)")
    for external_column, release_column in on:
        for name, frame, source in (
            (external_column, external, external_source),
            (release_column, release, release_source),
        ):
            if name not in frame.columns:
                raise InputError(
                    f"{source}: column '{name}' not found; columns are {frame.columns}"
                )
    for side, names in (("external", [e for e, _ in on]), ("release", [r for _, r in on])):
        if len(set(names)) != len(names):
            raise InputError(f"link: a {side} column is compared twice in {names}")
    compared = {r for _, r in on}
    for name in hierarchy_columns:
        if name not in compared:
            raise InputError(
                f"link: hierarchy given for '{name}', which is not a compared release column "
                f"({sorted(compared)})"
            )
