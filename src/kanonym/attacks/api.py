"""The public attack functions: they read tables, check the request and measure.

Each takes CSV/Parquet paths or Polars/pandas DataFrames (read as
:func:`kanonym.io.load` reads them), and returns a frozen summary with
``as_dict()`` (the ``--json`` object of the matching command) and ``text()``.
Plain column lists are ``columns``; ``quasi_identifiers`` always maps a column
to its hierarchy, as in :func:`kanonym.anonymize`; ``k`` is keyword-only.

Example (Samarati 2008's voter Sue J. Doe is re-identified in the raw table):
    >>> import polars as pl
    >>> medical = pl.DataFrame({"zip": ["94142", "94141"], "dob": ["64/04/12", "64/09/13"],
    ...                         "sex": ["F", "F"], "disease": ["hypertension", "obesity"]})
    >>> voters = pl.DataFrame({"name": ["Sue J. Doe"], "zip": ["94142"], "dob": ["64/04/12"],
    ...                        "sex": ["F"]})
    >>> link(medical, voters, on=["zip", "dob", "sex"]).unique_matches
    1
    >>> risk(medical, ["zip"]).sample_uniqueness
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from kanonym.attacks.attribute import DisclosureSummary, measure_disclosure
from kanonym.attacks.defaults import (
    DEFAULT_DOMINANCE,
    DEFAULT_K,
    DEFAULT_LIMIT,
    DEFAULT_MAX_SIZE,
    DEFAULT_THRESHOLD,
)
from kanonym.attacks.linkage import LinkageSummary, check_pairs, link_frames
from kanonym.attacks.measures import DIRECT_IDENTIFIER_UNIQUENESS, RiskSummary, measure_risk
from kanonym.attacks.scan import QiScan, scan_quasi_identifiers
from kanonym.errors import InputError, echo
from kanonym.hierarchy import Hierarchy, HierarchyBuilder, parse_hierarchy, resolve
from kanonym.io import Table, load
from kanonym.options import TableLike


def _load(data: TableLike, delimiter: str | None) -> Table:
    # The delimiter is for files; a DataFrame alongside a CSV file ignores it.
    return load(data, delimiter=delimiter if isinstance(data, str | Path) else None)


def _columns(names: Sequence[str], what: str) -> tuple[str, ...]:
    if isinstance(names, str):
        raise InputError(f"{what}: expected a list of column names, got the string {echo(names)}")
    names = tuple(names)
    if not names:
        raise InputError(f"{what}: name at least one column")
    for name in names:
        if not isinstance(name, str) or not name:
            raise InputError(f"{what}: column names must be non-empty strings, got {echo(name)}")
    if len(set(names)) != len(names):
        raise InputError(f"{what}: a column is named twice in {list(names)}")
    return names


def risk(
    data: TableLike,
    columns: Sequence[str],
    *,
    population: TableLike | None = None,
    population_size: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    delimiter: str | None = None,
) -> RiskSummary:
    """Re-identification risk of ``data`` grouped on ``columns`` (``kanonym risk``).

    ``columns`` are the quasi-identifiers' column names, compared as they are.

    Sample uniqueness, class sizes, prosecutor and marketer risk always;
    journalist risk and the exact population uniqueness with a ``population``
    table that contains ``data``; Zayatz's and Pitman's estimates of population
    uniqueness with a population table or a ``population_size``. Definitions:
    :mod:`kanonym.attacks.measures` and :mod:`kanonym.attacks.population`.

    Raises:
        InputError: a missing column, an empty table, a threshold outside
            (0, 1], both ``population`` and ``population_size``, a population
            smaller than the table or not containing it.
    """
    qis = _columns(columns, "`columns`")
    table = _load(data, delimiter)
    table.require(qis)
    frame = None
    source = "<population>"
    if population is not None:
        loaded = _load(population, delimiter)
        loaded.require(qis)
        frame, source = loaded.frame, loaded.source
    return measure_risk(
        table.frame,
        qis,
        threshold=threshold,
        population=frame,
        population_size=population_size,
        source=table.source,
        population_source=source,
    )


def qi_scan(
    data: TableLike,
    columns: Sequence[str] | None = None,
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    time_limit: float | None = None,
    delimiter: str | None = None,
    direct_identifier_uniqueness: float | None = DIRECT_IDENTIFIER_UNIQUENESS,
) -> QiScan:
    """Rank combinations of 1 to ``max_size`` of ``columns`` (default: all) by unique records.

    Columns unique on their own on at least ``direct_identifier_uniqueness``
    of the rows (a name, an SSN) are reported apart as direct identifiers, and
    the combinations holding one are skipped (None: rank every combination).
    See :mod:`kanonym.attacks.scan` (``kanonym qi-scan``).

    Raises:
        InputError: a missing column, an empty table, ``max_size`` < 1, a
            time limit that is not positive or a uniqueness outside (0, 1].
    """
    table = _load(data, delimiter)
    candidates = tuple(table.frame.columns) if columns is None else _columns(columns, "`columns`")
    table.require(candidates)
    return scan_quasi_identifiers(
        table.frame,
        candidates,
        max_size=max_size,
        time_limit=time_limit,
        direct_identifier_uniqueness=direct_identifier_uniqueness,
    )


def _pairs(on: Sequence[str | tuple[str, str]]) -> list[tuple[str, str]]:
    if isinstance(on, str):
        raise InputError(f"`on` must be a list of columns, got the string {echo(on)}")
    pairs = []
    for item in on:
        if isinstance(item, str):
            pairs.append((item, item))
        elif isinstance(item, tuple) and len(item) == 2 and all(isinstance(c, str) for c in item):
            pairs.append((item[0], item[1]))
        else:
            raise InputError(
                f"`on`: {echo(item)} is neither a column nor an (external, release) pair of columns"
            )
    return pairs


def link(
    release: TableLike,
    external: TableLike,
    on: Sequence[str | tuple[str, str]],
    *,
    quasi_identifiers: Mapping[str, Hierarchy | HierarchyBuilder | str | Path] | None = None,
    k: int = DEFAULT_K,
    delimiter: str | None = None,
    check_generalized: bool = True,
) -> LinkageSummary:
    """Link every row of ``external`` to ``release`` and count its matches (``kanonym link``).

    ``on`` lists the compared columns: a name present in both tables, or an
    ``(external column, release column)`` pair. ``quasi_identifiers`` maps a
    release column to the hierarchy its values were generalized with (an object, a
    builder or a spec as in ``anonymize``); builders are built from the
    external column's values. A compared column given no hierarchy must hold
    raw values: one that looks generalized (``30-39``, ``021**``, labels the
    external table never holds) is refused, since it would match nothing,
    unless ``check_generalized=False``. Matching rules:
    :mod:`kanonym.attacks.linkage`.

    Raises:
        InputError: a missing or repeated column, an empty external table, k < 1.
        GeneralizedReleaseError: a compared column without a hierarchy looks
            generalized; its message asks for ``quasi_identifiers``.
        HierarchyError: an external value absent from its column's hierarchy.
    """
    pairs = _pairs(on)
    release_table = _load(release, delimiter)
    external_table = _load(external, delimiter)
    hierarchies = quasi_identifiers or {}
    check_pairs(
        release_table.frame,
        external_table.frame,
        pairs,
        hierarchies,
        release_source=release_table.source,
        external_source=external_table.source,
    )
    external_of = {r: e for e, r in pairs}
    resolved: dict[str, Hierarchy] = {}
    for name, spec in hierarchies.items():
        parsed = parse_hierarchy(str(spec)) if isinstance(spec, str | Path) else spec
        column = external_of[name]
        resolved[name] = resolve(
            parsed,
            external_table.frame.get_column(column).cast(pl.String).unique().to_list(),
            column=column,
            source=external_table.source,
        )
    return link_frames(
        release_table.frame,
        external_table.frame,
        pairs,
        resolved,
        k=k,
        release_source=release_table.source,
        external_source=external_table.source,
        check_generalized=check_generalized,
    )


def disclosure(
    data: TableLike,
    columns: Sequence[str],
    sensitive: Sequence[str],
    *,
    dominance: float = DEFAULT_DOMINANCE,
    limit: int = DEFAULT_LIMIT,
    delimiter: str | None = None,
) -> DisclosureSummary:
    """Homogeneous and dominated classes per sensitive attribute (``kanonym disclosure``).

    The classes group the rows on ``columns`` (the quasi-identifiers' names),
    compared as they are.

    See :mod:`kanonym.attacks.attribute`; ``limit`` bounds the classes listed
    per attribute (the counts always cover them all).

    Raises:
        InputError: a missing column, an empty table, a column both
            quasi-identifier and sensitive, a dominance outside [0, 1).
    """
    qis = _columns(columns, "`columns`")
    names = _columns(sensitive, "`sensitive`")
    table = _load(data, delimiter)
    table.require([*qis, *names])
    return DisclosureSummary(
        columns=qis,
        rows=table.frame.height,
        dominance=dominance,
        attributes=measure_disclosure(table.frame, qis, names, dominance=dominance, limit=limit),
    )
