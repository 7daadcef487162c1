"""The release path of a local recoding: read -> declare -> encode -> partition ->
recode -> verify -> write + report.

Mondrian (:mod:`kanonym.recoding`) partitions the rows so that every class
satisfies k and the other models; each row is released with its partition's
labels, identifying columns dropped, rows shuffled. Nothing is suppressed.

On the embedded engine the partitioning reads the rows' codes, and before
anything is written :func:`kanonym.verify.verify_local_recoding` checks every
released row against its input row and k on the released text, and
:func:`kanonym.verify.verify_models` the other models, with code that shares
nothing with the partitioning. On an engine that keeps the rows elsewhere
(PostgreSQL, Spark, a file streamed from disk) the partitioning reads one
grouping of the quasi-identifiers and the sensitive columns the models read,
the frequency set refined by those values (a median of rows is a weighted
median of tuples, so the partitions are the same); the labels of each grouped
tuple go to the engine as data (:class:`kanonym.engine.TupleRecoding`), which
builds the release and re-checks it where the rows are
(:meth:`~kanonym.engine.ServerEngine.verify_recoding`). Both give the same
partitions, labels, metrics and released multiset for one input, job and
seed.

Example:
    >>> import polars as pl
    >>> from kanonym.release import anonymize
    >>> table = pl.DataFrame({"age": ["31", "34", "52", "58", "60"],
    ...                       "zip": ["02138", "02139", "02141", "02141", "02142"]})
    >>> result = anonymize(table, quasi_identifiers={"age": "interval:10", "zip": "mask"},
    ...                    k=2, algorithm="mondrian", seed=3)
    >>> sorted(zip(result.table["age"], result.table["zip"]))
    [('30-49', '0213*'), ('30-49', '0213*'), ('50-69', '0214*'), ('50-69', '0214*'), \
('50-69', '0214*')]
    >>> result.transformation, result.recoding["classes"], result.metrics["aecs"]
    (None, 2, 1.25)
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import numpy as np
import polars as pl

from kanonym.config import AnonymizationConfig
from kanonym.encode import Grouped, encode_grouped, encode_sensitive
from kanonym.engine import EmbeddedEngine, Expected, ServerRelease, TupleRecoding
from kanonym.engine.base import ServerEngine
from kanonym.io import Table
from kanonym.metrics.local import local_recoding_measures, ncp
from kanonym.models import PrivacyModel
from kanonym.recoding import RECODINGS, Partitioning, numeric_flags
from kanonym.release.steps import (
    Stopwatch,
    declare,
    declare_models,
    sensitive_hierarchies,
)
from kanonym.release.write import report_figures, write_result
from kanonym.result import Result
from kanonym.transform import recode
from kanonym.verify import verify_local_recoding, verify_models


def _read_sensitive(config: AnonymizationConfig, models: Sequence[PrivacyModel]) -> list[str]:
    """The job's sensitive columns the models read (the others are released as they are)."""
    return [n for n in config.sensitive if any(n in m.sensitive_attributes for m in models)]


def release_local(
    engine: EmbeddedEngine | ServerEngine[object], config: AnonymizationConfig, read_seconds: float
) -> Result:
    """Release the engine's table by the local recoding ``config.algorithm`` names, verified.

    The report's ``timings`` are ``read``, ``encode``, ``partition``,
    ``transform`` and ``verify`` (``write`` is added when written).

    Raises:
        InputError: a column is missing or a value is absent from its
            hierarchy, k exceeds the table, a column named numeric holds a
            value that is not a number, or the whole table fails a model.
        VerificationError: the independent re-check failed (a bug).
    """
    if isinstance(engine, EmbeddedEngine):
        return _release_in_memory(engine.table, config, read_seconds)
    return _release_where_rows_live(engine, config, read_seconds)


def _measures(partitioning: Partitioning, config: AnonymizationConfig) -> dict[str, object]:
    weights = config.weight_vector([axis.name for axis in partitioning.axes])
    return local_recoding_measures(
        partitioning.class_sizes(),
        k=config.k,
        ncp_value=ncp(partitioning.penalties(), partitioning.sizes, weights),
    )


def _release_in_memory(table: Table, config: AnonymizationConfig, read_seconds: float) -> Result:
    """The rows in memory: partitioned by their codes, checked row by row."""
    timings = {"read": read_seconds}
    stopwatch = Stopwatch(timings)
    recoding = RECODINGS[config.algorithm]
    engine = EmbeddedEngine(table)
    hierarchies = declare(engine, config)
    models = declare_models(config)
    encoded = engine.encode(hierarchies)
    numeric = numeric_flags(
        encoded,
        config.hierarchies,
        numeric=config.numeric,
        categorical=config.categorical,
        source=table.source,
    )
    sensitive = encode_sensitive(table.frame, _read_sensitive(config, models))
    stopwatch.lap("encode")
    partitioning = recoding.partition(
        encoded, models, sensitive=sensitive, numeric=numeric, source=table.source
    )
    stopwatch.lap("partition")
    seed = config.seed if config.seed is not None else secrets.randbits(63)
    released, origin = recode(table.frame, partitioning, drop=config.identifying, seed=seed)
    stopwatch.lap("transform")
    verify_local_recoding(
        released,
        source=table.frame,
        origin=origin,
        columns=encoded.names,
        numeric={name for name, flag in zip(encoded.names, numeric, strict=True) if flag},
        hierarchies=hierarchies,
        k=config.k,
        removed_columns=config.identifying,
    )
    verify_models(released, columns=encoded.names, source=table.frame, models=models)
    stopwatch.lap("verify")
    return Result(
        writer=write_result,
        figure_maker=report_figures,
        released=released,
        transformation=None,
        metrics=_measures(partitioning, config),
        minimal_generalizations=(),
        config=config,
        seed=seed,
        input_rows=table.frame.height,
        suppressed_rows=0,
        max_suppressed_rows=0,
        nodes_checked=0,
        proven_optimal=False,
        models=tuple(models),
        sensitive_hierarchies=sensitive_hierarchies(models),
        hierarchies=hierarchies,
        source=table.source,
        dialect=table.dialect,
        timings=timings,
        recoding=partitioning.describe(),
        input_table=table,
    )


def _release_where_rows_live(
    engine: ServerEngine[object], config: AnonymizationConfig, read_seconds: float
) -> Result:
    """The rows kept by the engine: partitioned on one grouping, recoded and checked there."""
    timings = {"read": read_seconds}
    stopwatch = Stopwatch(timings)
    recoding = RECODINGS[config.algorithm]
    hierarchies = declare(engine, config)
    models = declare_models(config)
    needed = _read_sensitive(config, models)
    # One GROUP BY: the quasi-identifiers and the sensitive values the models read.
    grouped = engine.group([*hierarchies, *needed])
    encoded, tuples = encode_grouped(grouped, hierarchies)
    numeric = numeric_flags(
        encoded,
        config.hierarchies,
        numeric=config.numeric,
        categorical=config.categorical,
        source=engine.source,
    )
    sensitive = encode_sensitive(grouped.values, needed)
    stopwatch.lap("encode")
    partitioning = recoding.partition_grouped(
        encoded,
        models,
        tuples=tuples,
        counts=grouped.counts,
        sensitive=sensitive,
        numeric=numeric,
        source=engine.source,
    )
    stopwatch.lap("partition")
    seed = config.seed if config.seed is not None else secrets.randbits(63)
    plan = tuple_recoding(
        grouped,
        partitioning,
        keys=(*encoded.names, *needed),
        numeric=frozenset(n for n, flag in zip(encoded.names, numeric, strict=True) if flag),
        drop=tuple(config.identifying),
        seed=seed,
    )
    handle = engine.recode(plan)
    stopwatch.lap("transform")
    engine.verify_recoding(
        handle,
        plan,
        Expected(
            hierarchies=hierarchies,
            k=config.k,
            suppressed_rows=0,
            max_suppressed_rows=0,
            models=models,
        ),
    )
    stopwatch.lap("verify")
    kept = ServerRelease(
        engine=engine,
        handle=handle,
        columns=tuple(c for c in engine.columns if c not in plan.drop),
        rows=engine.rows,
    )
    return Result(
        writer=write_result,
        figure_maker=report_figures,
        released=kept,
        transformation=None,
        metrics=_measures(partitioning, config),
        minimal_generalizations=(),
        config=config,
        seed=seed,
        input_rows=engine.rows,
        suppressed_rows=0,
        max_suppressed_rows=0,
        nodes_checked=0,
        proven_optimal=False,
        models=tuple(models),
        sensitive_hierarchies=sensitive_hierarchies(models),
        hierarchies=hierarchies,
        source=engine.source,
        dialect=None,
        timings=timings,
        recoding=partitioning.describe(),
    )


def tuple_recoding(
    grouped: Grouped,
    partitioning: Partitioning,
    *,
    keys: Sequence[str],
    numeric: frozenset[str],
    drop: tuple[str, ...],
    seed: int,
) -> TupleRecoding:
    """The labels of every grouped tuple's rows, as the plan an engine applies.

    ``partitioning`` partitioned ``grouped``'s tuples (their records, in order:
    :meth:`kanonym.recoding.Mondrian.partition_grouped`); ``keys`` names
    ``grouped``'s columns.

    Example:
        >>> from kanonym.encode import encode_grouped
        >>> from kanonym.hierarchy import Hierarchy
        >>> from kanonym.models import KAnonymity
        >>> grouped = Grouped(pl.DataFrame({"x": ["1", "2", "3"]}), np.array([1, 2, 1]))
        >>> h = Hierarchy("x", (("1", "2", "3"), ("*",) * 3))
        >>> encoded, tuples = encode_grouped(grouped, {"x": h})
        >>> p = RECODINGS["mondrian-relaxed"].partition_grouped(
        ...     encoded, [KAnonymity(k=2)], tuples=tuples, counts=grouped.counts)
        >>> plan = tuple_recoding(grouped, p, keys=["x"], numeric=frozenset({"x"}), drop=(),
        ...                       seed=0)
        >>> # The two rows of 2 are split: ranked 1 goes with the 1, ranked 2 with the 3.
        >>> plan.tuples.rows()
        [('1', 0, False, '1-2'), ('2', 1, True, None), ('3', 2, False, '2-3')]
        >>> plan.pieces.rows()
        [(1, 1, 1, '1-2'), (1, 2, 2, '2-3')]
    """
    names = tuple(axis.name for axis in partitioning.axes)
    labels = [pl.Series(partitioning.labels(j), dtype=pl.String) for j in range(len(names))]
    per_unit = partitioning.unit_pieces()
    split = per_unit > 1
    unit = partitioning.record_unit
    # A unit's only piece (for units not split): its first.
    only = partitioning.piece_partition[np.cumsum(per_unit) - per_unit][unit]
    tuples = pl.DataFrame(
        [
            *(
                grouped.values.get_column(name).cast(pl.String).alias(TupleRecoding.key(i))
                for i, name in enumerate(keys)
            ),
            pl.Series(TupleRecoding.UNIT, unit, pl.Int64),
            pl.Series(TupleRecoding.SPLIT, split[unit], pl.Boolean),
            *(labels[j].gather(only).alias(TupleRecoding.label(j)) for j in range(len(names))),
        ]
    ).with_columns(
        pl.when(~pl.col(TupleRecoding.SPLIT)).then(pl.col(TupleRecoding.label(j)))
        for j in range(len(names))
    )
    mine = split[partitioning.piece_unit]
    piece_unit = partitioning.piece_unit[mine]
    count = partitioning.piece_count[mine]
    part = partitioning.piece_partition[mine]
    # Ranks from 1 within each unit: its pieces take its rows in order.
    end = np.cumsum(count)
    starts = np.flatnonzero(np.diff(piece_unit, prepend=-1) != 0)
    before = np.repeat((end - count)[starts], np.diff(np.append(starts, len(count))))
    pieces = pl.DataFrame(
        [
            pl.Series(TupleRecoding.UNIT, piece_unit, pl.Int64),
            pl.Series(TupleRecoding.FIRST, end - count - before + 1, pl.Int64),
            pl.Series(TupleRecoding.LAST, end - before, pl.Int64),
            *(labels[j].gather(part).alias(TupleRecoding.label(j)) for j in range(len(names))),
        ]
    )
    return TupleRecoding(
        names=names,
        keys=tuple(keys),
        tuples=tuples,
        pieces=pieces,
        numeric=numeric,
        drop=drop,
        seed=seed,
    )
