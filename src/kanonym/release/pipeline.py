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
import functools
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import polars as pl

from kanonym._version import __version__
from kanonym.config import AnonymizationConfig, HierarchyLike, ReleaseJob, SuppressionLimit
from kanonym.encode import EncodedTable, SensitiveAttribute, encode, encode_sensitive
from kanonym.errors import InputError, UnassignedColumnsError
from kanonym.hierarchy import Hierarchy, resolve
from kanonym.io import CsvDialect, Table, format_for, load, serialize, write_atomic
from kanonym.io.paths import check_destinations
from kanonym.lattice import Lattice, Node
from kanonym.metrics import METRICS, MetricContext, UtilityMetric, make_metric, report_measures
from kanonym.models import KAnonymity, PrivacyModel, parse_model
from kanonym.release.granularity import (
    CellReport,
    measure_cells,
    release_cells,
    reported_score,
    search_attribute_suppression,
)
from kanonym.report import SCHEMA_VERSION, render_json
from kanonym.search import (
    ALGORITHMS,
    CellSuppressionEvaluator,
    NodeEvaluation,
    NodeEvaluator,
    Progress,
    SearchControl,
    run_search,
)
from kanonym.search.trace import SearchTrace
from kanonym.transform import generalize, kept_rows
from kanonym.verify import CellCounts, CheckSummary, measure_table, verify_models, verify_release

if TYPE_CHECKING:
    import pandas


@dataclass(frozen=True)
class Solution:
    """One candidate generalization with its measures.

    Attributes:
        transformation: quasi-identifier -> hierarchy level.
        suppressed_rows: rows its minimal required suppression removes.
        metrics: every utility metric plus :func:`kanonym.metrics.report_measures`.
        suppressed_cells: cells blanked under cell suppression (None otherwise).
    """

    transformation: dict[str, int]
    suppressed_rows: int
    metrics: dict[str, object]
    suppressed_cells: int | None = None

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form used in the report."""
        cells = {} if self.suppressed_cells is None else {"suppressed_cells": self.suppressed_cells}
        return {
            "transformation": dict(self.transformation),
            "suppressed_rows": self.suppressed_rows,
            **cells,
            "metrics": self.metrics,
        }


@dataclass(frozen=True)
class UnchangedColumn:
    """A column the release publishes exactly as the input holds it.

    Attributes:
        column: its name.
        role: ``sensitive``, ``insensitive`` or ``unlisted`` (kept by
            ``keep_unlisted``).
        distinct_values: distinct values among the released rows.
        uniqueness: share of released rows whose value no other released row
            holds (:func:`kanonym.attacks.measures.value_uniqueness`).
        likely_direct_identifier: ``uniqueness`` reaches
            :data:`~kanonym.attacks.measures.DIRECT_IDENTIFIER_UNIQUENESS`: the
            column alone singles out (nearly) every record, as a name or an SSN
            does.
    """

    column: str
    role: Literal["sensitive", "insensitive", "unlisted"]
    distinct_values: int
    uniqueness: float
    likely_direct_identifier: bool

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form used in the report."""
        return {
            "column": self.column,
            "role": self.role,
            "distinct_values": self.distinct_values,
            "uniqueness": self.uniqueness,
            "likely_direct_identifier": self.likely_direct_identifier,
        }


def _shown(value: object) -> str:
    """A measure for a person: six significant digits for a real number."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


LOSS_WARNING = 0.9
"""Information loss (``loss``, or ``ncp`` for a local recoding) above which a release
is reported as keeping little of the data."""


@dataclass(frozen=True, eq=False)
class Result:
    """A verified release, ready to be written.

    Attributes:
        table: the released rows (Polars), already re-checked.
        transformation: quasi-identifier -> chosen level; None for a local
            recoding, which has no level (see ``recoding``).
        metrics: measures of the chosen generalization.
        minimal_generalizations: every solution the search proposed, best first
            (all k-minimal generalizations for ``minimal``).
        config: the job that produced it.
        seed: the seed of the row shuffle.
        recoding: for a local recoding (Mondrian), the report's ``recoding``
            object: method, variant, partitions, classes and each
            quasi-identifier's axis kind; None for full-domain releases.
        input_table: the table that was anonymized, for the HTML report's
            "before" figures and fingerprint (None when not kept).
        search: what the lattice search checked, for the HTML report's lattice
            figure (None when no search ran: ``apply``).
        on_progress: the progress callback the release was made with; writing
            the files (:meth:`write`, :meth:`payloads`) reports to it too.
    """

    table: pl.DataFrame
    transformation: dict[str, int] | None
    metrics: dict[str, object]
    minimal_generalizations: tuple[Solution, ...]
    config: AnonymizationConfig
    seed: int
    input_rows: int
    suppressed_rows: int
    max_suppressed_rows: int
    nodes_checked: int
    proven_optimal: bool
    models: tuple[PrivacyModel, ...]
    sensitive_hierarchies: Mapping[str, Hierarchy]
    hierarchies: Mapping[str, Hierarchy]
    source: str
    dialect: CsvDialect | None
    timings: dict[str, float] = field(default_factory=dict)
    applied_from: str | None = None
    recoding: dict[str, object] | None = None
    suppressed_cells: CellReport | None = None
    input_table: Table | None = None
    search: SearchTrace | None = None
    on_progress: Callable[[Progress], None] | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        """One line: what was released and how, never the table itself."""
        if self.transformation is not None:
            how = "[" + ", ".join(f"{n}={v}" for n, v in self.transformation.items()) + "]"
        else:
            how = f"{self.config.algorithm} local recoding"
        metric = self.config.metric or ("ncp" if self.transformation is None else None)
        score = "" if metric is None else f", {metric} {_shown(self.metrics.get(metric))}"
        return (
            f"<kanonym.Result: {self.table.height} of {self.input_rows} rows released "
            f"({self.suppressed_rows} suppressed), k={self.config.k}, {how}{score}, "
            f"seed {self.seed}>"
        )

    def summary(self) -> str:
        """A few lines for a person: rows, generalization, measures, columns and warnings.

        Example:
            >>> import polars as pl
            >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"],
            ...                       "visits": ["1", "2", "1", "3"]})
            >>> result = anonymize(table, quasi_identifiers={"zip": "mask"}, k=2,
            ...                    insensitive=["visits"], seed=1)
            >>> print(result.summary())
            released 4 of 4 rows (0 suppressed, limit 0); k=2
            generalization: zip=1 of 5 (optimal, proven optimal)
            loss 0.333333, 2 classes, smallest 2 rows
            released unchanged: visits (insensitive)
        """
        config = self.config
        lines = [
            f"released {self.table.height} of {self.input_rows} rows ({self.suppressed_rows} "
            f"suppressed, limit {self.max_suppressed_rows}); k={config.k}"
            + "".join(f", {m.describe()['model']}" for m in self.models[1:])
        ]
        proof = "proven optimal" if self.proven_optimal else "not proven optimal"
        if self.transformation is not None:
            levels = ", ".join(
                f"{n}={v} of {self.hierarchies[n].height}" for n, v in self.transformation.items()
            )
            lines.append(f"generalization: {levels} ({config.algorithm}, {proof})")
            measure = config.metric or "loss"
        else:
            partitions = (self.recoding or {}).get("partitions")
            lines.append(f"local recoding: {config.algorithm}, {partitions} partitions")
            measure = "ncp"
        sizes = self.table.group_by(list(self.hierarchies)).len().get_column("len").to_numpy()
        lines.append(
            f"{measure} {_shown(self.metrics.get(measure))}, {sizes.size} classes, "
            f"smallest {int(sizes.min()) if sizes.size else 0} rows"
        )
        unchanged = ", ".join(f"{c.column} ({c.role})" for c in self.released_unchanged)
        lines.append(f"released unchanged: {unchanged or 'no column'}")
        lines.extend(f"warning: {warning}" for warning in self.warnings)
        return "\n".join(lines)

    def to_pandas(self) -> pandas.DataFrame:
        """The released table as a pandas DataFrame (needs the ``pandas`` extra)."""
        return self.table.to_pandas()

    @functools.cached_property
    def released_unchanged(self) -> tuple[UnchangedColumn, ...]:
        """Every released column that is not a quasi-identifier, with its uniqueness.

        These columns are published exactly as the input holds them; the reports
        list them, and flag those unique on (nearly) every row as likely direct
        identifiers.
        """
        # Loaded here: a release that writes no report needs no attack measure.
        from kanonym.attacks.measures import DIRECT_IDENTIFIER_UNIQUENESS, value_uniqueness

        config = self.config
        unchanged = [c for c in self.table.columns if c not in self.hierarchies]
        if not unchanged:
            return ()
        shares = value_uniqueness(self.table, unchanged)
        distinct = self.table.select(pl.col(c).n_unique() for c in unchanged).row(0)
        role: dict[str, Literal["sensitive", "insensitive"]] = {
            **dict.fromkeys(config.insensitive, "insensitive"),
            **dict.fromkeys(config.sensitive, "sensitive"),
        }
        return tuple(
            UnchangedColumn(
                column=column,
                role=role.get(column, "unlisted"),
                distinct_values=int(count),
                uniqueness=shares[column],
                likely_direct_identifier=shares[column] >= DIRECT_IDENTIFIER_UNIQUENESS,
            )
            for column, count in zip(unchanged, distinct, strict=True)
        )

    @functools.cached_property
    def wiped_attributes(self) -> dict[str, str | None]:
        """Quasi-identifiers released as one value in every released row, and that value.

        The value is the hierarchy's root when the attribute is fully suppressed
        (generalized to the root, every cell blanked, or a local recoding whose
        every class covers the whole hierarchy); another label every row got
        (``021**`` when every ZIP starts with 021) tells as little. A column
        that held one value in the input had nothing to tell and is not counted.
        """
        names = [name for name in self.hierarchies if name in self.table.columns]
        if not names or self.table.height == 0:
            return {}
        # "Does any row differ from the first" is one comparison per cell, about three
        # times cheaper than counting distinct values (1.3 s of a 10M-row run).
        varied = self.table.select(
            pl.col(n).ne_missing(pl.col(n).first()).any() for n in names
        ).row(0)
        source = self.input_table.frame if self.input_table is not None else None
        wiped: dict[str, str | None] = {}
        for name, differs in zip(names, varied, strict=True):
            if differs:
                continue
            hierarchy = self.hierarchies[name]
            before = (
                source.get_column(name).n_unique()
                if source is not None
                else len(hierarchy.levels[0])
            )
            if before < 2:
                continue
            wiped[name] = self.table.get_column(name)[0]
        return wiped

    @property
    def warnings(self) -> tuple[str, ...]:
        """What makes this release less useful or less safe than it looks, one line each.

        An attribute fully suppressed, an information loss above
        :data:`LOSS_WARNING`, and a column released unchanged that is likely a
        direct identifier. The command line prints them on stderr and both
        reports record them.
        """
        notes = [
            f"{name}: fully suppressed"
            if value == self.hierarchies[name].levels[-1][0]
            else f"{name}: one value ({'missing' if value is None else repr(value)}) "
            "for every row, as good as suppressed"
            for name, value in self.wiped_attributes.items()
        ]
        loss_name = "loss" if self.transformation is not None else "ncp"
        loss = self.metrics.get(loss_name)
        if isinstance(loss, float) and loss > LOSS_WARNING:
            notes.append(
                f"information loss ({loss_name}) {loss:.3f} is above {LOSS_WARNING}: "
                "the release keeps little of the data"
            )
        notes.extend(
            f"column '{c.column}' ({c.role}) is released unchanged and unique on "
            f"{c.uniqueness:.0%} of rows: likely a direct identifier"
            for c in self.released_unchanged
            if c.likely_direct_identifier
        )
        return tuple(notes)

    def report(self) -> dict[str, object]:
        """The release report (schema in the README, ``schema_version`` 1)."""
        config = self.config
        return {
            "schema_version": SCHEMA_VERSION,
            "kanonym_version": __version__,
            "input": self.source,
            "input_rows": self.input_rows,
            "released_rows": self.table.height,
            "suppressed_rows": self.suppressed_rows,
            "max_suppressed_rows": self.max_suppressed_rows,
            "suppression_limit": config.suppression.describe(),
            "k": config.k,
            "models": [model.describe() for model in self.models],
            "model_specs": list(config.models),
            "sensitive_hierarchies": {
                name: hierarchy.name for name, hierarchy in self.sensitive_hierarchies.items()
            },
            "quasi_identifiers": list(config.hierarchies),
            "identifying": list(config.identifying),
            "sensitive": list(config.sensitive),
            "insensitive": list(config.insensitive),
            "keep_unlisted": config.keep_unlisted,
            "released_unchanged": [column.as_dict() for column in self.released_unchanged],
            "warnings": list(self.warnings),
            "hierarchies": {
                name: {"source": h.name, "height": h.height} for name, h in self.hierarchies.items()
            },
            "hierarchy_duplicates": config.hierarchy_duplicates,
            "repeated_leaves": {
                name: [leaf.as_dict() for leaf in h.repeated_leaves]
                for name, h in {**self.hierarchies, **self.sensitive_hierarchies}.items()
                if h.repeated_leaves
            },
            "transformation": None if self.transformation is None else dict(self.transformation),
            **({} if self.recoding is None else {"recoding": self.recoding}),
            "technique": config.technique,
            "suppressed_attributes": [
                name
                for name, level in (self.transformation or {}).items()
                if level == self.hierarchies[name].height
            ],
            "suppressed_cells": (
                self.suppressed_cells or CellReport(CellCounts.none(list(self.hierarchies)))
            ).as_dict(),
            "metrics": self.metrics,
            "minimal_generalizations": [s.as_dict() for s in self.minimal_generalizations],
            "algorithm": config.algorithm,
            "metric": config.metric,
            "policy": config.policy,
            "proven_optimal": self.proven_optimal,
            "time_limit": config.time_limit,
            "weights": {name: config.weights.get(name, 1.0) for name in self.hierarchies},
            "min_levels": dict(config.min_levels),
            "max_levels": dict(config.max_levels),
            "seed": self.seed,
            "nodes_checked": self.nodes_checked,
            "verified": True,
            "elapsed_seconds": round(sum(self.timings.values()), 6),
            "timings": {step: round(seconds, 6) for step, seconds in self.timings.items()},
            **({} if self.applied_from is None else {"applied_from": self.applied_from}),
        }

    def write(
        self,
        output: str | Path,
        *,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
    ) -> None:
        """Write the release (CSV in the input's dialect, or Parquet) and the reports.

        All files are written atomically and together: either all are
        replaced or none is touched. The report's ``timings.write`` is the
        time spent serializing the release. ``report_html`` is the HTML report
        (:mod:`kanonym.report.html`; needs matplotlib, the ``report`` extra),
        which fingerprints the release and JSON report exactly as written.

        Raises:
            InputError: a destination is the input table or a hierarchy file,
                two destinations are one file, or one cannot be written
                (:func:`kanonym.io.paths.check_destinations`); checked before
                anything is serialized.
        """
        check_destinations(
            {"output": output, "report": report, "report_html": report_html}, self.input_files()
        )
        payloads = self.payloads(output, report=report, report_html=report_html)
        announce(self.on_progress, "writing", detail=f"{len(payloads)} files")
        write_atomic(payloads)

    def input_files(self) -> dict[str, Path | None]:
        """The files this release was made from, which no destination may overwrite."""
        files: dict[str, Path | None] = {
            "input table": None if self.source == "<DataFrame>" else Path(self.source)
        }
        hierarchies = {**self.hierarchies, **self.sensitive_hierarchies}
        for name, hierarchy in hierarchies.items():
            # A hierarchy read from an ARX file is named by its path; builders' are not files.
            if Path(hierarchy.name).is_file():
                files[f"hierarchy file of '{name}'"] = Path(hierarchy.name)
        return files

    def payloads(
        self,
        output: str | Path,
        *,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
        report_extra: Mapping[str, object] | None = None,
    ) -> list[tuple[Path, bytes]]:
        """The files :meth:`write` writes, as ``(path, bytes)``: the release, then the reports.

        ``report_extra`` holds keys added at the end of the JSON report (the
        ledger's ``ledger`` object). Sets ``timings.write``. Reports the
        ``writing`` and ``drawing report`` stages to :attr:`on_progress`.
        """
        output = Path(output)
        announce(self.on_progress, "writing", detail=output.name)
        started = time.perf_counter()
        payloads = [(output, serialize(self.table, fmt=format_for(output), dialect=self.dialect))]
        self.timings["write"] = time.perf_counter() - started
        if report is not None:
            from kanonym.report.fingerprints import report_fingerprints

            document = {
                **self.report(),
                "output": str(output),
                **report_fingerprints(self, payloads[0]),
                **(report_extra or {}),
            }
            payloads.append((Path(report), render_json(document)))
        if report_html is not None:
            from kanonym.report.html import render_html  # draws with matplotlib, an extra

            page = render_html(self, written=payloads, on_progress=self.on_progress)
            payloads.append((Path(report_html), page))
        return payloads


def declare_models(table: Table, config: AnonymizationConfig) -> list[PrivacyModel]:
    """k-anonymity and the job's other models, with sensitive hierarchies resolved."""
    hierarchies = _resolve(table, config.sensitive_hierarchy_sources)
    return [
        KAnonymity(k=config.k),
        *(parse_model(spec, sensitive_hierarchies=hierarchies) for spec in config.models),
    ]


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
    models = declare_models(table, config)
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
    table: Table,
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
    encoded = evaluator.encoded
    seed = config.seed if config.seed is not None else secrets.randbits(63)
    announce(on_progress, "transforming")
    if isinstance(evaluator, CellSuppressionEvaluator):
        released, cells = release_cells(
            table.frame, evaluator, hierarchies, node, config=config, seed=seed, lap=stopwatch.lap
        )
        return released, seed, cells
    keep = kept_rows(evaluator.classes(node), evaluator.frequency_set.row_tuple)
    released, source_rows = generalize(
        table.frame, encoded, node, keep=keep, drop=config.identifying, seed=seed
    )
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
    encoded = encode(table.frame, hierarchies)
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
        table, evaluator, hierarchies, best.node, config, stopwatch, on_progress
    )
    return Result(
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
    data: str | Path | pl.DataFrame | pandas.DataFrame,
    config: AnonymizationConfig | None = None,
    *,
    quasi_identifiers: Mapping[str, HierarchyLike | str | Path] | None = None,
    k: int | None = None,
    identifying: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    insensitive: Sequence[str] = (),
    keep_unlisted: bool = False,
    models: Sequence[str] = (),
    sensitive_hierarchies: Mapping[str, HierarchyLike | str | Path] | None = None,
    max_suppression: float | None = None,
    max_suppressed_rows: int | None = None,
    algorithm: str = "optimal",
    metric: str | None = None,
    policy: str | None = None,
    time_limit: float | None = None,
    weights: Mapping[str, float] | None = None,
    min_levels: Mapping[str, int] | None = None,
    max_levels: Mapping[str, int] | None = None,
    seed: int | None = None,
    technique: str | None = None,
    delimiter: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
) -> Result:
    """Anonymize ``data`` (a CSV/Parquet path, or a Polars or pandas DataFrame).

    Either pass a ready :class:`~kanonym.config.AnonymizationConfig` or the
    same fields as keywords. Every column of ``data`` must have a role:
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
            raise InputError("anonymize needs quasi_identifiers and k (or a config)")
        config = AnonymizationConfig(
            quasi_identifiers=quasi_identifiers,
            k=k,
            identifying=tuple(identifying),
            sensitive=tuple(sensitive),
            insensitive=tuple(insensitive),
            keep_unlisted=keep_unlisted,
            models=tuple(models),
            sensitive_hierarchies=sensitive_hierarchies or {},
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
    data: str | Path | pl.DataFrame | pandas.DataFrame,
    quasi_identifiers: Sequence[str],
    k: int,
    *,
    sensitive: Sequence[str] = (),
    delimiter: str | None = None,
) -> CheckSummary:
    """Measure ``data`` on ``quasi_identifiers`` (``kanonym check``).

    Reports whether the table is k-anonymous and, for each column in
    ``sensitive``, its l-diversity, t-closeness, beta-likeness, delta-disclosure
    and (alpha,k) measures (see :mod:`kanonym.verify.sensitive`).

    Raises:
        InputError: k is not a whole number >= 1, a column is missing or named
            twice, a sensitive column is also a quasi-identifier, or the table has
            no rows.

    Example:
        >>> import polars as pl
        >>> table = pl.DataFrame({"zip": ["0213*", "0213*", "0214*"], "disease": ["a", "b", "a"]})
        >>> summary = check(table, ["zip"], 2, sensitive=["disease"])
        >>> summary.rows_below_k, summary.sensitive["disease"].l_distinct
        (1, 1)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(sensitive, str):
        raise InputError(f"sensitive must be a list of column names, got the string {sensitive!r}")
    for name in sensitive:
        if name in quasi_identifiers:
            raise InputError(f"column '{name}' is both quasi-identifier and sensitive")
    if len(set(sensitive)) != len(sensitive):
        raise InputError(f"sensitive: a column is named twice in {list(sensitive)}")
    table = load(data, delimiter=delimiter)
    table.require([*quasi_identifiers, *sensitive])
    return measure_table(table.frame, quasi_identifiers, k, sensitive)


def run_job(job: ReleaseJob, *, on_progress: Callable[[Progress], None] | None = None) -> Result:
    """Run a :class:`~kanonym.config.ReleaseJob` and write its files."""
    result = anonymize(job.input, job.config, delimiter=job.delimiter, on_progress=on_progress)
    result.write(job.output, report=job.report, report_html=job.report_html)
    return result
