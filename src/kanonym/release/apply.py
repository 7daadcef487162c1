"""Re-apply a recorded transformation to a new batch: fit once, transform many.

A release report records everything needed to repeat its release on another
table of the same schema: the quasi-identifiers and their hierarchies, the
chosen generalization (one level per quasi-identifier), k, the suppression
limit and the column roles. :func:`apply_transformation` generalizes a new
batch at exactly those levels, suppresses the rows of classes smaller than k
(minimal required suppression, Samarati & Sweeney 1998), shuffles, and re-checks
the result independently, as :func:`~kanonym.release.anonymize` does, but
without searching: when the recorded levels need more suppression on the new
batch than the limit allows, it raises :class:`StaleTransformationError`
instead of choosing other levels, so every batch is released the same way.
A batch in a database (a ``postgresql://`` URL) or in Spark is released where
its rows are, by the engine's own generalization and re-check (:mod:`kanonym.engine`).

Example:
    >>> import polars as pl
    >>> from kanonym.release import anonymize
    >>> fitted = anonymize(pl.DataFrame({"age": ["31", "34", "36", "38"]}),
    ...                    quasi_identifiers={"age": "interval:5,10"}, k=2, seed=1)
    >>> applied = apply_transformation(pl.DataFrame({"age": ["40", "41", "45", "47"]}),
    ...                                fitted.report(), seed=1)
    >>> applied.transformation, sorted(applied.table["age"].to_list())
    ({'age': 1}, ['40-44', '40-44', '45-49', '45-49'])
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kanonym.config import AnonymizationConfig, SuppressionLimit, parse_models
from kanonym.engine import EmbeddedEngine
from kanonym.engine.choose import default_engine, is_location, open_engine
from kanonym.engine.postgres import redact
from kanonym.engine.spark import is_spark_dataframe
from kanonym.errors import InputError, StaleTransformationError
from kanonym.hierarchy import Duplicates
from kanonym.io import Table, load
from kanonym.metrics import MetricContext
from kanonym.models import DifferentialPrivacy
from kanonym.options import (
    AlgorithmName,
    EngineName,
    MetricName,
    PolicyName,
    TableLike,
    TechniqueName,
)
from kanonym.recoding import RECODINGS
from kanonym.release.steps import (
    RowEngine,
    Stopwatch,
    all_metrics,
    build_evaluator,
    declare,
    measure_solution,
    refuse_unserved,
    release_node,
    sensitive_hierarchies,
)
from kanonym.release.write import report_figures, write_result
from kanonym.result import SCHEMA_VERSION, Result

if TYPE_CHECKING:
    pass

_MAPPING_SOURCE = "<Mapping>"

# What apply needs; reports also name the search's metric, policy and time limit,
# read when present (either may be null: a search uses a metric or a policy).
# Version 1 reports also need "hierarchies" (_recorded_hierarchies).
_REQUIRED_KEYS = (
    "schema_version",
    "quasi_identifiers",
    "transformation",
    "k",
    "identifying",
    "sensitive",
    "suppression_limit",
    "algorithm",
)


_READ_VERSIONS = (1, SCHEMA_VERSION)
"""Report schemas apply reads: version 1 (``hierarchies`` apart from the names) and 2."""


@dataclass(frozen=True)
class _Recipe:
    """What a report records about its release, checked.

    ``config`` holds the report's hierarchy sources as parsed specs (ARX files
    loaded, builders not yet built); ``levels`` and ``heights`` follow the
    quasi-identifier order.
    """

    config: AnonymizationConfig
    levels: tuple[int, ...]
    heights: tuple[int, ...]


def _read_report(report: str | Path) -> object:
    path = Path(report)
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise InputError(f"{report}: report file not found") from None
    except OSError as error:
        raise InputError(f"{report}: cannot read report ({error.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{report}: not a JSON report ({error})") from None


def _object(document: Mapping[str, object], key: str, where: str) -> Mapping[str, object]:
    value = document[key]
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: '{key}' must be an object, got {value!r}")
    return value


def _text(document: Mapping[str, object], key: str, where: str) -> str:
    value = document[key]
    if not isinstance(value, str):
        raise InputError(f"{where}: '{key}' must be a string, got {value!r}")
    return value


def _optional_text(document: Mapping[str, object], key: str, where: str) -> str | None:
    return None if document.get(key) is None else _text(document, key, where)


def _name_list(document: Mapping[str, object], key: str, where: str) -> tuple[str, ...]:
    value = document[key]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise InputError(f"{where}: '{key}' must be a list of column names, got {value!r}")
    if len(set(value)) != len(value):
        raise InputError(f"{where}: '{key}' names a column twice: {value}")
    return tuple(value)


def _recorded_hierarchies(
    document: Mapping[str, object], version: int, where: str
) -> tuple[str, Mapping[str, object]]:
    """The key holding the hierarchies, and quasi-identifier -> its ``{source, height}``.

    Version 2 reports record them under ``quasi_identifiers``; version 1
    reports listed the names there and the hierarchies under ``hierarchies``.
    Both are read, in the report's order of the quasi-identifiers.
    """
    if version == SCHEMA_VERSION:
        return "quasi_identifiers", _object(document, "quasi_identifiers", where)
    names = _name_list(document, "quasi_identifiers", where)
    if "hierarchies" not in document:
        raise InputError(f"{where}: not a kanonym report, missing key(s) ['hierarchies']")
    hierarchies = _object(document, "hierarchies", where)
    return "hierarchies", {name: hierarchies.get(name) for name in names}


def _level(value: object, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{where}: '{key}' must be a whole number >= 0, got {value!r}")
    return value


def _recipe(
    document: object,
    *,
    where: str,
    base_dir: Path | None,
    seed: int | None,
    table: Callable[[], Table],
    hierarchy_duplicates: Duplicates | None = None,
) -> _Recipe:
    """Check a parsed report and turn it into a config plus the recorded node."""
    if not isinstance(document, Mapping):
        raise InputError(f"{where}: a report is a JSON object, got {type(document).__name__}")
    missing = [key for key in _REQUIRED_KEYS if key not in document]
    if missing:
        raise InputError(f"{where}: not a kanonym report, missing key(s) {missing}")
    recorded = document["algorithm"]
    if document.get("recoding") is not None or (
        isinstance(recorded, str) and recorded in RECODINGS
    ):
        # Mondrian's classes were cut to fit the rows it saw: new rows could fall
        # into a class alone, so there is nothing to re-apply with a guarantee.
        raise InputError(
            f"{where}: a local recoding ({recorded}) cannot be re-applied to "
            "new rows with any guarantee; run kanonym anonymize on the new table"
        )
    version = document["schema_version"]
    # type() rather than isinstance: true and 1.0 compare equal to 1 in Python.
    if type(version) is not int or version not in _READ_VERSIONS:
        raise InputError(
            f"{where}: schema_version {version!r} is not supported; expected {SCHEMA_VERSION} "
            "(or 1)"
        )
    key, hierarchies = _recorded_hierarchies(document, version, where)
    names = tuple(hierarchies)
    transformation = _object(document, "transformation", where)
    if set(transformation) != set(names):
        raise InputError(
            f"{where}: 'transformation' has levels for {sorted(transformation)}, "
            f"but the quasi-identifiers are {list(names)}"
        )
    sources: dict[str, str] = {}
    levels, heights = [], []
    for name in names:
        entry = hierarchies[name]
        if not isinstance(entry, Mapping) or not isinstance(entry.get("source"), str):
            raise InputError(f"{where}: '{key}' needs a 'source' string for '{name}'")
        height = _level(entry.get("height"), f"{key}.{name}.height", where)
        level = _level(transformation[name], f"transformation.{name}", where)
        if level > height:
            raise InputError(
                f"{where}: level {level} of '{name}' is above its hierarchy's height {height}"
            )
        sources[name] = entry["source"]
        levels.append(level)
        heights.append(height)
    limit = _object(document, "suppression_limit", where)
    identifying = _name_list(document, "identifying", where)
    sensitive = _name_list(document, "sensitive", where)
    # Reports before column roles were required name no insensitive column: a batch
    # column they do not name is then refused, never released unseen.
    insensitive = _name_list(document, "insensitive", where) if "insensitive" in document else ()
    keep_unlisted = document.get("keep_unlisted", False)
    algorithm = _text(document, "algorithm", where)
    metric = _optional_text(document, "metric", where)
    policy = _optional_text(document, "policy", where)
    # Reports written before technique classes existed released AG_TS.
    technique = _optional_text(document, "technique", where) or "AG_TS"
    # Files are read as the release read them (reports before the option: refused).
    duplicates = hierarchy_duplicates or cast(
        Duplicates, document.get("hierarchy_duplicates", "error")
    )
    try:
        # AnonymizationConfig and SuppressionLimit check the types of k, fraction,
        # rows, time_limit and the names themselves; the casts only tell mypy what
        # they accept. A model's builder hierarchy is rebuilt on the batch's values.
        config = AnonymizationConfig(
            quasi_identifiers=sources,
            k=cast(int, document["k"]),
            identifying=identifying,
            sensitive=sensitive,
            insensitive=insensitive,
            keep_unlisted=cast(bool, keep_unlisted),
            suppression=SuppressionLimit(
                fraction=cast(float | None, limit.get("fraction")),
                rows=cast(int | None, limit.get("rows")),
            ),
            algorithm=cast(AlgorithmName, algorithm),
            metric=cast(MetricName | None, metric),
            policy=cast(PolicyName | None, policy),
            time_limit=cast(float | None, document.get("time_limit")),
            # Reports before weights existed weighed every attribute 1.
            weights=cast(dict[str, float], document.get("weights") or {}),
            models=parse_models(
                cast(list[str], document.get("model_specs", [])),
                cast(dict[str, str], document.get("sensitive_hierarchies", {})),
                base_dir=base_dir,
                duplicates=duplicates,
                table=table,
            ),
            seed=seed,
            technique=cast(TechniqueName, technique),
            base_dir=base_dir,
            hierarchy_duplicates=duplicates,
        )
    except InputError as error:
        # Name the report: "k must be ..." alone would not say where k came from.
        # The class is kept so that a malformed hierarchy file stays a HierarchyError.
        raise type(error)(f"{where}: {error}") from None
    if any(isinstance(m, DifferentialPrivacy) for m in config.models):
        # The batch's rows were never sampled: its release would not be differentially private.
        raise InputError(
            f"{where}: a differentially private release is not re-applied to a batch; release "
            "the batch with its own model (each release draws its own sample, and is charged)"
        )
    return _Recipe(config=config, levels=tuple(levels), heights=tuple(heights))


def apply_transformation(
    data: TableLike,
    report: str | Path | Mapping[str, object],
    *,
    seed: int | None = None,
    delimiter: str | None = None,
    base_dir: str | Path | None = None,
    hierarchy_duplicates: Duplicates | None = None,
    engine: EngineName | None = None,
) -> Result:
    """Release ``data`` exactly as the release that ``report`` describes.

    ``report`` is a report file written by ``kanonym anonymize`` (or
    :meth:`Result.write`) or the mapping :meth:`Result.report` returns, of
    ``schema_version`` 2 or 1 (version 1 listed the quasi-identifiers'
    names apart from their ``hierarchies``). Its hierarchy sources are
    reused: ARX files are read again (relative paths from ``base_dir``, by
    default the report file's folder, or the working directory for a
    mapping) and builder specs such as ``interval:5,10`` are
    rebuilt on the values of ``data``. Each quasi-identifier is generalized to
    its recorded level; rows of classes smaller than k are suppressed; the
    rows are shuffled with ``seed`` (drawn from the OS when None) and the
    release is re-checked independently. An ARX file listing a value twice is
    read as the report's release read it (its ``hierarchy_duplicates``) unless
    ``hierarchy_duplicates`` says otherwise. The suppression limit applies to the
    new batch: a fraction is taken of its rows. A report of a cell-suppressing
    release (technique AG_CS or _CS, or mu-Argus) is applied by running its
    cell suppression again at the recorded levels: which cells are blanked
    depends on the batch, and at most the limit's rows may hold one.

    ``data`` may also be a ``postgresql://...?table=SCHEMA.T`` URL or a Spark
    DataFrame (``engine`` chooses as for :func:`kanonym.anonymize`): the batch
    is then grouped, generalized at the recorded levels and re-checked where
    its rows are, and the result keeps the release there (``result.write`` to a
    file, or to what the engine publishes: a table of that database, Parquet;
    ``result.close()`` ends it). A cell-suppressing report
    is refused there, as is a model whose sensitive hierarchy is a builder
    (it is built on the values of a table in memory).

    Raises:
        StaleTransformationError: the recorded levels need more suppression on
            ``data`` than the limit allows, rows or rows with blanked cells (a
            new search is due).
        InputError: the report is malformed (not JSON, a key missing or
            ill-typed, ``schema_version`` neither 2 nor 1), a column is missing, a value
            is absent from an ARX hierarchy, or a rebuilt hierarchy's height
            differs from the recorded one.

    Example:
        >>> import polars as pl
        >>> report = {"schema_version": 2,
        ...           "quasi_identifiers": {"zip": {"source": "mask", "height": 5}},
        ...           "transformation": {"zip": 2}, "k": 2, "identifying": [],
        ...           "sensitive": [], "suppression_limit": {"fraction": None, "rows": 1},
        ...           "algorithm": "minimal", "policy": "min-relative-distance"}
        >>> batch = pl.DataFrame({"zip": ["02138", "02139", "02141", "02251"]})
        >>> result = apply_transformation(batch, report, seed=3)
        >>> sorted(result.table["zip"].to_list()), result.suppressed_rows
        (['021**', '021**', '021**'], 1)
    """
    started = time.perf_counter()
    if isinstance(report, Mapping):
        document: object = report
        where = _MAPPING_SOURCE
        folder = None
    else:
        document = _read_report(report)
        where = str(report)
        # Absolute, so that the new report's hierarchy sources work from any folder.
        folder = Path(report).resolve().parent
    # A file or data frame is read into memory; a table in a database stays there.
    in_memory = (
        (engine or default_engine(data)) == "embedded"
        and not is_location(data)
        and not is_spark_dataframe(data)
    )
    batch = cache(lambda: _batch(data, delimiter, in_memory))
    recipe = _recipe(
        document,
        where=where,
        base_dir=Path(base_dir) if base_dir is not None else folder,
        seed=seed,
        table=batch,
        hierarchy_duplicates=hierarchy_duplicates,
    )
    rows: RowEngine = (
        EmbeddedEngine(batch()) if in_memory else open_engine(data, engine, delimiter=delimiter)
    )
    if isinstance(rows, EmbeddedEngine):
        return _apply(rows, recipe, where=where, started=started)
    try:
        # On success the result holds the engine (its release stays there) until closed.
        return _apply(rows, recipe, where=where, started=started)
    except BaseException:
        rows.close()
        raise


def _batch(data: TableLike, delimiter: str | None, in_memory: bool) -> Table:
    """The batch in memory, for a model whose sensitive hierarchy is built on its values."""
    # (A Spark DataFrame is never read into memory: in_memory is false for it.)
    if not in_memory or is_spark_dataframe(data):
        raise InputError(
            f"{redact(str(data))}: the report's models build a sensitive attribute's hierarchy "
            "on the values of a table in memory; read the batch into a file or DataFrame first"
        )
    return load(data, delimiter=delimiter)


def _apply(rows: RowEngine, recipe: _Recipe, *, where: str, started: float) -> Result:
    """Generalize ``rows`` at the recipe's levels, suppress, shuffle and re-check."""
    config = recipe.config
    table = rows.table if isinstance(rows, EmbeddedEngine) else None
    timings = {"read": time.perf_counter() - started}
    stopwatch = Stopwatch(timings)
    refuse_unserved(rows, config)
    hierarchies = declare(rows, config)
    for (name, hierarchy), height in zip(hierarchies.items(), recipe.heights, strict=True):
        # A mask hierarchy's height follows the longest value, so on a batch with
        # longer values the recorded level would mask a different number of characters.
        if hierarchy.height != height:
            raise InputError(
                f"{rows.source}: column '{name}': hierarchy {hierarchy.name} has height "
                f"{hierarchy.height} on this table, but {where} records {height}"
            )
    encoded = rows.encode(hierarchies)
    max_suppressed = config.suppression.max_rows(rows.rows)
    evaluator = build_evaluator(rows, config, encoded, max_suppressed)
    context = MetricContext(
        encoded=encoded,
        frequency_set=evaluator.frequency_set,
        k=config.k,
        weights=config.weight_vector(encoded.names),
    )
    metrics = all_metrics(context)
    if config.metric is not None:
        # Its per-class loss orders the classes a risk threshold suppresses, as in the run
        # that recorded the node (kanonym.models.base.SampleModel).
        evaluator.use_metric(metrics[config.metric])
    stopwatch.lap("encode")
    # No search: the one recorded node is checked, and kept or refused as it is.
    evaluation = evaluator.evaluate(recipe.levels)
    if not evaluation.satisfied:
        levels = ", ".join(f"{n}={v}" for n, v in zip(encoded.names, recipe.levels, strict=True))
        if config.granularity.cells:
            raise StaleTransformationError(
                f"{rows.source}: at the generalization [{levels}] of {where}, "
                f"{evaluation.suppressed_rows} of {rows.rows} rows fail k={config.k} "
                f"and blanking cells cannot protect them within the limit of "
                f"{max_suppressed} rows; anonymize this table anew"
            )
        raise StaleTransformationError(
            f"{rows.source}: the generalization [{levels}] of {where} needs "
            f"{evaluation.suppressed_rows} of {rows.rows} rows suppressed for "
            f"k={config.k}, but the limit is {max_suppressed}; anonymize this table anew"
        )
    solution = measure_solution(evaluation, evaluator, metrics)
    stopwatch.lap("search")
    released, chosen_seed, cells = release_node(
        rows, evaluator, hierarchies, recipe.levels, config, stopwatch
    )
    return Result(
        writer=write_result,
        figure_maker=report_figures,
        released=released,
        transformation=solution.transformation,
        metrics=solution.metrics,
        minimal_generalizations=(solution,),
        config=config,
        seed=chosen_seed,
        input_rows=rows.rows,
        suppressed_rows=solution.suppressed_rows,
        max_suppressed_rows=max_suppressed,
        nodes_checked=evaluator.checks,
        # The levels were searched for on another table; nothing is proven about this one.
        proven_optimal=False,
        models=evaluator.models,
        sensitive_hierarchies=sensitive_hierarchies(evaluator.models),
        hierarchies=hierarchies,
        source=rows.source,
        dialect=None if table is None else table.dialect,
        timings=timings,
        applied_from=where,
        suppressed_cells=cells,
        input_table=table,
    )
