"""The release path of a local recoding: read -> declare -> encode -> partition ->
recode -> verify -> write + report.

Mondrian (:mod:`kanonym.recoding`) partitions the rows so that every class
satisfies k and the other models; each row is released with its partition's
labels, identifying columns dropped, rows shuffled. Before anything is
written, :func:`kanonym.verify.verify_local_recoding` checks every released
row against its input row and k on the released text, and
:func:`kanonym.verify.verify_models` the other models, with code that shares
nothing with the partitioning. Nothing is suppressed.

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

from kanonym.config import AnonymizationConfig
from kanonym.encode import encode_sensitive
from kanonym.engine import EmbeddedEngine
from kanonym.io import Table
from kanonym.metrics.local import local_recoding_measures, ncp
from kanonym.recoding import RECODINGS, numeric_flags
from kanonym.release.steps import (
    Stopwatch,
    declare,
    declare_models,
    sensitive_hierarchies,
)
from kanonym.release.write import write_result
from kanonym.result import Result
from kanonym.transform import recode
from kanonym.verify import verify_local_recoding, verify_models


def release_local(table: Table, config: AnonymizationConfig, read_seconds: float) -> Result:
    """Release ``table`` by the local recoding ``config.algorithm`` names, verified.

    The report's ``timings`` are ``read``, ``encode``, ``partition``,
    ``transform`` and ``verify`` (``write`` is added when written).

    Raises:
        InputError: a column is missing or a value is absent from its
            hierarchy, k exceeds the table, a column named numeric holds a
            value that is not a number, or the whole table fails a model.
        VerificationError: the independent re-check failed (a bug).
    """
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
    needed = [n for n in config.sensitive if any(n in m.sensitive_attributes for m in models)]
    sensitive = encode_sensitive(table.frame, needed)
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
    weights = config.weight_vector(encoded.names)
    metrics = local_recoding_measures(
        partitioning.class_sizes(),
        k=config.k,
        ncp_value=ncp(partitioning.penalties(), partitioning.sizes, weights),
    )
    return Result(
        writer=write_result,
        released=released,
        transformation=None,
        metrics=metrics,
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
