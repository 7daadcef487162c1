"""Choosing k: the optimal release for every k and suppression limit, risk against utility.

For each pair of a k in ``ks`` and a suppression limit in
``suppression_limits``, :func:`explore` runs the globally optimal search
(:mod:`kanonym.search.optimal`) for the job's utility metric, as
:func:`kanonym.anonymize` would with that k and limit, and measures the
release it would make: its utility loss (the metric's score) and its
prosecutor re-identification risk (highest, average and records at risk: El
Emam & Dankar 2008, :mod:`kanonym.sweep.points`). The table is read and
encoded once, and its frequency set built once; every search runs over it.

The *frontier* marks the releases worth choosing among: a point is on it when
no other point has a score and an average prosecutor risk that are both no
higher, one of them lower (Pareto optimality, :mod:`kanonym.sweep.frontier`);
every point off it is dominated by a point on it: one no worse on both axes
and better on at least one. Points without a solution (no transformation
satisfies the models within the limit) are on no frontier.

Picking a point fills the job: :meth:`Exploration.config` is the
configuration :func:`kanonym.anonymize` takes to make exactly that release,
and :meth:`Exploration.job_toml` the job file ``kanonym anonymize --config``
runs.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> zips = Hierarchy("zip", (("02138", "02139", "02141", "02142"),
    ...                          ("0213*", "0213*", "0214*", "0214*"), ("*",) * 4))
    >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142", "02138", "02141"]})
    >>> sweep = explore(table, quasi_identifiers={"zip": zips}, ks=[1, 2, 3],
    ...                 suppression_limits=[0.0])
    >>> [(p.k, p.transformation["zip"], round(p.average_risk, 3), p.on_frontier)
    ...  for p in sweep.points]
    [(1, 0, 0.667, True), (2, 1, 0.333, True), (3, 1, 0.333, True)]
    >>> sweep.config(sweep.points[1]).k
    2
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kanonym._version import __version__
from kanonym.attacks.defaults import DEFAULT_THRESHOLD
from kanonym.config import AnonymizationConfig, HierarchyLike, SuppressionLimit
from kanonym.encode import EncodedTable
from kanonym.engine import EmbeddedEngine
from kanonym.errors import InputError, NoSolutionError, SearchTimeoutError, echo
from kanonym.hierarchy import Duplicates, Hierarchy
from kanonym.io import Table, load, write_atomic
from kanonym.io.paths import check_destinations
from kanonym.models import PrivacyModel, needs_population
from kanonym.models.differential_privacy import DifferentialPrivacy
from kanonym.options import MetricName, TableLike, TechniqueName
from kanonym.release.steps import (
    announce,
    bind_metrics,
    build_evaluator,
    declare,
    level_bounds,
    search_full_domain,
)
from kanonym.search import Progress, SearchControl
from kanonym.sweep.figure import sweep_figure
from kanonym.sweep.frontier import on_frontier
from kanonym.sweep.job import job_toml
from kanonym.sweep.points import SweepPoint, percent
from kanonym.sweep.tables import html_page, html_table, text_table

if TYPE_CHECKING:
    # Only the type: kanonym.figures loads when a figure is drawn.
    from kanonym.figures import Spec

SCHEMA_VERSION = 1
"""The version of :meth:`Exploration.as_dict`'s layout (``kanonym explore --json``)."""

DEFAULT_KS = range(2, 21)
"""The k swept by default: 2 to 20."""

DEFAULT_LIMITS = (0.0, 0.02, 0.05)
"""The suppression limits swept by default: none, 2 % and 5 % of the rows."""

FRONTIER_RULE = (
    "non-dominated on (score, average_risk), both minimized: no other point is no worse "
    "on both and better on one"
)


@dataclass(frozen=True, kw_only=True)
class Exploration:
    """The points of a sweep over k and suppression limits (:func:`explore`).

    Attributes:
        points: one per (limit, k), limits in the order given, k ascending.
        template: the job every point shares; a point's own configuration
            replaces its k and suppression limit (:meth:`config`).
        source: the table as reports name it: its file, or ``<DataFrame>``.
        input: the table's file when it was read from one (the job's input).
        delimiter: the CSV delimiter given, if any.
        rows: rows of the table.
        quasi_identifiers: the quasi-identifiers and their hierarchies' heights.
        risk_threshold: the record risk above which a released row is at risk.
        seconds: wall time of the sweep, reading included.
    """

    points: tuple[SweepPoint, ...]
    template: AnonymizationConfig
    source: str
    input: Path | None
    delimiter: str | None
    rows: int
    quasi_identifiers: Mapping[str, int]
    risk_threshold: float
    seconds: float

    @property
    def metric(self) -> str:
        """The utility metric every search minimized."""
        assert self.template.metric is not None, "explore runs the optimal search"
        return self.template.metric

    @property
    def frontier(self) -> tuple[SweepPoint, ...]:
        """The points on the Pareto frontier, by ascending average risk (then score)."""
        chosen = [p for p in self.points if p.on_frontier]
        return tuple(sorted(chosen, key=lambda p: (p.average_risk, p.score, p.k)))

    def point(self, k: int, max_suppression: float) -> SweepPoint:
        """The point of ``k`` and the suppression limit ``max_suppression``.

        Raises:
            InputError: the sweep has no such point.
        """
        for candidate in self.points:
            if candidate.k == k and candidate.max_suppression == max_suppression:
                return candidate
        raise InputError(f"the sweep has no point k={k}, `max_suppression`={echo(max_suppression)}")

    def config(self, point: SweepPoint) -> AnonymizationConfig:
        """The configuration :func:`kanonym.anonymize` takes to release exactly ``point``.

        Raises:
            NoSolutionError: the point has no solution: nothing to release.
        """
        if not point.solution:
            raise NoSolutionError(
                f"k={point.k} with at most {percent(point.max_suppression)} of the rows "
                "suppressed has no solution: pick a point with one"
            )
        return _point_config(self.template, point.k, point.max_suppression)

    def job_toml(
        self,
        point: SweepPoint,
        *,
        output: str | Path = "release.csv",
        report: str | Path | None = "release.report.json",
        input: str | Path | None = None,
    ) -> str:
        """The TOML job file ``kanonym anonymize --config`` runs to release ``point``.

        ``input`` defaults to the file the sweep read (required when it read a
        DataFrame). Paths are written as given; the job file reads relative
        ones from its own folder.

        Raises:
            NoSolutionError: the point has no solution.
            InputError: no input file is known, or a hierarchy has no file or
                spec to name it by (:func:`kanonym.sweep.job.hierarchy_spec`).
        """
        config = self.config(point)
        source = input if input is not None else self.input
        if source is None:
            raise InputError(
                "the sweep read a DataFrame: pass `input`, the file the job reads the table from"
            )
        comment = (
            f"{point.label} picked from a sweep of {self.source} by kanonym {__version__}: "
            f"{self.metric} {point.score:.4g}, average prosecutor risk {point.average_risk:.4g}, "
            f"highest {point.highest_risk:.4g}"
        )
        return job_toml(
            config,
            input=source,
            output=output,
            report=report,
            delimiter=self.delimiter,
            comment=comment,
        )

    def figure(self) -> Spec:
        """The sweep's Vega-Lite figure (:mod:`kanonym.sweep.figure`)."""
        return sweep_figure(self.points, metric=self.metric)

    def summary(self) -> str:
        """One line: what was swept and how many points have a solution and are on the frontier."""
        solved = sum(p.solution for p in self.points)
        limits = ", ".join(dict.fromkeys(percent(p.max_suppression) for p in self.points))
        ks = sorted({p.k for p in self.points})
        swept = ", ".join(map(str, ks)) if len(ks) <= 5 else f"{ks[0]}..{ks[-1]} ({len(ks)} values)"
        return (
            f"{self.source}: {self.rows} rows; {len(self.points)} points, k {swept} x "
            f"suppression {limits}; {solved} with a solution, {len(self.frontier)} on the "
            f"frontier; metric {self.metric}, risk threshold {self.risk_threshold:g}; "
            f"{self.seconds:.2f} s"
        )

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (``kanonym explore --json``), versioned by ``schema_version``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "kanonym": __version__,
            "source": self.source,
            "rows": self.rows,
            "quasi_identifiers": dict(self.quasi_identifiers),
            "metric": self.metric,
            "risk_threshold": self.risk_threshold,
            "frontier": FRONTIER_RULE,
            "seconds": self.seconds,
            "points": [point.as_dict() for point in self.points],
        }

    def html(self) -> str:
        """A self-contained HTML page: the figure as static SVG and the table of points.

        Raises:
            InputError: ``vl-convert`` (the ``report`` extra) is not installed.
        """
        from kanonym.figures.render import to_svg  # vl-convert loads only for a figure

        return html_page(
            f"Choosing k: {self.source}", self.summary(), to_svg(self.figure()), self._table()
        )

    def write(
        self, *, json_path: str | Path | None = None, html_path: str | Path | None = None
    ) -> None:
        """Write the JSON and the HTML page, both or neither (:func:`kanonym.io.write_atomic`).

        Raises:
            InputError: a destination is the table swept, a hierarchy file, the
                other destination, or cannot be written
                (:func:`kanonym.io.paths.check_destinations`); nothing is written then.
        """
        inputs: dict[str, Path | None] = {"input table": self.input}
        for name, hierarchy in self.template.hierarchies.items():
            # A hierarchy read from an ARX file is named by its path; builders' are not files.
            if isinstance(hierarchy, Hierarchy) and Path(hierarchy.name).is_file():
                inputs[f"hierarchy file of '{name}'"] = Path(hierarchy.name)
        check_destinations({"json_path": json_path, "html_path": html_path}, inputs)
        files: list[tuple[Path, bytes]] = []
        if json_path is not None:
            text = json.dumps(self.as_dict(), indent=2, allow_nan=False) + "\n"
            files.append((Path(json_path), text.encode()))
        if html_path is not None:
            files.append((Path(html_path), self.html().encode()))
        if files:
            write_atomic(files)

    def _table(self) -> str:
        return html_table(self.points)

    def _repr_html_(self) -> str:
        """The table of points, the frontier marked, and the figure as inline SVG
        (the figure is left out, with a note, without ``vl-convert``)."""
        from kanonym.figures.render import to_svg

        try:
            figure = to_svg(self.figure())
        except InputError as missing:
            figure = f"<p><em>{html.escape(str(missing))}</em></p>"
        return f"<div><p>{html.escape(self.summary())}</p>{figure}{self._table()}</div>"

    def __str__(self) -> str:
        frontier = text_table(self.frontier, merge=True) if self.frontier else "none"
        return f"{self.summary()}\nthe frontier, by average risk:\n{frontier}"


def _point_config(template: AnonymizationConfig, k: int, limit: float) -> AnonymizationConfig:
    return dataclasses.replace(template, k=k, suppression=SuppressionLimit(fraction=limit))


def _ks(ks: Iterable[int]) -> tuple[int, ...]:
    given = tuple(ks)
    if not given:
        raise InputError("`ks`: give at least one k")
    for k in given:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise InputError(f"`ks`: every k must be a whole number >= 1, got {echo(k)}")
    return tuple(sorted({int(k) for k in given}))


def _limits(limits: Iterable[float]) -> tuple[float, ...]:
    given = tuple(limits)
    if not given:
        raise InputError("`suppression_limits`: give at least one limit")
    for limit in given:
        # SuppressionLimit's own check names `max_suppression`; here the list is named.
        if isinstance(limit, bool) or not isinstance(limit, int | float) or not 0 <= limit <= 1:
            raise InputError(
                "`suppression_limits`: every limit must be a fraction in [0, 1] (0.02 for 2%), "
                f"got {echo(limit)}"
            )
    return tuple(dict.fromkeys(float(limit) for limit in given))


def _refuse(config: AnonymizationConfig, limits: Sequence[float]) -> None:
    """Refuse what the sweep does not run, before any search: it runs the optimal
    full-domain search only, and a technique that suppresses no rows takes no limit."""
    if config.algorithm != "optimal":
        raise InputError(
            f"explore runs the optimal search, not `algorithm={config.algorithm!r}`: leave "
            "`algorithm` out"
        )
    if config.granularity.suppression in ("cell", "attribute"):
        raise InputError(
            f"explore sweeps tuple suppression, not `technique={config.technique!r}`; "
            "leave `technique` out"
        )
    if not config.granularity.suppresses_rows and any(limits):
        # Here, not at the first non-zero limit after every k at 0 % was searched.
        raise InputError(
            f"`technique={config.technique!r}` suppresses no rows, so `suppression_limits` "
            f"{', '.join(map(percent, limits))} do not apply: sweep only 0 or leave "
            "`technique` out"
        )
    for model in config.models:
        if isinstance(model, DifferentialPrivacy) or needs_population(model):
            raise InputError(
                f"explore does not sweep {model.name}: it derives its own k or needs a "
                "population; anonymize with it directly"
            )


def explore(
    data: TableLike | Table,
    config: AnonymizationConfig | None = None,
    *,
    quasi_identifiers: Mapping[str, HierarchyLike | str | Path] | None = None,
    identifying: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    insensitive: Sequence[str] = (),
    keep_unlisted: bool = False,
    models: Sequence[PrivacyModel] = (),
    metric: MetricName | None = None,
    weights: Mapping[str, float] | None = None,
    min_levels: Mapping[str, int] | None = None,
    max_levels: Mapping[str, int] | None = None,
    technique: TechniqueName | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    hierarchy_duplicates: Duplicates = "error",
    delimiter: str | None = None,
    ks: Iterable[int] = DEFAULT_KS,
    suppression_limits: Iterable[float] = DEFAULT_LIMITS,
    risk_threshold: float = DEFAULT_THRESHOLD,
    on_progress: Callable[[Progress], None] | None = None,
) -> Exploration:
    """Sweep ``ks`` x ``suppression_limits`` with the optimal search (module docstring).

    ``data``, the roles, hierarchies, models and options are those of
    :func:`kanonym.anonymize` (or pass ``config`` as a template: its k and
    suppression limit are replaced by each point's); ``data`` may also be a
    table already read (:func:`kanonym.io.load`), which is not read again.
    ``suppression_limits`` are shares of the rows (``0.02`` is 2 %). ``risk_threshold`` is the
    record risk above which a released row counts as at risk (default 0.2,
    the risk of a class of five; ARX's default). ``time_limit`` bounds each
    point's search; a point stopped by it says so (``proven_optimal``).
    ``on_progress`` hears of each point as it is searched.

    A k above the table's rows has no solution (anonymize refuses it).

    Raises:
        InputError: bad input, as :func:`kanonym.anonymize` raises it; a k or
            limit that is not one; an algorithm other than the optimal
            search, cell or attribute suppression, a non-zero limit with a
            technique that suppresses no rows (``AG_``), differential privacy
            or a model that needs a population table.
    """
    started = time.perf_counter()
    k_values, limits = _ks(ks), _limits(suppression_limits)
    # Loaded here, not with the package: kanonym's start-up loads no attack module.
    from kanonym.attacks.measures import check_threshold

    check_threshold(risk_threshold)
    if config is None:
        if quasi_identifiers is None:
            raise InputError("explore needs `quasi_identifiers` (or a config)")
        config = AnonymizationConfig(
            quasi_identifiers=quasi_identifiers,
            k=k_values[0],
            identifying=tuple(identifying),
            sensitive=tuple(sensitive),
            insensitive=tuple(insensitive),
            keep_unlisted=keep_unlisted,
            models=tuple(models),
            metric=metric,
            weights=weights or {},
            min_levels=min_levels or {},
            max_levels=max_levels or {},
            technique=technique,
            time_limit=time_limit,
            seed=seed,
            hierarchy_duplicates=hierarchy_duplicates,
        )
    _refuse(config, limits)
    announce(on_progress, "reading")
    # A table already read (the command line counts its rows first) is not read again.
    table = data if isinstance(data, Table) else load(data, delimiter=delimiter)
    engine = EmbeddedEngine(table)
    announce(on_progress, "encoding")
    # k=1 here: a k above the table's rows is a point without a solution, not bad input.
    hierarchies = declare(engine, _point_config(config, 1, 0.0))
    encoded = engine.encode(hierarchies)
    bounds = level_bounds(config, hierarchies)
    points: list[SweepPoint] = []
    total = len(k_values) * len(limits)
    for limit in limits:
        for k in k_values:
            announce(
                on_progress,
                "searching",
                detail=f"k={k}, {percent(limit)}",
                done=len(points),
                total=total,
            )
            points.append(
                _sweep_point(
                    engine, encoded, _point_config(config, k, limit), bounds, risk_threshold
                )
            )
    solved = np.array([p.solution for p in points], dtype=np.bool_)
    scores = np.array([p.score if p.solution else np.inf for p in points], dtype=np.float64)
    risks = np.array([p.average_risk if p.solution else np.inf for p in points], dtype=np.float64)
    frontier = on_frontier(scores[solved], risks[solved])
    marked = iter(frontier.tolist())
    points = [dataclasses.replace(p, on_frontier=next(marked)) if p.solution else p for p in points]
    return Exploration(
        points=tuple(points),
        template=config,
        source=table.source,
        input=_input_file(data),
        delimiter=delimiter,
        rows=engine.rows,
        quasi_identifiers={name: h.height for name, h in hierarchies.items()},
        risk_threshold=float(risk_threshold),
        seconds=time.perf_counter() - started,
    )


def _input_file(data: TableLike | Table) -> Path | None:
    """The file the table was read from (a job's input), None for a DataFrame."""
    if isinstance(data, str | Path):
        return Path(data).resolve()
    # A Table read from a file has its bytes' fingerprint; one wrapping a DataFrame has none.
    if isinstance(data, Table) and data.sha256 is not None:
        return Path(data.source).resolve()
    return None


def _sweep_point(
    engine: EmbeddedEngine,
    encoded: EncodedTable,
    config: AnonymizationConfig,
    bounds: tuple[tuple[int, ...], tuple[int, ...]],
    threshold: float,
) -> SweepPoint:
    """Search one point: the optimal release for ``config``'s k and limit, measured."""
    assert config.metric is not None, "explore runs the optimal search"
    limit = float(config.suppression.fraction or 0.0)
    max_rows = config.suppression.max_rows(engine.rows)
    unsolved = functools.partial(
        SweepPoint,
        k=config.k,
        max_suppression=limit,
        max_suppressed_rows=max_rows,
        metric=config.metric,
        solution=False,
    )
    if config.k > engine.rows:
        return unsolved()
    evaluator = build_evaluator(engine, config, encoded, max_rows)
    control = SearchControl.with_time_limit(config.time_limit)
    try:
        outcome = search_full_domain(
            config, evaluator, bind_metrics(config, evaluator), bounds, control
        )
    except (NoSolutionError, SearchTimeoutError):
        return unsolved(proven_optimal=not control.timed_out, nodes_checked=evaluator.checks)
    best = outcome.best
    assert best.score is not None
    view = evaluator.view(best.node)
    released = view.sizes[view.satisfied]
    # Loaded with check_threshold by explore (kanonym's start-up loads no attack module).
    from kanonym.attacks.measures import prosecutor_risk

    risk = prosecutor_risk(released.astype(np.int64), threshold=threshold)
    return SweepPoint(
        k=config.k,
        max_suppression=limit,
        max_suppressed_rows=max_rows,
        solution=True,
        transformation=dict(zip(encoded.names, best.node, strict=True)),
        metric=config.metric,
        score=best.score,
        equivalence_classes=best.released_classes,
        suppressed_rows=best.suppressed_rows,
        released_rows=int(released.sum()),
        highest_risk=risk.highest,
        average_risk=risk.average,
        records_at_risk=risk.records_at_risk,
        proven_optimal=outcome.proven_optimal,
        nodes_checked=outcome.nodes_checked,
    )
