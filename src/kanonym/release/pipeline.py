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

import dataclasses
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import polars as pl

from kanonym.config import AnonymizationConfig, HierarchyLike, ReleaseJob, SuppressionLimit
from kanonym.encode import EncodedTable, SensitiveAttribute, encode_sensitive
from kanonym.engine import EmbeddedEngine, Generalization
from kanonym.errors import InputError, UnassignedColumnsError
from kanonym.evaluation import CellSuppressionEvaluator, NodeEvaluation, NodeEvaluator
from kanonym.evaluation.cells import measure_cells
from kanonym.hierarchy import Duplicates, Hierarchy, resolve
from kanonym.io import Table, load
from kanonym.lattice import Lattice, Node
from kanonym.metrics import METRICS, MetricContext, UtilityMetric, make_metric, report_measures
from kanonym.metrics.measures import reported_score
from kanonym.models import KAnonymity, PrivacyModel
from kanonym.options import AlgorithmName, MetricName, PolicyName, TableLike, TechniqueName
from kanonym.release.granularity import release_cells
from kanonym.release.write import write_result
from kanonym.result import CellReport, Result, Solution
from kanonym.search import ALGORITHMS, Progress, SearchControl, run_search
from kanonym.search.attribute_suppression import search_attribute_suppression
from kanonym.search.trace import SearchTrace
from kanonym.verify import CellCounts, CheckSummary, measure_table, verify_models, verify_release


def declare_models(config: AnonymizationConfig) -> list[PrivacyModel]:
    """k-anonymity and the job's other models."""
    return [KAnonymity(k=config.k), *config.models]


def sensitive_hierarchies(models: Sequence[PrivacyModel]) -> dict[str, Hierarchy]:
    """The hierarchies the models hold for their sensitive attributes (for the report)."""
    found: dict[str, Hierarchy] = {}
    for model in models:
        hierarchy = getattr(model, "hierarchy", None)
        if isinstance(hierarchy, Hierarchy):
            found[model.sensitive_attributes[0]] = hierarchy
    return found


def encode_read_sensitive(
    table: Table, config: AnonymizationConfig, models: Sequence[PrivacyModel]
) -> tuple[SensitiveAttribute, ...]:
    """The job's sensitive columns that ``models`` read, encoded (the others are not)."""
    needed = [n for n in config.sensitive if any(n in m.sensitive_attributes for m in models)]
    return encode_sensitive(table.frame, needed)


def build_evaluator(
    table: Table, config: AnonymizationConfig, encoded: EncodedTable, max_suppressed: int
) -> NodeEvaluator:
    """The node evaluator for the job's models, with the sensitive columns they read."""
    models = declare_models(config)
    sensitive = encode_read_sensitive(table, config, models)
    if config.granularity.cells:
        return CellSuppressionEvaluator(
            encoded,
            models,
            max_suppressed_rows=max_suppressed,
            sensitive=sensitive,
            method="mu-argus" if config.algorithm == "mu-argus" else "patterns",
            weights=config.weight_vector(encoded.names),
        )
    return NodeEvaluator(encoded, models, max_suppressed_rows=max_suppressed, sensitive=sensitive)


def declare(table: Table, config: AnonymizationConfig) -> dict[str, Hierarchy]:
    """Check that every named column exists and every column has a role; resolve each QI's
    hierarchy.

    Raises:
        UnassignedColumnsError: a column is named in no role and the config
            does not keep unlisted columns.
        InputError: a named column is missing, the table is empty, k exceeds
            its rows, or a hierarchy does not fit its column.
    """
    table.require(
        [*config.hierarchies, *config.identifying, *config.sensitive, *config.insensitive]
    )
    unassigned = config.unassigned(table.frame.columns)
    if unassigned and not config.keep_unlisted:
        # Loaded only on this path: a release that goes ahead needs no attack measure.
        from kanonym.attacks.measures import DIRECT_IDENTIFIER_UNIQUENESS, value_uniqueness

        shares = value_uniqueness(table.frame, list(unassigned))
        likely = tuple(c for c in unassigned if shares[c] >= DIRECT_IDENTIFIER_UNIQUENESS)
        raise UnassignedColumnsError(table.source, unassigned, likely)
    # Every column that stays in the release holds flat values (identifying ones are dropped).
    table.require_flat([c for c in table.frame.columns if c not in config.identifying])
    if config.k > table.frame.height:
        raise InputError(
            f"{table.source}: k={config.k} is larger than the table ({table.frame.height} rows)"
        )
    return _resolve(table, config.hierarchies)


def _resolve(table: Table, specs: Mapping[str, HierarchyLike]) -> dict[str, Hierarchy]:
    """Each column's hierarchy, built or checked on the column's values in ``table``."""
    return {
        name: resolve(
            spec,
            table.frame.get_column(name).cast(pl.String).unique().to_list(),
            column=name,
            source=table.source,
        )
        for name, spec in specs.items()
    }


def level_bounds(
    config: AnonymizationConfig, hierarchies: Mapping[str, Hierarchy]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per quasi-identifier, the least and greatest level the search may choose."""
    if config.granularity.generalization == "none":
        # _TS, _AS, _CS: no generalization (_AS searches its own two-level lattice).
        zeros = tuple(0 for _ in hierarchies)
        return zeros, zeros
    lower, upper = [], []
    for name, hierarchy in hierarchies.items():
        low = config.min_levels.get(name, 0)
        high = config.max_levels.get(name, hierarchy.height)
        for what, level in (("min-level", low), ("max-level", high)):
            if level > hierarchy.height:
                raise InputError(
                    f"{what} {level} of '{name}' is above the height {hierarchy.height} "
                    f"of hierarchy {hierarchy.name}"
                )
        lower.append(low)
        upper.append(high)
    return tuple(lower), tuple(upper)


def all_metrics(context: MetricContext) -> dict[str, UtilityMetric]:
    """Every utility metric bound to ``context``, built once per run (some precompute tables)."""
    return {name: make_metric(name, context) for name in METRICS}


def measure_solution(
    evaluation: NodeEvaluation, evaluator: NodeEvaluator, metrics: Mapping[str, UtilityMetric]
) -> Solution:
    """A solution with every reported measure, utility metrics included."""
    node = evaluation.node
    encoded = evaluator.encoded
    if isinstance(evaluator, CellSuppressionEvaluator):
        measured, cells = measure_cells(node, evaluator, metrics)
        return Solution(
            transformation=dict(zip(encoded.names, node, strict=True)),
            suppressed_rows=0,
            metrics=measured,
            suppressed_cells=cells,
        )
    view = evaluator.view(node)
    measures = report_measures(
        node=node,
        heights=encoded.heights,
        names=encoded.names,
        released_sizes=view.sizes[view.satisfied],
        suppressed_rows=evaluation.suppressed_rows,
    )
    for name, metric in metrics.items():
        measures[name] = reported_score(name, metric.score(node, view))
    return Solution(
        transformation=dict(zip(encoded.names, node, strict=True)),
        suppressed_rows=evaluation.suppressed_rows,
        metrics=measures,
    )


def announce(
    on_progress: Callable[[Progress], None] | None,
    stage: str,
    *,
    detail: str = "",
    done: int = 0,
    total: int | None = None,
) -> None:
    """Tell ``on_progress`` (if any) that ``stage`` is running (:meth:`Progress.of_stage`).

    Called once per stage or step, never per row or node, so it is not throttled.
    """
    if on_progress is not None:
        on_progress(Progress.of_stage(stage, detail=detail, done=done, total=total))


class Stopwatch:
    """Seconds spent per pipeline step, for the report's ``timings``."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self._clock = time.perf_counter()

    def lap(self, step: str) -> None:
        """Charge the time since the previous lap to ``step``."""
        now = time.perf_counter()
        self.timings[step] = self.timings.get(step, 0.0) + now - self._clock
        self._clock = now


def release_node(
    engine: EmbeddedEngine,
    evaluator: NodeEvaluator,
    hierarchies: Mapping[str, Hierarchy],
    node: Node,
    config: AnonymizationConfig,
    stopwatch: Stopwatch,
    on_progress: Callable[[Progress], None] | None = None,
) -> tuple[pl.DataFrame, int, CellReport]:
    """Transform the table at ``node`` and re-check the result independently.

    Returns the released table, the seed of its row shuffle (drawn from the
    operating system unless the config fixes one) and its blanked cells.
    Reports the ``transforming`` and ``verifying`` stages to ``on_progress``.
    The check compares every released row with the input row it comes from
    (the transform returns those rows; they are never written), and the rows
    missing with the search's count for ``node``, which the report states.
    Raises VerificationError when the independent check fails.
    """
    table = engine.table
    encoded = evaluator.encoded
    seed = config.seed if config.seed is not None else secrets.randbits(63)
    announce(on_progress, "transforming")
    if isinstance(evaluator, CellSuppressionEvaluator):
        released, cells = release_cells(
            table.frame, evaluator, hierarchies, node, config=config, seed=seed, lap=stopwatch.lap
        )
        return released, seed, cells
    classes = evaluator.classes(node)
    plan = Generalization(
        encoded=encoded,
        levels=node,
        released=classes.satisfied[classes.tuple_class],
        drop=tuple(config.identifying),
        seed=seed,
    )
    generalized = engine.generalize(plan)
    released, source_rows = generalized.table, generalized.source_rows
    stopwatch.lap("transform")
    announce(on_progress, "verifying")
    verify_release(
        released,
        source=table.frame,
        source_rows=source_rows,
        quasi_identifiers=encoded.names,
        hierarchies=hierarchies,
        levels=dict(zip(encoded.names, node, strict=True)),
        k=config.k,
        # The count the report states (the search's, for this node; cached).
        suppressed_rows=evaluator.evaluate(node).suppressed_rows,
        max_suppressed_rows=evaluator.max_suppressed_rows,
        removed_columns=config.identifying,
    )
    verify_models(
        released, quasi_identifiers=encoded.names, source=table.frame, models=evaluator.models
    )
    stopwatch.lap("verify")
    return released, seed, CellReport(CellCounts.none(encoded.names))


def _run(
    table: Table,
    config: AnonymizationConfig,
    read_seconds: float,
    on_progress: Callable[[Progress], None] | None,
) -> Result:
    if config.local_recoding:
        # Local recoding has its own release path; imported here, it imports this module.
        from kanonym.release.local import release_local

        # It encodes, partitions, recodes and verifies in one call: one stage here.
        announce(on_progress, "searching", detail=f"{config.algorithm}, local recoding")
        local = release_local(table, config, read_seconds)
        return dataclasses.replace(local, on_progress=on_progress)
    timings = {"read": read_seconds}
    stopwatch = Stopwatch(timings)
    steps = ("hierarchies", "quasi-identifiers", "frequency set", "metrics")
    announce(on_progress, "encoding", detail=steps[0], done=0, total=len(steps))
    hierarchies = declare(table, config)
    announce(on_progress, "encoding", detail=steps[1], done=1, total=len(steps))
    engine = EmbeddedEngine(table)
    encoded = engine.encode(hierarchies)
    max_suppressed = config.suppression.max_rows(table.frame.height)
    announce(on_progress, "encoding", detail=steps[2], done=2, total=len(steps))
    evaluator = build_evaluator(table, config, encoded, max_suppressed)
    announce(on_progress, "encoding", detail=steps[3], done=3, total=len(steps))
    context = MetricContext(
        encoded=encoded,
        frequency_set=evaluator.frequency_set,
        k=config.k,
        weights=config.weight_vector(encoded.names),
    )
    metrics = all_metrics(context)
    lower, upper = level_bounds(config, hierarchies)
    stopwatch.lap("encode")
    announce(on_progress, "searching", detail=config.algorithm)
    control = SearchControl.with_time_limit(config.time_limit, on_progress)
    metric = None if config.metric is None else metrics[config.metric]
    if config.technique == "_AS":
        evaluator.use_metric(metric)
        outcome = search_attribute_suppression(
            evaluator,
            algorithm=config.algorithm,
            metric=config.metric,
            policy=config.policy,
            weights=context.weights,
            k=config.k,
            control=control,
        )
    else:
        outcome = run_search(
            ALGORITHMS[config.algorithm],
            evaluator,
            policy=config.policy,
            metric=metric,
            control=control,
            lower=lower,
            upper=upper,
        )
    nodes_checked = outcome.nodes_checked
    # The lattice figure shows the full-domain lattice; _AS searched a lattice of its own.
    trace = (
        None
        if config.technique == "_AS"
        else SearchTrace.record(Lattice(upper, lower), evaluator, outcome, policy=config.policy)
    )
    stopwatch.lap("search")
    count = len(outcome.solutions)
    measured = []
    for done, evaluation in enumerate(outcome.solutions):
        announce(on_progress, "measuring", detail=f"{count} solution(s)", done=done, total=count)
        measured.append(measure_solution(evaluation, evaluator, metrics))
    solutions = tuple(measured)
    best = outcome.best
    released, seed, cells = release_node(
        engine, evaluator, hierarchies, best.node, config, stopwatch, on_progress
    )
    return Result(
        writer=write_result,
        table=released,
        transformation=solutions[0].transformation,
        metrics=solutions[0].metrics,
        minimal_generalizations=solutions,
        config=config,
        seed=seed,
        input_rows=table.frame.height,
        suppressed_rows=solutions[0].suppressed_rows,
        max_suppressed_rows=max_suppressed,
        nodes_checked=nodes_checked,
        proven_optimal=outcome.proven_optimal,
        models=evaluator.models,
        sensitive_hierarchies=sensitive_hierarchies(evaluator.models),
        hierarchies=hierarchies,
        source=table.source,
        dialect=table.dialect,
        timings=timings,
        suppressed_cells=cells,
        input_table=table,
        search=trace,
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
) -> Result:
    """Anonymize ``data`` (a CSV/Parquet path, or a Polars or pandas DataFrame).

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
    ``on_progress`` receives :class:`~kanonym.search.Progress` reports: each
    stage as it starts (reading, encoding, searching, ...), the search's own
    reports, and, when the result is written, writing and drawing the HTML
    report figure by figure (the command line draws its progress line from
    them).
    """
    if config is None:
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
    table = load(data, delimiter=delimiter)
    return _run(table, config, time.perf_counter() - started, on_progress)


def _named(data: object) -> str:
    """The input's file name for a progress line (a DataFrame has none)."""
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


def run_job(job: ReleaseJob, *, on_progress: Callable[[Progress], None] | None = None) -> Result:
    """Run a :class:`~kanonym.config.ReleaseJob` and write its files."""
    result = anonymize(job.input, job.config, delimiter=job.delimiter, on_progress=on_progress)
    result.write(job.output, report=job.report, report_html=job.report_html)
    return result
