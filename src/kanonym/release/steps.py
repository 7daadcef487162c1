"""The steps a release is made of, shared by the full-domain pipeline
(:mod:`kanonym.release.pipeline`), local recoding (:mod:`kanonym.release.local`)
and re-application (:mod:`kanonym.release.apply`): declare the roles and
hierarchies, build the evaluator and metrics, measure a solution, and release
a node through the engine with its independent re-check.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from kanonym.config import AnonymizationConfig
from kanonym.encode import (
    EncodedTable,
    Grouped,
    GroupedSensitiveAttribute,
    SensitiveAttribute,
    encode_grouped_sensitive,
    encode_sensitive,
)
from kanonym.engine import EmbeddedEngine, Expected, Generalization
from kanonym.engine.base import Released, ServerEngine, ServerRelease
from kanonym.errors import InputError, UnassignedColumnsError
from kanonym.evaluation import CellSuppressionEvaluator, NodeEvaluation, NodeEvaluator
from kanonym.evaluation.cells import measure_cells
from kanonym.hierarchy import Hierarchy, resolve
from kanonym.lattice import Node
from kanonym.metrics import METRICS, MetricContext, UtilityMetric, make_metric, report_measures
from kanonym.metrics.base import ClassView
from kanonym.metrics.measures import reported_score
from kanonym.models import KAnonymity, KMap, PrivacyModel, needs_population
from kanonym.models.base import is_sample_model
from kanonym.release.granularity import release_cells
from kanonym.result import CellReport, Solution
from kanonym.search import ALGORITHMS, Progress, SearchControl, SearchOutcome, run_search
from kanonym.verify import CellCounts
from kanonym.verify.population import population_classes

# The engines the pipeline releases through: in memory, or where the rows live.
RowEngine = EmbeddedEngine | ServerEngine[Any]
# The column of a population's grouping holding each tuple's rows.
_PEOPLE = "__kanonym_people"


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


def read_sensitive(
    engine: RowEngine,
    config: AnonymizationConfig,
    models: Sequence[PrivacyModel],
    encoded: EncodedTable,
) -> tuple[SensitiveAttribute | GroupedSensitiveAttribute, ...]:
    """The job's sensitive columns that ``models`` read, encoded (the others are not): from
    the rows in memory, or counted per quasi-identifier tuple with one ``GROUP BY`` where
    the rows live."""
    needed = [n for n in config.sensitive if any(n in m.sensitive_attributes for m in models)]
    if isinstance(engine, EmbeddedEngine):
        return encode_sensitive(engine.table.frame, needed)
    if not needed:
        return ()
    grouped = engine.group([*encoded.names, *needed])
    return encode_grouped_sensitive(grouped, encoded, needed)


def build_evaluator(
    engine: RowEngine, config: AnonymizationConfig, encoded: EncodedTable, max_suppressed: int
) -> NodeEvaluator:
    """The node evaluator for the job's models, with the sensitive columns they read."""
    models = declare_models(config)
    sensitive = read_sensitive(engine, config, models, encoded)
    if config.granularity.cells:
        # Cell suppression is served in memory only (refuse_unserved).
        assert all(isinstance(a, SensitiveAttribute) for a in sensitive)
        return CellSuppressionEvaluator(
            encoded,
            models,
            max_suppressed_rows=max_suppressed,
            sensitive=[a for a in sensitive if isinstance(a, SensitiveAttribute)],
            method="mu-argus" if config.algorithm == "mu-argus" else "patterns",
            weights=config.weight_vector(encoded.names),
        )
    return NodeEvaluator(encoded, models, max_suppressed_rows=max_suppressed, sensitive=sensitive)


def refuse_unserved(engine: RowEngine, config: AnonymizationConfig) -> None:
    """Refuse, before any work, what ``engine`` cannot serve yet (docs: Engines).

    Engines that keep the rows elsewhere serve full-domain generalization with
    tuple suppression (techniques AG_TS, AG_ and _TS) under every privacy
    model, with every search on the frequency set, and local recoding
    (Mondrian, partitioned on the frequency set: :mod:`kanonym.release.local`).

    Raises:
        InputError: naming the option and the engine.
    """
    if isinstance(engine, EmbeddedEngine) or config.local_recoding:
        return
    suppression = config.granularity.suppression
    if suppression in ("cell", "attribute"):
        reason = f"{suppression} suppression (`technique={config.technique!r}`)"
        raise InputError(
            f"{engine.source}: the {engine.name} engine does not serve {reason} yet; "
            "read the table into memory (the embedded engine) for it"
        )


def require_population(
    engine: RowEngine, config: AnonymizationConfig, population: RowEngine | None
) -> None:
    """Refuse, before any work, a population no model reads, a model that needs one
    without it, and the options that do not serve population models yet.

    Raises:
        InputError: naming the model or option.
    """
    needing = [m.name for m in config.models if needs_population(m)]
    if population is None:
        if needing:
            raise InputError(
                f"model {needing[0]} judges each class by the population the table was "
                "drawn from: pass the population table (`population`)"
            )
        return
    if not needing:
        raise InputError(
            f"{population.source}: `population` is read only by delta-presence and by k-map "
            "with a population table, and this job has neither"
        )
    if config.local_recoding or config.granularity.suppression in ("cell", "attribute"):
        what = (
            f"algorithm={config.algorithm!r}"
            if config.local_recoding
            else f"technique={config.technique!r}"
        )
        raise InputError(
            f"{engine.source}: {needing[0]} is served with full-domain generalization and "
            f"tuple suppression, not `{what}`"
        )


def refuse_unserved_risk(engine: RowEngine, config: AnonymizationConfig) -> None:
    """Refuse, before any work, a risk threshold (average risk, sample or population
    uniqueness) with local recoding or cell or attribute suppression.

    Those models judge the whole release and are enforced by suppressing its
    smallest classes, which only full-domain generalization with tuple
    suppression does (:class:`kanonym.models.base.SampleModel`).

    Raises:
        InputError: naming the model and the option.
    """
    judging = [m.name for m in config.models if is_sample_model(m)]
    if not judging:
        return
    if config.local_recoding or config.granularity.suppression in ("cell", "attribute"):
        what = (
            f"algorithm={config.algorithm!r}"
            if config.local_recoding
            else f"technique={config.technique!r}"
        )
        raise InputError(
            f"{engine.source}: {judging[0]} is served with full-domain generalization and "
            f"tuple suppression, not `{what}`"
        )


def refuse_estimated_k_map(engine: RowEngine, config: AnonymizationConfig) -> None:
    """Refuse, before any work, estimated k-map with local recoding or cell or attribute
    suppression.

    Its least class size is derived from the table's rows, which it reads as the
    sum of the classes it is shown; those searches show it parts of the table.

    Raises:
        InputError: naming the option.
    """
    if not any(isinstance(m, KMap) and m.estimator is not None for m in config.models):
        return
    if config.local_recoding or config.granularity.suppression in ("cell", "attribute"):
        what = (
            f"algorithm={config.algorithm!r}"
            if config.local_recoding
            else f"technique={config.technique!r}"
        )
        raise InputError(
            f"{engine.source}: k-map with an estimator is served with full-domain "
            f"generalization and tuple suppression, not `{what}`"
        )


def declare(
    engine: RowEngine, config: AnonymizationConfig, population: RowEngine | None = None
) -> dict[str, Hierarchy]:
    """Check that every named column exists and every column has a role; resolve each QI's
    hierarchy (against the population's values too, when the table is a sample of one).

    Raises:
        UnassignedColumnsError: a column is named in no role and the config
            does not keep unlisted columns.
        InputError: a named column is missing, the table is empty, k exceeds
            its rows, or a hierarchy does not fit its column.

    ``engine`` holds the rows (and keeps the columns' distinct values for encoding).
    """
    engine.require(
        [*config.hierarchies, *config.identifying, *config.sensitive, *config.insensitive]
    )
    unassigned = config.unassigned(list(engine.columns))
    if unassigned and not config.keep_unlisted:
        likely: tuple[str, ...] = ()
        if isinstance(engine, EmbeddedEngine):
            # Loaded only on this path: a release that goes ahead needs no attack measure.
            from kanonym.attacks.measures import DIRECT_IDENTIFIER_UNIQUENESS, value_uniqueness

            shares = value_uniqueness(engine.table.frame, list(unassigned))
            likely = tuple(c for c in unassigned if shares[c] >= DIRECT_IDENTIFIER_UNIQUENESS)
        raise UnassignedColumnsError(engine.source, unassigned, likely)
    if isinstance(engine, EmbeddedEngine):
        # Every column that stays in the release holds flat values (identifying ones are
        # dropped); a database's columns are read as text.
        frame = engine.table.frame
        engine.table.require_flat([c for c in frame.columns if c not in config.identifying])
    # Before the row count: an engine that groups where the rows live counts them then.
    values = engine.distinct(*config.hierarchies)
    if population is not None:
        population.require(list(config.hierarchies))
        theirs = population.distinct(*config.hierarchies)
        values = {n: list(dict.fromkeys([*theirs[n], *values[n]])) for n in values}
    if config.k > engine.rows:
        raise InputError(
            f"{engine.source}: k={config.k} is larger than the table ({engine.rows} rows)"
        )
    return {
        name: resolve(spec, list(values[name]), column=name, source=engine.source)
        for name, spec in config.hierarchies.items()
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
        for what, level in (("`min_levels`", low), ("`max_levels`", high)):
            if level > hierarchy.height:
                raise InputError(
                    f"{what} {level} of '{name}' is above the height {hierarchy.height} "
                    f"of hierarchy {hierarchy.name}"
                )
        lower.append(low)
        upper.append(high)
    return tuple(lower), tuple(upper)


class BoundMetrics(Mapping[str, UtilityMetric]):
    """Every utility metric bound to one context, each built on first use.

    Some metrics precompute tables (3 ms for all of them on fars); the search
    needs one, and the others are built only when a solution is measured.
    """

    def __init__(self, context: MetricContext) -> None:
        self._context = context
        self._built: dict[str, UtilityMetric] = {}

    def __getitem__(self, name: str) -> UtilityMetric:
        metric = self._built.get(name)
        if metric is None:
            metric = self._built[name] = make_metric(name, self._context)
        return metric

    def __iter__(self) -> Iterator[str]:
        return iter(METRICS)

    def __len__(self) -> int:
        return len(METRICS)


def all_metrics(context: MetricContext) -> BoundMetrics:
    """Every utility metric bound to ``context``, built once per run, on first use."""
    return BoundMetrics(context)


def bind_metrics(config: AnonymizationConfig, evaluator: NodeEvaluator) -> BoundMetrics:
    """Every utility metric bound to the job's k and weights over ``evaluator``'s frequency
    set (the release pipeline and the sweep over k, :mod:`kanonym.sweep`)."""
    encoded = evaluator.encoded
    return all_metrics(
        MetricContext(
            encoded=encoded,
            frequency_set=evaluator.frequency_set,
            k=config.k,
            weights=config.weight_vector(encoded.names),
        )
    )


def search_full_domain(
    config: AnonymizationConfig,
    evaluator: NodeEvaluator,
    metrics: Mapping[str, UtilityMetric],
    bounds: tuple[tuple[int, ...], tuple[int, ...]],
    control: SearchControl,
) -> SearchOutcome:
    """The job's full-domain search over ``evaluator`` within ``bounds`` (:func:`level_bounds`),
    minimizing its metric or ranking by its policy.

    Raises:
        NoSolutionError: no node satisfies the models within the suppression limit.
    """
    metric = None if config.metric is None else metrics[config.metric]
    lower, upper = bounds
    return run_search(
        ALGORITHMS[config.algorithm],
        evaluator,
        policy=config.policy,
        metric=metric,
        control=control,
        lower=lower,
        upper=upper,
    )


def canonical_order(view: ClassView) -> ClassView:
    """``view``'s classes sorted by their codes: the reported float measures then sum their
    terms in one order whatever order an engine grouped the tuples in (a database's
    ``GROUP BY`` has none), so every engine reports them to the last bit alike."""
    codes = view.codes
    order = np.lexsort(codes.T[::-1]) if codes.size else np.arange(len(view.sizes))
    ordered = codes[order]
    return ClassView(view.sizes[order], view.satisfied[order], lambda: ordered)


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
    view = canonical_order(evaluator.view(node))
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


def people_at(
    population: Grouped, hierarchies: Mapping[str, Hierarchy], node: Node
) -> pl.DataFrame:
    """The population's classes at ``node``'s levels with their rows, generalized by the
    re-check's own code (:func:`kanonym.verify.population.population_classes`): what the
    re-check of population models and the report's reached values read."""
    return population_classes(
        population.values.with_columns(pl.Series(_PEOPLE, population.counts, pl.Int64)),
        _PEOPLE,
        hierarchies,
        dict(zip(hierarchies, node, strict=True)),
    )


def release_node(
    engine: RowEngine,
    evaluator: NodeEvaluator,
    hierarchies: Mapping[str, Hierarchy],
    node: Node,
    config: AnonymizationConfig,
    stopwatch: Stopwatch,
    on_progress: Callable[[Progress], None] | None = None,
    population: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame | ServerRelease, int, CellReport]:
    """Transform the table at ``node`` and re-check the result independently.

    Returns the released table (kept where the rows live by a server engine),
    the seed of its row shuffle (drawn from the operating system unless the
    config fixes one) and its blanked cells.
    Reports the ``transforming`` and ``verifying`` stages to ``on_progress``.
    The check compares every released row with the input row it comes from
    (the transform returns those rows; they are never written), and the rows
    missing with the search's count for ``node``, which the report states.
    Raises VerificationError when the independent check fails. ``population``:
    the classes, at ``node``'s levels, of the table the input was drawn from
    (:func:`people_at`), which the re-check of population models reads.
    """
    encoded = evaluator.encoded
    seed = config.seed if config.seed is not None else secrets.randbits(63)
    announce(on_progress, "transforming")
    if isinstance(evaluator, CellSuppressionEvaluator):
        assert isinstance(engine, EmbeddedEngine), "cell suppression is refused on other engines"
        released, cells = release_cells(
            engine.table.frame,
            evaluator,
            hierarchies,
            node,
            config=config,
            seed=seed,
            lap=stopwatch.lap,
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
    stopwatch.lap("transform")
    announce(on_progress, "verifying")
    expected = Expected(
        hierarchies=hierarchies,
        k=config.k,
        # The count the report states (the search's, for this node; cached).
        suppressed_rows=evaluator.evaluate(node).suppressed_rows,
        max_suppressed_rows=evaluator.max_suppressed_rows,
        models=evaluator.models,
        population=population,
    )
    if isinstance(engine, EmbeddedEngine):
        assert isinstance(generalized, Released)
        engine.verify(generalized, plan, expected)
        stopwatch.lap("verify")
        return generalized.table, seed, CellReport(CellCounts.none(encoded.names))
    engine.verify(generalized, plan, expected)
    stopwatch.lap("verify")
    # The verified release stays where the rows are; the result reads aggregates of it.
    kept = ServerRelease(
        engine=engine,
        handle=generalized,
        columns=tuple(c for c in engine.columns if c not in plan.drop),
        rows=engine.rows - expected.suppressed_rows,
    )
    return kept, seed, CellReport(CellCounts.none(encoded.names))
