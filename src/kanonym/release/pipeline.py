"""The one-directional pipeline: read -> declare -> encode -> search ->
transform -> verify -> write + report.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> race = Hierarchy("race", (("asian", "black", "white"), ("person",) * 3))
    >>> table = pl.DataFrame({"race": ["asian", "asian", "black", "white"]})
    >>> result = anonymize(table, quasi_identifiers={"race": race}, k=2, seed=7)
    >>> result.transformation, result.table.height
    ({'race': 1}, 4)
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from kanonym.config import AnonymizationConfig, HierarchyLike, ReleaseJob, SuppressionLimit
from kanonym.encode import encode_with_population
from kanonym.engine import EmbeddedEngine
from kanonym.engine.base import ServerEngine
from kanonym.engine.choose import open_engine
from kanonym.engine.postgres import PostgresEngine, is_postgres_url, redact
from kanonym.errors import InputError
from kanonym.hierarchy import Duplicates
from kanonym.io import Table, load
from kanonym.lattice import Lattice
from kanonym.models import PrivacyModel
from kanonym.options import (
    AlgorithmName,
    EngineName,
    MetricName,
    PolicyName,
    TableLike,
    TechniqueName,
)
from kanonym.release.differential_privacy import draw_sample, private_model, private_search
from kanonym.release.local import release_local
from kanonym.release.steps import (
    RowEngine,
    Stopwatch,
    announce,
    bind_metrics,
    build_evaluator,
    declare,
    level_bounds,
    measure_solution,
    people_at,
    refuse_estimated_k_map,
    refuse_unserved,
    refuse_unserved_risk,
    release_node,
    require_population,
    search_full_domain,
    sensitive_hierarchies,
)
from kanonym.release.write import report_figures, write_result
from kanonym.result import Result
from kanonym.search import Progress, SearchControl
from kanonym.search.attribute_suppression import search_attribute_suppression
from kanonym.search.trace import SearchTrace
from kanonym.verify import CheckSummary, measure_table


def _run(
    table: Table | ServerEngine[Any],
    config: AnonymizationConfig,
    read_seconds: float,
    on_progress: Callable[[Progress], None] | None,
    population: RowEngine | None = None,
) -> Result:
    engine: RowEngine = EmbeddedEngine(table) if isinstance(table, Table) else table
    refuse_unserved(engine, config)
    require_population(engine, config, population)
    refuse_estimated_k_map(engine, config)
    refuse_unserved_risk(engine, config)
    private = draw_sample(engine, config)
    if private is not None:
        # Differential privacy (SafePub): only the drawn rows go on, every class below k
        # suppressed; the generalization is its scheme's (release.differential_privacy).
        engine, config = private.engine, private.config
    if config.local_recoding:
        # It encodes, partitions, recodes and verifies in one call: one stage here. On an
        # engine that keeps the rows the release stays there (a ServerRelease).
        announce(on_progress, "searching", detail=f"{config.algorithm}, local recoding")
        local = release_local(engine, config, read_seconds)
        return dataclasses.replace(local, on_progress=on_progress)
    timings = {"read": read_seconds}
    stopwatch = Stopwatch(timings)
    steps = ("hierarchies", "quasi-identifiers", "frequency set", "metrics")
    announce(on_progress, "encoding", detail=steps[0], done=0, total=len(steps))
    hierarchies = declare(engine, config, population)
    announce(on_progress, "encoding", detail=steps[1], done=1, total=len(steps))
    encoded = engine.encode(hierarchies)
    grouped_population = None if population is None else population.group(list(hierarchies))
    if population is not None and grouped_population is not None:
        encoded = encode_with_population(
            encoded,
            grouped_population,
            hierarchies,
            source=engine.source,
            population_source=population.source,
        )
    max_suppressed = config.suppression.max_rows(engine.rows)
    announce(on_progress, "encoding", detail=steps[2], done=2, total=len(steps))
    evaluator = build_evaluator(engine, config, encoded, max_suppressed)
    announce(on_progress, "encoding", detail=steps[3], done=3, total=len(steps))
    metrics = bind_metrics(config, evaluator)
    lower, upper = level_bounds(config, hierarchies)
    stopwatch.lap("encode")
    announce(on_progress, "searching", detail=config.algorithm)
    control = SearchControl.with_time_limit(config.time_limit, on_progress)
    metric = None if config.metric is None else metrics[config.metric]
    if private is not None:
        evaluator.use_metric(metric)
        outcome, lower, upper, private = private_search(
            private, evaluator, hierarchies, lower, upper, control
        )
        config = private.config
    elif config.technique == "_AS":
        evaluator.use_metric(metric)
        outcome = search_attribute_suppression(
            evaluator,
            algorithm=config.algorithm,
            metric=config.metric,
            policy=config.policy,
            weights=config.weight_vector(encoded.names),
            k=config.k,
            control=control,
        )
    else:
        outcome = search_full_domain(config, evaluator, metrics, (lower, upper), control)
    nodes_checked = outcome.nodes_checked
    # The lattice figure shows the full-domain lattice; _AS searched a lattice of its own.
    # Built only if the HTML report draws the lattice (Result.search).
    trace = (
        None
        if config.technique == "_AS"
        else SearchTrace.deferred(Lattice(upper, lower), evaluator, outcome, policy=config.policy)
    )
    stopwatch.lap("search")
    count = len(outcome.solutions)
    measured = []
    for done, evaluation in enumerate(outcome.solutions):
        announce(on_progress, "measuring", detail=f"{count} solution(s)", done=done, total=count)
        measured.append(measure_solution(evaluation, evaluator, metrics))
    solutions = tuple(measured)
    best = outcome.best
    people = None
    if grouped_population is not None:
        people = people_at(grouped_population, hierarchies, best.node)
    released, seed, cells = release_node(
        engine, evaluator, hierarchies, best.node, config, stopwatch, on_progress, people
    )
    return Result(
        writer=write_result,
        figure_maker=report_figures,
        released=released,
        transformation=solutions[0].transformation,
        metrics=solutions[0].metrics,
        minimal_generalizations=solutions,
        config=config,
        seed=seed,
        input_rows=engine.rows if private is None else private.input_rows,
        suppressed_rows=solutions[0].suppressed_rows,
        max_suppressed_rows=max_suppressed,
        nodes_checked=nodes_checked,
        proven_optimal=outcome.proven_optimal,
        models=evaluator.models if private is None else private.models,
        sensitive_hierarchies=sensitive_hierarchies(evaluator.models),
        hierarchies=hierarchies,
        source=engine.source,
        dialect=table.dialect if isinstance(table, Table) else None,
        timings=timings,
        suppressed_cells=cells,
        input_table=table if isinstance(table, Table) else None,
        search_record=trace,
        population_classes=people,
        on_progress=on_progress,
    )


def anonymize(
    data: TableLike,
    config: AnonymizationConfig | None = None,
    *,
    quasi_identifiers: Mapping[str, HierarchyLike | str | Path] | None = None,
    k: int | None = None,
    identifying: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    insensitive: Sequence[str] = (),
    keep_unlisted: bool = False,
    models: Sequence[PrivacyModel] = (),
    max_suppression: float | None = None,
    max_suppressed_rows: int | None = None,
    algorithm: AlgorithmName = "optimal",
    metric: MetricName | None = None,
    policy: PolicyName | None = None,
    time_limit: float | None = None,
    weights: Mapping[str, float] | None = None,
    min_levels: Mapping[str, int] | None = None,
    max_levels: Mapping[str, int] | None = None,
    seed: int | None = None,
    technique: TechniqueName | None = None,
    hierarchy_duplicates: Duplicates = "error",
    delimiter: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    engine: EngineName | None = None,
    population: TableLike | None = None,
) -> Result:
    """Anonymize ``data`` (a CSV/Parquet path, a Polars or pandas DataFrame, or a
    ``postgresql://`` URL).

    Either pass a ready :class:`~kanonym.config.AnonymizationConfig` or the
    same fields as keywords (``max_suppression`` and ``max_suppressed_rows``
    fill its ``suppression``). ``models`` are privacy models beyond
    k-anonymity, as objects: ``[kanonym.DistinctLDiversity(attribute="disease",
    l=3)]``; :func:`kanonym.models.parse_model` reads the command line's specs.
    The option names are typed (:mod:`kanonym.options`), so a type checker
    rejects ``algorithm="optimla"``. Every column of ``data`` must have a role:
    named in ``quasi_identifiers``, ``identifying`` (removed), ``sensitive``
    or ``insensitive`` (released unchanged), unless ``keep_unlisted=True``
    releases the columns named nowhere unchanged; otherwise
    :class:`~kanonym.errors.UnassignedColumnsError` is raised before any work.
    The returned :class:`Result` has been verified
    independently of the search; call :meth:`Result.write` to write it.
    ``algorithm="mondrian"`` (or ``"mondrian-relaxed"``) releases a local
    recoding instead (:mod:`kanonym.release.local`); ``numeric`` and
    ``categorical`` then override which quasi-identifiers it cuts as numbers.
    With :class:`~kanonym.models.DifferentialPrivacy` among ``models`` (SafePub:
    :mod:`kanonym.release.differential_privacy`) ``k`` may be left out: the
    model derives its own. ``population`` is the table ``data`` was drawn from (a path, DataFrame or
    URL, read by its own default engine), for the models that judge a class by
    its population (:class:`~kanonym.models.DeltaPresence`,
    :class:`~kanonym.models.KMap` with a population table): every row of
    ``data`` must be one of its rows; only ``data``'s rows are released.
    ``on_progress`` receives :class:`~kanonym.search.Progress` reports: each
    stage as it starts (reading, encoding, searching, ...), the search's own
    reports, and, when the result is written, writing and drawing the HTML
    report figure by figure (the command line draws its progress line from
    them).
    """
    if config is None:
        if k is None and private_model(models) is not None:
            k = 1  # differential privacy derives its own k (SafePub)
        if quasi_identifiers is None or k is None:
            raise InputError("anonymize needs `quasi_identifiers` and `k` (or a config)")
        config = AnonymizationConfig(
            quasi_identifiers=quasi_identifiers,
            k=k,
            identifying=tuple(identifying),
            sensitive=tuple(sensitive),
            insensitive=tuple(insensitive),
            keep_unlisted=keep_unlisted,
            models=tuple(models),
            suppression=SuppressionLimit(fraction=max_suppression, rows=max_suppressed_rows),
            algorithm=algorithm,
            metric=metric,
            policy=policy,
            time_limit=time_limit,
            weights=weights or {},
            min_levels=min_levels or {},
            max_levels=max_levels or {},
            seed=seed,
            numeric=tuple(numeric),
            categorical=tuple(categorical),
            technique=technique,
            hierarchy_duplicates=hierarchy_duplicates,
        )
    started = time.perf_counter()
    announce(on_progress, "reading", detail=_named(data))
    with _population(population, delimiter) as universe:
        rows = open_engine(data, engine, delimiter=delimiter)
        if isinstance(rows, EmbeddedEngine):
            return _run(rows.table, config, time.perf_counter() - started, on_progress, universe)
        try:
            # On success the result holds the engine (its release stays there) until closed.
            return _run(rows, config, time.perf_counter() - started, on_progress, universe)
        except BaseException:
            rows.close()
            raise


@contextlib.contextmanager
def _population(data: TableLike | None, delimiter: str | None) -> Iterator[RowEngine | None]:
    """The population table's engine (its input's default) while a release reads it."""
    if data is None:
        yield None
        return
    opened = open_engine(data, None, delimiter=delimiter)
    try:
        yield opened
    finally:
        if not isinstance(opened, EmbeddedEngine):
            opened.close()


def _named(data: object) -> str:
    """The input's file name for a progress line (a DataFrame has none)."""
    if is_postgres_url(data):
        return redact(str(data))
    return Path(data).name if isinstance(data, str | Path) else "DataFrame"


def anonymize_table(
    table: Table,
    config: AnonymizationConfig,
    *,
    read_seconds: float = 0.0,
    on_progress: Callable[[Progress], None] | None = None,
) -> Result:
    """:func:`anonymize` for a table already loaded (the ledger fingerprints it first)."""
    return _run(table, config, read_seconds, on_progress)


def check(
    data: TableLike,
    columns: Sequence[str],
    *,
    k: int,
    sensitive: Sequence[str] = (),
    delimiter: str | None = None,
) -> CheckSummary:
    """Measure ``data`` grouped on ``columns``, compared as they are (``kanonym check``).

    ``columns`` are the quasi-identifiers' column names (a release's values
    need no hierarchy). Reports whether the table is k-anonymous and, for each
    column in ``sensitive``, its l-diversity, t-closeness, beta-likeness,
    delta-disclosure and (alpha,k) measures (see :mod:`kanonym.verify.sensitive`).

    Raises:
        InputError: k is not a whole number >= 1, a column is missing or named
            twice, a sensitive column is also one of ``columns``, or the table
            has no rows.

    Example:
        >>> import polars as pl
        >>> table = pl.DataFrame({"zip": ["0213*", "0213*", "0214*"], "disease": ["a", "b", "a"]})
        >>> summary = check(table, ["zip"], k=2, sensitive=["disease"])
        >>> summary.rows_below_k, summary.sensitive["disease"].l_distinct
        (1, 1)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"`k` must be a whole number >= 1, got {k!r}")
    for what, names in (("`columns`", columns), ("`sensitive`", sensitive)):
        if isinstance(names, str):
            raise InputError(f"{what} must be a list of column names, got the string {names!r}")
    for name in sensitive:
        if name in columns:
            raise InputError(f"column '{name}' is in both `columns` and `sensitive`")
    if len(set(sensitive)) != len(sensitive):
        raise InputError(f"`sensitive`: a column is named twice in {list(sensitive)}")
    table = load(data, delimiter=delimiter)
    table.require([*columns, *sensitive])
    return measure_table(table.frame, columns, k, sensitive)


def compute_job(
    job: ReleaseJob, *, on_progress: Callable[[Progress], None] | None = None
) -> Result:
    """The release a :class:`~kanonym.config.ReleaseJob` makes, verified and not yet
    written: :func:`run_job`'s first step (its input, engine, population and table
    output honoured); :func:`write_job` writes it.

    A table output is checked in the server (absent unless ``job.replace``, a
    schema the user may create tables in) right after connecting, before the
    search. A release kept where the rows live holds its engine until closed
    (:meth:`Result.close`).
    """
    started = time.perf_counter()
    announce(on_progress, "reading", detail=_named(job.input))
    with _population(job.population, job.delimiter) as universe:
        rows = open_engine(job.input, job.engine, delimiter=job.delimiter)
        if isinstance(rows, EmbeddedEngine):
            return _run(
                rows.table, job.config, time.perf_counter() - started, on_progress, universe
            )
        try:
            if isinstance(rows, PostgresEngine) and is_postgres_url(job.output):
                rows.destination(str(job.output), replace=job.replace)
            return _run(rows, job.config, time.perf_counter() - started, on_progress, universe)
        except BaseException:
            rows.close()
            raise


def write_job(job: ReleaseJob, result: Result) -> None:
    """Write ``result`` (made by :func:`compute_job` from ``job``) where the job says:
    :func:`run_job`'s second step. A release kept where the rows live is closed if its
    writing fails."""
    try:
        result.write(
            job.output,
            report=job.report,
            report_html=job.report_html,
            replace=job.replace,
            check_lattice=job.check_lattice,
        )
    except BaseException:
        result.close()
        raise


def run_job(job: ReleaseJob, *, on_progress: Callable[[Progress], None] | None = None) -> Result:
    """Run a :class:`~kanonym.config.ReleaseJob` and write its files (or its table):
    :func:`compute_job`, then :func:`write_job`.

    A table output is checked in the server (absent unless ``job.replace``, a
    schema the user may create tables in) right after connecting, before the
    search.
    """
    from kanonym.figures.render import figure_workers

    # The processes that draw the page's figures start while the search runs, and stop
    # with the release if it fails before drawing them.
    with figure_workers(job.report_html is not None):
        result = compute_job(job, on_progress=on_progress)
        write_job(job, result)
    # The caller reads the result's counts from the engine, then closes it (Result.close).
    return result
