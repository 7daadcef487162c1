"""The ledger's release policies: a new release planned and checked against the earlier ones.

Sweeney ("k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002,
section 4) shows three attacks on k-anonymous releases that no single release
can prevent, only a record of what was released before:

* *unsorted matching* (§4.1): two releases whose rows are in the same order
  can be matched row by row. Every kanonym release shuffles its rows with a
  seed; :func:`choose_seed` refuses a seed already used for the same source,
  unless the release is a deliberate re-run of an earlier one (``replay``),
  which must then reproduce that release exactly (:func:`check_replay`);
* *complementary release* (§4.2): a later release of the same table can be
  linked to an earlier one on the attributes they share. A release of a source
  the ledger has seen treats every attribute an earlier release published as
  part of its quasi-identifier, generalized with the hierarchy an earlier
  release used for it (:func:`earlier_hierarchies`; ``suppress`` if none did),
  unless it is *based on* an earlier release (:func:`plan_release`); before it
  is recorded, it is linked with the earlier releases as an attacker would
  and refused below k (:func:`check_links`);
* *temporal* (§4.3): after rows are added, a new release must not publish a
  value more specific than one already published for the same record. A
  release ``based_on`` an earlier one is searched only among generalizations
  at least as high, per quasi-identifier, as that release's levels
  (:func:`plan_release`), keeps the generality each record was published
  with (:func:`keep_published_generality`), and every record (identified by a
  key column that is never released, :func:`key_policy`) is checked to be
  published with the same value or one of its generalizations
  (:func:`check_temporal`).

Every function here works on plain values (:class:`~kanonym.ledger.records.LedgerEntry`,
tables, hierarchies): what the ledger stored is read by
:mod:`kanonym.ledger.storage` and handed in.

Example (a seed is drawn afresh, or refused when a release of the source used it):
    >>> choose_seed(7, same=(), replayed=None)
    7
    >>> choose_seed(2**63, same=(), replayed=None)
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: seed must be below 2**63 to be recorded, got 9223372036854775808
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from kanonym._version import __version__
from kanonym.attacks.complementary import AuditResult, ancestor_pairs, leaf_covers, link
from kanonym.config import AnonymizationConfig, HierarchyLike
from kanonym.engine.postgres import is_postgres_url
from kanonym.errors import InputError, VerificationError
from kanonym.hierarchy import Hierarchy, SuppressBuilder, parse_hierarchy
from kanonym.ledger.budget import privacy_charge
from kanonym.ledger.fingerprints import KEY_HASH, KEY_TEXT, hierarchy_fingerprint
from kanonym.ledger.postgres import table_name
from kanonym.ledger.records import HierarchyRecord, LedgerEntry
from kanonym.ledger.sources import ROWS, SourceRows, duplicated
from kanonym.verify import measure, verify_models

if TYPE_CHECKING:
    from kanonym.result import Result

DATAFRAME_SOURCE = "<DataFrame>"
"""The source name of a table given as a DataFrame (it has no path)."""
SEED_LIMIT = 2**63
"""Seeds must be below this: SQLite integers are signed 64-bit."""


@dataclass(frozen=True, kw_only=True)
class ReleasePlan:
    """The job as the ledger's policies turn it, before the search runs.

    Attributes:
        config: the job to search: complementary attributes added to the
            quasi-identifier, the levels of ``base`` as lower bounds, the seed
            chosen, the key carried as an unchanged column.
        key: the key column identifying records, or None.
        base: the release this one is based on (temporal), or None.
        replayed: the release this one re-runs, or None.
        complementary: the attributes earlier releases published, added to the
            quasi-identifier.
        last_id: the ledger's last release number when the plan was made.
    """

    config: AnonymizationConfig
    key: str | None
    base: LedgerEntry | None
    replayed: LedgerEntry | None
    complementary: tuple[str, ...]
    last_id: int


def source_name(data: object) -> str:
    """How the ledger names a source: its file's absolute path, a database table's URL
    without a password (:func:`~kanonym.ledger.postgres.table_name`), or ``<DataFrame>``."""
    if is_postgres_url(data):
        return table_name(str(data))
    return str(Path(data).resolve()) if isinstance(data, str | Path) else DATAFRAME_SOURCE


def same_source(entry: LedgerEntry, source: str, fingerprint: str) -> bool:
    """Whether ``entry`` released the same content, or the same file (a DataFrame has none)."""
    return entry.source_sha256 == fingerprint or (
        source != DATAFRAME_SOURCE and entry.source == source
    )


def releases_of_source(
    entries: Sequence[LedgerEntry], sharing: Collection[int], source: str, fingerprint: str
) -> list[LedgerEntry]:
    """The releases of this source: same file or content, or sharing record keys (``sharing``)."""
    return [e for e in entries if e.id in sharing or same_source(e, source, fingerprint)]


def budget_releases(
    entries: Sequence[LedgerEntry], name: str, fingerprint: str | None = None
) -> list[LedgerEntry]:
    """The releases that spend the privacy budget of source ``name`` (:mod:`kanonym.ledger.budget`).

    They are the releases of the same source (:func:`same_source`) as any
    release of ``name``, recorded or (content ``fingerprint``) being made: its
    own releases, and those of the same content under another name (a copy
    of one of its versions), so a copy never starts from a fresh budget. Since
    a release of ``name`` has one of those contents, this is every release
    whose content a release of ``name`` had. A table differing by one row is
    another content: only its name links it (as for every policy here).

    Example:
        >>> from kanonym.ledger.records import HierarchyRecord
        >>> def made(id: int, source: str, sha: str) -> LedgerEntry:
        ...     return LedgerEntry(id=id, created="", kanonym_version="", source=source,
        ...         source_sha256=sha, source_rows=1, quasi_identifiers={}, models=(),
        ...         transformation={}, recoding=None, seed=id, released_columns=(),
        ...         released_rows=1, release_sha256="", key=None, based_on=None,
        ...         replay_of=None, complementary=(), output="", report=None)
        >>> entries = [made(1, "/a.csv", "x"), made(2, "/copy.csv", "x"), made(3, "/b.csv", "y")]
        >>> [e.id for e in budget_releases(entries, "/a.csv")]
        [1, 2]
        >>> [e.id for e in budget_releases(entries, "/a.csv", fingerprint="y")]
        [1, 2, 3]
    """
    contents = {e.source_sha256 for e in entries if e.source == name}
    if fingerprint is not None:
        contents.add(fingerprint)
    return [e for e in entries if e.source_sha256 in contents]


def budgets_spent(
    entries: Sequence[LedgerEntry], names: Collection[str], source: str, fingerprint: str
) -> list[str]:
    """The sources among ``names`` (those with a budget) whose budget a release of ``source``
    with content ``fingerprint`` spends: its own, and every other source a recorded
    release of which had this content (:func:`budget_releases`)."""
    others = [
        name
        for name in names
        if name != source
        and any(e.source == name and e.source_sha256 == fingerprint for e in entries)
    ]
    return [source, *others] if source in names else others


def lookup(entries: Mapping[int, LedgerEntry], release_id: int, parameter: str) -> LedgerEntry:
    """The release numbered ``release_id`` that ``parameter`` names; InputError if there is none."""
    if isinstance(release_id, bool) or not isinstance(release_id, int):
        raise InputError(f"`{parameter}` must be a release number, got {release_id!r}")
    if release_id not in entries:
        raise InputError(f"`{parameter}={release_id}`: no such release in the ledger")
    return entries[release_id]


def earlier_keys(entries: Sequence[LedgerEntry], columns: Collection[str]) -> list[str]:
    """The key columns of recorded releases that ``columns`` holds, the latest release's first."""
    keys = dict.fromkeys(e.key for e in reversed(entries) if e.key is not None)
    return [column for column in keys if column in columns]


def keyed_before(
    entries: Sequence[LedgerEntry],
    column: str,
    sharing: Collection[int],
    source: str,
    fingerprint: str,
) -> bool:
    """Whether a release of this source was made with ``column`` as its key.

    A key column stays a key: it is never released, even when a later run
    does not name it. ``sharing`` are the releases that published one of this
    table's records (by the keyed hash of ``column``'s values).
    """
    return any(
        e.key == column and (e.id in sharing or same_source(e, source, fingerprint))
        for e in entries
    )


def plan_release(
    table: SourceRows,
    config: AnonymizationConfig,
    *,
    same: Sequence[LedgerEntry],
    key: str | None,
    base: LedgerEntry | None,
    replayed: LedgerEntry | None,
    last_id: int,
    earlier_hierarchies: Mapping[str, HierarchyLike],
) -> ReleasePlan:
    """Apply the seed, key, temporal and complementary policies to the job.

    ``same`` are the recorded releases of the same source: same file, same
    content, or sharing a record key with this table. ``earlier_hierarchies``
    are the hierarchies earlier releases of it generalized columns with.
    """
    if replayed is not None and replayed not in same:
        raise InputError(f"`replay={replayed.id}`: release {replayed.id} is of another source")
    seed = choose_seed(config.seed, same, replayed)
    identifying = key_policy(table, config, key, base)
    quasi_identifiers: dict[str, HierarchyLike] = dict(config.hierarchies)
    min_levels = dict(config.min_levels)
    complementary: tuple[str, ...] = ()
    if base is not None:
        # Temporal: the earlier release's quasi-identifiers stay generalized, at
        # least as high as it generalized them.
        for name in base.quasi_identifiers:
            if name not in quasi_identifiers:
                quasi_identifiers[name] = parse_hierarchy(base.quasi_identifiers[name].source)
            if base.transformation is None:
                # A local recoding has no levels to start from; the check before
                # writing still refuses any record published more specifically.
                continue
            level = base.transformation[name]
            if config.max_levels.get(name, level) < level:
                raise InputError(
                    f"`based_on={base.id}`: `max_levels` {config.max_levels[name]} of '{name}' "
                    f"is below level {level}, which release {base.id} published"
                )
            min_levels[name] = max(min_levels.get(name, 0), level)
    else:
        # Complementary release: whatever earlier releases of this source published
        # can be linked on, so it is part of the quasi-identifier.
        horizon = replayed.id if replayed is not None else None
        before = {
            column
            for e in same
            if horizon is None or e.id < horizon
            for column in e.released_columns
        }
        # Only columns this job releases unchanged join: a column it names in no
        # role stays unassigned, and is refused as such, rather than being released.
        unchanged = {*config.sensitive, *config.insensitive}
        if config.keep_unlisted:
            unchanged.update(config.unassigned(table.columns))
        complementary = tuple(
            c
            for c in table.columns
            if c in before and c in unchanged and c not in identifying and c != key
        )
        for name in complementary:
            if name in config.sensitive:
                raise InputError(
                    f"column '{name}' was published by an earlier release of this source, so it "
                    "joins the quasi-identifier (complementary release) and cannot be sensitive; "
                    "drop it from `sensitive` or use `based_on`"
                )
            # The hierarchy an earlier release generalized it with, so that the
            # releases' labels nest and link; suppression if none did.
            quasi_identifiers[name] = earlier_hierarchies.get(name, SuppressBuilder())
    try:
        # The key travels through the pipeline as an unchanged column, so that each
        # released row keeps its record's key; it is dropped before anything is written.
        insensitive = tuple(
            c for c in config.insensitive if c not in quasi_identifiers and c != key
        ) + (() if key is None else (key,))
        final = dataclasses.replace(
            config,
            quasi_identifiers=quasi_identifiers,
            identifying=identifying,
            insensitive=insensitive,
            min_levels=min_levels,
            seed=seed,
        )
    except InputError as error:
        what = f"`based_on={base.id}`" if base is not None else "complementary release"
        raise type(error)(f"{what}: {error}") from None
    return ReleasePlan(
        config=final,
        key=key,
        base=base,
        replayed=replayed,
        complementary=complementary,
        last_id=last_id,
    )


def choose_seed(
    given: int | None, same: Sequence[LedgerEntry], replayed: LedgerEntry | None
) -> int:
    """The shuffle seed: never one used for this source, except by a replay (Sweeney 2002, §4.1).

    A replay re-uses its original's seed; a given seed must be new for the
    source; with none given, one is drawn until it is new.
    """
    used = {e.seed: e.id for e in same}
    if replayed is not None:
        if given is not None and given != replayed.seed:
            raise InputError(
                f"`replay={replayed.id}` re-uses seed {replayed.seed}; `seed={given}` "
                "contradicts it"
            )
        return replayed.seed
    if given is not None:
        if given >= SEED_LIMIT:
            raise InputError(f"seed must be below 2**63 to be recorded, got {given}")
        if given in used:
            raise InputError(
                f"seed {given} was already used for this source by release {used[given]}; "
                f"give another `seed`, or `replay={used[given]}` to re-run that release"
            )
        return given
    while True:
        drawn = secrets.randbits(63)
        if drawn not in used:
            return drawn


def key_policy(
    table: SourceRows, config: AnonymizationConfig, key: str | None, base: LedgerEntry | None
) -> tuple[str, ...]:
    """Check the key column; returns the identifying columns for the search.

    The key is left out of them: it goes through the pipeline as a released
    column, so each released row still carries its record's key, and is
    dropped before the release is written.
    """
    if base is not None:
        if base.key is None:
            raise InputError(
                f"`based_on={base.id}`: release {base.id} was made without `key`, so what it "
                "published per record is unknown"
            )
        if key != base.key:
            raise InputError(
                f"`based_on={base.id}`: release {base.id} identifies records by '{base.key}', "
                f"not '{key}'"
            )
    if key is None:
        return config.identifying
    if key not in table.columns:
        raise InputError(
            f"{table.source}: key column '{key}' not found; columns are {list(table.columns)}"
        )
    if key in config.hierarchies or key in config.sensitive:
        raise InputError(f"key column '{key}' is never released, so it cannot be a released role")
    require_unique_keys(table, key)
    return tuple(name for name in config.identifying if name != key)


def require_unique_keys(table: SourceRows, key: str) -> None:
    """Refuse a key column in which two rows share a key (checked before the ledger is touched)."""
    shared = duplicated(table, key)
    if shared:
        # A key identifies a person (an SSN): the message never shows its values.
        raise InputError(
            f"{table.source}: key column '{key}': {shared} rows share their key with "
            "another row (key values are not shown); give every record a key of its own"
        )


def earlier_hierarchies(
    source: SourceRows,
    same: Sequence[LedgerEntry],
    stored: Mapping[int, Mapping[str, Hierarchy]],
) -> dict[str, HierarchyLike]:
    """Per column, the hierarchy the latest earlier release of the source generalized it with.

    ``stored`` holds, per release, the hierarchies the ledger kept (none for
    a release recorded before it kept them). The recorded hierarchy is used
    when it still covers the column's values in ``source``, else its spec,
    to be rebuilt on this table (a grown table has new values).
    """
    found: dict[str, HierarchyLike] = {}
    values: dict[str, set[str | None]] = {}  # per column, read once
    for entry in sorted(same, key=lambda e: e.id):
        kept = stored.get(entry.id, {})
        for name, record in entry.quasi_identifiers.items():
            if name not in source.columns:
                continue
            hierarchy = kept.get(name)
            if hierarchy is not None and name not in values:
                values[name] = set(source.counted([name]).get_column(name).to_list())
            if hierarchy is not None and values[name] <= set(hierarchy.leaves):
                found[name] = hierarchy
                continue
            with contextlib.suppress(InputError):  # an ARX file since removed
                found[name] = parse_hierarchy(record.source)
    return found


def resolve_hierarchies(
    entry: LedgerEntry,
    stored: Mapping[str, Hierarchy],
    tables: Sequence[pl.DataFrame],
    fallback: Mapping[str, Hierarchy] | None = None,
) -> dict[str, Hierarchy]:
    """The entry's hierarchies: ``stored`` (as the ledger kept them), or rebuilt from their specs.

    Releases recorded before the ledger kept hierarchies have none stored: a
    builder spec is then rebuilt on the released values of ``tables`` (which
    works for ``mask`` and ``suppress``) unless ``fallback`` holds a hierarchy
    of the same spec (the release being made, on the same source).
    """
    if stored:
        return dict(stored)
    resolved: dict[str, Hierarchy] = {}
    for name, record in entry.quasi_identifiers.items():
        known = (fallback or {}).get(name)
        if known is not None and known.name == record.source:
            resolved[name] = known
            continue
        spec = parse_hierarchy(record.source)
        if isinstance(spec, Hierarchy):
            resolved[name] = spec
            continue
        values = (
            pl.concat([t.get_column(name).cast(pl.String) for t in tables if name in t.columns])
            .unique()
            .to_list()
        )
        try:
            resolved[name] = spec.build(values, column=name, source=f"release {entry.id}")
        except InputError as error:
            raise InputError(
                f"release {entry.id} (recorded before the ledger kept hierarchies): "
                f"hierarchy {record.source} of '{name}' cannot be rebuilt from released "
                f"values ({error})"
            ) from None
    return resolved


def published_per_record(
    released: pl.DataFrame, key: str, hashed: pl.DataFrame, names: Sequence[str]
) -> pl.DataFrame:
    """Per released row: the hash of its record's key and its quasi-identifier values.

    ``released`` is the verified release still holding the key column;
    ``hashed`` maps each key (as text) to its hash
    (:func:`~kanonym.ledger.fingerprints.hash_keys`).
    """
    columns = [
        pl.col(key).cast(pl.String).alias(KEY_TEXT),
        *(pl.col(n).cast(pl.String) for n in names),
    ]
    return (
        released.select(columns)
        .join(hashed, on=KEY_TEXT, how="left", nulls_equal=True)
        .select(KEY_HASH, *names)
    )


def keep_published_generality(
    result: Result,
    key: str,
    hashed: pl.DataFrame,
    previous: pl.DataFrame,
    base: LedgerEntry,
    source: SourceRows,
) -> tuple[Result, int]:
    """Build on the earlier release: a record keeps the generality it was published with.

    Where ``base`` published a record's quasi-identifier more generally than
    this release would (e.g. a cell it blanked with ``*``), the record gets
    ``base``'s value again (Sweeney 2002, §4.3: what was released stays
    released; publishing it more specifically would complete it). The changed
    table is re-verified against ``source``, k-anonymity and every model,
    independently of the search; a failure raises VerificationError and
    nothing is written. Returns the release and the number of cells that kept
    ``base``'s value (the report's metrics stay those of the search's node).
    """
    old = "__kanonym_old"
    names = [n for n in base.quasi_identifiers if n in result.table.columns]
    frame = (
        result.table.with_row_index("__kanonym_row")
        .with_columns(pl.col(key).cast(pl.String).alias(KEY_TEXT))
        .join(hashed, on=KEY_TEXT, how="left", nulls_equal=True)
        .join(
            previous.select(KEY_HASH, *(pl.col(n).alias(f"{n}{old}") for n in names)),
            on=KEY_HASH,
            how="left",
        )
    )
    changed = 0
    for name in names:
        finer = (
            ancestor_pairs(result.hierarchies[name])
            .filter(pl.col("value") != pl.col("ancestor"))
            .with_columns(pl.lit(True).alias("__kanonym_finer"))
        )
        frame = frame.join(
            finer,
            left_on=[name, f"{name}{old}"],
            right_on=["value", "ancestor"],
            how="left",
            nulls_equal=True,
        )
        flag = frame.get_column("__kanonym_finer").fill_null(False)
        changed += int(flag.sum())
        frame = frame.with_columns(
            pl.when(flag).then(pl.col(f"{name}{old}")).otherwise(pl.col(name)).alias(name)
        ).drop("__kanonym_finer")
    if not changed:
        return result, 0
    table = frame.sort("__kanonym_row").select(result.table.columns)
    columns = list(result.hierarchies)
    summary = measure(table, columns, result.config.k)
    if not summary.k_anonymous:
        raise VerificationError(
            f"keeping what release {base.id} published for {changed} cell(s) leaves "
            f"{summary.rows_below_k} rows in classes smaller than {result.config.k}"
        )
    # The models' reference distributions are counted where the source's rows are; with no
    # sensitive column, the source's row count alone (models that derive a least class size
    # or a risk from it read that).
    attributes = list(dict.fromkeys(a for m in result.models for a in m.sensitive_attributes))
    reference = source.counted(attributes)
    verify_models(
        table.with_columns(pl.lit(1, pl.Int64).alias(ROWS)),
        columns=columns,
        source=reference,
        models=result.models,
        weight=ROWS,
    )
    return dataclasses.replace(result, released=table), changed


def without_key(result: Result, key: str) -> Result:
    """The release with its key column dropped; the report lists the key as identifying."""
    return dataclasses.replace(
        result,
        released=result.table.drop(key),
        config=dataclasses.replace(
            result.config,
            identifying=(*result.config.identifying, key),
            insensitive=tuple(c for c in result.config.insensitive if c != key),
        ),
    )


def check_replay(replayed: LedgerEntry | None, release_sha256: str) -> None:
    """Refuse a replay whose release (its content fingerprint) differs from the original's."""
    if replayed is not None and release_sha256 != replayed.release_sha256:
        raise InputError(
            f"`replay={replayed.id}`: this run does not reproduce release "
            f"{replayed.id} (different options or source); nothing written"
        )


def check_temporal(
    published: pl.DataFrame,
    previous: pl.DataFrame,
    base: LedgerEntry,
    hierarchies: Mapping[str, Hierarchy],
) -> None:
    """Raise VerificationError if a record would be published more specifically than before.

    ``published`` and ``previous`` are what this release and ``base`` publish
    per record (``key_hash`` and the quasi-identifiers, as
    :meth:`~kanonym.ledger.storage.LedgerStore.published` reads them). For every
    record in both and every quasi-identifier of ``base``, the new value must
    be the old one or one of its generalizations in this release's hierarchy
    (Sweeney 2002, §4.3).
    """
    suffix = "__kanonym_new"
    both = previous.join(published, on=KEY_HASH, suffix=suffix)
    for name in base.quasi_identifiers:
        bad = both.join(
            ancestor_pairs(hierarchies[name]),
            left_on=[name, f"{name}{suffix}"],
            right_on=["value", "ancestor"],
            how="anti",
            nulls_equal=True,
        )
        if bad.height:
            raise VerificationError(
                f"{bad.height} record(s) would get a value of '{name}' more specific than (or "
                f"unrelated to) what release {base.id} published for them"
            )


def declared(entries: Sequence[LedgerEntry]) -> set[str]:
    """The quasi-identifiers the releases were made with, less their complementary attributes."""
    return {q for e in entries for q in e.quasi_identifiers if q not in e.complementary}


def link_releases(
    tables: Sequence[pl.DataFrame],
    names: Sequence[str],
    hierarchies: Sequence[Mapping[str, Hierarchy]],
    k: int,
    *,
    declared: Collection[str],
) -> AuditResult | None:
    """Link released tables on what they share, as the ledger audits them; None if nothing can.

    Every column a release generalized is compared through its hierarchies
    (all those the releases used for it). The releases are joined on the
    columns they all share that each publishes exactly (every value a leaf:
    a column no release generalized, or one left at its leaves). The classes
    of the linked table are split by ``declared``, the quasi-identifiers the
    releases were made with (not the attributes added to them only because an
    earlier release published them: those link releases to each other, not
    to identities). Releases that share no exact column cannot be linked row
    by row: None. The linking is the complementary release attack
    (:func:`kanonym.attacks.complementary.link`, Sweeney 2002, §4.2).
    """
    frames = [t.with_columns(pl.all().cast(pl.String)) for t in tables]
    per_column: dict[str, list[Hierarchy]] = {}
    for found in hierarchies:
        for name, hierarchy in found.items():
            same = per_column.setdefault(name, [])
            if all(h.levels != hierarchy.levels for h in same):
                same.append(hierarchy)
    shared = set(frames[0].columns).intersection(*(f.columns for f in frames[1:]))
    join = [
        c
        for c in frames[0].columns
        if c in shared and (c not in per_column or publishes_exactly(frames, c, per_column[c]))
    ]
    if not join:
        return None
    split = [c for c in per_column if c in declared]
    return link(frames, names, per_column, k, join=join, classes_on=split)


def publishes_exactly(
    frames: Sequence[pl.DataFrame], column: str, hierarchies: Sequence[Hierarchy]
) -> bool:
    """Every table publishes ``column`` exactly: each value is a label covering one leaf.

    Example:
        >>> sex = Hierarchy("sex", (("F", "M"), ("*", "*")))
        >>> frame = pl.DataFrame({"sex": ["F", "M"]})
        >>> publishes_exactly([frame], "sex", [sex]), publishes_exactly(
        ...     [frame.with_columns(pl.lit("*").alias("sex"))], "sex", [sex])
        (True, False)
    """
    covers = leaf_covers(hierarchies)
    single = (
        covers.group_by("label").agg(pl.len().alias("n")).filter(pl.col("n") == 1).select("label")
    )
    values = pl.concat([f.select(pl.col(column).alias("label")) for f in frames]).unique()
    return values.join(single, on="label", how="anti", nulls_equal=True).height == 0


def check_links(
    table: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    earlier: Sequence[LedgerEntry],
    complementary: Collection[str],
    *,
    released: Mapping[int, pl.DataFrame],
    stored: Mapping[int, Mapping[str, Hierarchy]],
) -> None:
    """Refuse a release that, linked with earlier ones, is not k-anonymous.

    Sweeney (2002, §4.2): releases of one table that share attributes can
    be joined on them. Before a release (``table``, generalized with
    ``hierarchies`` for ``k``) is recorded it is linked, as the ledger's
    audit would link it, with each earlier release of its source, with all of
    them at once, and, for each column this release publishes exactly, with
    all the earlier releases that publish it exactly too (the groups an
    attacker can join on that column, whatever the other releases publish);
    every linked table must be k-anonymous for the largest k involved.
    Releases that share no column published exactly by all of them cannot be
    linked record by record and are not a group. ``released`` and ``stored``
    hold each earlier release's table and kept hierarchies, by id.

    Raises:
        VerificationError: a linked table has classes below k.
    """
    new = dict(hierarchies)
    groups = [[e] for e in earlier]
    if len(earlier) > 1:
        groups.append(list(earlier))
        resolved = {
            e.id: resolve_hierarchies(e, stored.get(e.id, {}), [released[e.id], table], new)
            for e in earlier
        }
        for column in table.columns:
            found = [h[column] for h in (new, *resolved.values()) if column in h]
            if found and not publishes_exactly([table], column, found):
                continue
            group = [
                e
                for e in earlier
                if column in released[e.id].columns
                and (not found or publishes_exactly([released[e.id]], column, found))
            ]
            if len(group) > 1 and group not in groups:
                groups.append(group)
    for group in groups:
        tables = [*(released[e.id] for e in group), table]
        linked = link_releases(
            tables,
            [*(f"release {e.id}" for e in group), "this release"],
            [*(resolve_hierarchies(e, stored.get(e.id, {}), tables, new) for e in group), new],
            max(k, *(e.k for e in group)),
            declared=declared(group) | (set(new) - set(complementary)),
        )
        if linked is None or linked.k_anonymous:
            continue
        ids = " ".join(str(e.id) for e in group)
        raise VerificationError(
            f"linked with release(s) {ids} on {', '.join(linked.join_columns)}, as "
            f"'kanonym audit' links them, this release leaves {linked.classes_below_k} "
            f"class(es) ({linked.records_below_k} records) below k={linked.k}; nothing "
            f"written or recorded: base it on release {group[-1].id} (based_on), "
            "generalize the shared columns further, or leave out columns the earlier "
            "release published"
        )


def new_entry(
    release_id: int,
    plan: ReleasePlan,
    result: Result,
    *,
    source: str,
    fingerprint: str,
    release_sha256: str,
    output: str,
    report: Path | None,
) -> LedgerEntry:
    """The record of ``result``, made under ``plan``, as release number ``release_id``;
    ``output`` is the release's file (absolute) or table (a URL without a password)."""
    return LedgerEntry(
        id=release_id,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        kanonym_version=__version__,
        source=source,
        source_sha256=fingerprint,
        source_rows=result.input_rows,
        quasi_identifiers={
            name: HierarchyRecord(source=h.name, height=h.height, sha256=hierarchy_fingerprint(h))
            for name, h in result.hierarchies.items()
        },
        models=tuple(model.describe() for model in result.models),
        transformation=None if result.transformation is None else dict(result.transformation),
        recoding=None if result.recoding is None else dict(result.recoding),
        seed=result.seed,
        released_columns=tuple(result.table.columns),
        released_rows=result.table.height,
        release_sha256=release_sha256,
        key=plan.key,
        based_on=None if plan.base is None else plan.base.id,
        replay_of=None if plan.replayed is None else plan.replayed.id,
        complementary=plan.complementary,
        output=output,
        report=None if report is None else str(report.resolve()),
        charge=privacy_charge(result),
    )
