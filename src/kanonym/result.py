"""What a release is: the verified table, its measures, and the report's schema.

This module is the neutral ground between the step that makes a release
(:mod:`kanonym.release`) and the step that files it (:mod:`kanonym.report`):
both import it and it imports neither. A :class:`Result` therefore cannot
draw or write its own report; :meth:`Result.write` hands itself to the
``writer`` the release step attached (:func:`kanonym.release.write.write_result`).

Example:
    >>> from kanonym import anonymize
    >>> import polars as pl
    >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    >>> result = anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
    >>> report = result.report()
    >>> report["schema_version"], report["quasi_identifiers"], result.table.height
    (2, {'zip': {'source': 'mask', 'height': 5}}, 4)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import polars as pl

from kanonym._html import escaped, section, shown, summary_box, table
from kanonym._version import __version__
from kanonym.config import AnonymizationConfig
from kanonym.engine import ServerRelease
from kanonym.engine.postgres import is_postgres_url
from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy
from kanonym.io import CsvDialect, Table
from kanonym.models import (
    DeltaPresence,
    DifferentialPrivacy,
    PrivacyModel,
    model_spec,
    needs_population,
)
from kanonym.models.average_risk import AverageReidentificationRisk
from kanonym.models.base import SampleModel, is_sample_model
from kanonym.models.k_map import KMap, described
from kanonym.search import Progress
from kanonym.search.trace import SearchTrace
from kanonym.verify import CellCounts
from kanonym.verify.population import POPULATION

if TYPE_CHECKING:
    import pandas

SCHEMA_VERSION = 2
"""The release report's schema version: it changes whenever a key changes meaning
or disappears, so reviewers' tooling can rely on it. Version 2: ``quasi_identifiers``
maps each quasi-identifier to its hierarchy (``source`` and ``height``, version 1's
separate ``hierarchies``), as it does in Python and job files."""


class ResultWriter(Protocol):
    """Writes a result's files (:func:`kanonym.release.write.write_result`)."""

    def __call__(
        self,
        result: Result,
        output: str | Path,
        *,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
        replace: bool = False,
        check_lattice: bool = False,
    ) -> None: ...


FigureMaker = Callable[["Result"], Mapping[str, Mapping[str, Any]]]
"""Makes a result's figures, by name, as Vega-Lite specifications."""

NOTEBOOK_FIGURES = ("class_sizes", "risk")
"""The report's figures the notebook view draws: class sizes, and records by class size
before and after; neither shows a value of the table."""


@dataclass(frozen=True)
class CellReport:
    """The report's ``suppressed_cells``: counts from the verified table, and per phase.

    Attributes:
        counts: blanked cells per quasi-identifier and rows touched (verified).
        by_phase: for mu-Argus, cells blanked by its 1-3 attribute combinations
            (``combinations``) and by kanonym's completion (``completion``);
            None for the other techniques.
    """

    counts: CellCounts
    by_phase: dict[str, int] | None = None

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "total": self.counts.total,
            "rows": self.counts.rows,
            "by_attribute": dict(self.counts.by_attribute),
            "by_phase": None if self.by_phase is None else dict(self.by_phase),
        }


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
        released: the released rows, already re-checked: a Polars DataFrame, or a
            :class:`~kanonym.engine.ServerRelease` the engine keeps where the rows
            live (read :attr:`table` to copy it out; :meth:`close` ends it).
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
        population_classes: for a sample of a population table, the population's
            classes at the release's levels with their rows
            (:func:`kanonym.verify.population.population_classes`), from which
            the reports give delta-presence's and k-map's reached values.
        search_record: builds :attr:`search` when first read (the lattice
            trace is drawn only by the HTML report); None when no full-domain
            search ran (``apply``, local recoding, _AS).
        on_progress: the progress callback the release was made with; writing
            the files (:meth:`write`, :meth:`payloads`) reports to it too.
        figure_maker: the report's figures of a result as Vega-Lite specs
            (:func:`kanonym.report.html.figures`), which the notebook view
            (:meth:`_repr_html_`) draws; None: tables only.
    """

    released: pl.DataFrame | ServerRelease
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
    search_record: Callable[[], SearchTrace] | None = field(default=None, compare=False)
    population_classes: pl.DataFrame | None = field(default=None, compare=False, repr=False)
    on_progress: Callable[[Progress], None] | None = field(default=None, compare=False)
    # Set by the release step: this module may not import the report step that writes.
    writer: ResultWriter | None = field(default=None, repr=False, compare=False)
    # Set by the release step, as the writer: the report step draws the figures.
    figure_maker: FigureMaker | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def table(self) -> pl.DataFrame:
        """The released rows as a Polars DataFrame (copied out of the engine on first use
        when the release stays where the rows live)."""
        if isinstance(self.released, pl.DataFrame):
            return self.released
        return self.released.frame()

    @property
    def released_rows(self) -> int:
        """The number of released rows (without copying a kept release out)."""
        if isinstance(self.released, pl.DataFrame):
            return self.released.height
        return self.released.rows

    @property
    def released_columns(self) -> tuple[str, ...]:
        """The released columns, in order."""
        if isinstance(self.released, pl.DataFrame):
            return tuple(self.released.columns)
        return self.released.columns

    def value_counts(self, columns: Sequence[str]) -> pl.DataFrame:
        """The distinct tuples of ``columns`` in the release with their counts (column
        ``len``), computed where the release is.

        Example:
            >>> import kanonym, polars as pl
            >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
            >>> result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
            >>> result.value_counts(["zip"]).sort("zip").rows()
            [('0213*', 2), ('0214*', 2)]
        """
        if isinstance(self.released, pl.DataFrame):
            return self.released.group_by(list(columns)).len()
        if list(columns) == list(self.hierarchies):
            return self._classes
        grouped = self.released.counts(columns)
        return grouped.values.with_columns(pl.Series("len", grouped.counts, pl.UInt32))

    @functools.cached_property
    def _classes(self) -> pl.DataFrame:
        """The classes of a release kept where the rows live, counted there once (the
        summary's sizes and the fully suppressed attributes both read them)."""
        assert not isinstance(self.released, pl.DataFrame)
        grouped = self.released.counts(list(self.hierarchies))
        return grouped.values.with_columns(pl.Series("len", grouped.counts, pl.UInt32))

    def close(self) -> None:
        """End the engine's hold on a release kept where the rows live (its connection or
        session); nothing for a release in memory. A release not published by then is
        discarded there (its rows stay readable through :attr:`table` if read before)."""
        if not isinstance(self.released, pl.DataFrame):
            self.released.close()

    def __enter__(self) -> Result:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @functools.cached_property
    def search(self) -> SearchTrace | None:
        """What the lattice search checked, for the HTML report's lattice figure (None when
        no full-domain search ran); built on first use."""
        return None if self.search_record is None else self.search_record()

    def __repr__(self) -> str:
        """One line: what was released and how, never the table itself."""
        if self.transformation is not None:
            how = "[" + ", ".join(f"{n}={v}" for n, v in self.transformation.items()) + "]"
        else:
            how = f"{self.config.algorithm} local recoding"
        metric = self.config.metric or ("ncp" if self.transformation is None else None)
        score = "" if metric is None else f", {metric} {_shown(self.metrics.get(metric))}"
        return (
            f"<kanonym.Result: {self.released_rows} of {self.input_rows} rows released "
            f"({self.suppressed_rows} suppressed), k={self.config.k}, {how}{score}, "
            f"seed {self.seed}>"
        )

    def __str__(self) -> str:
        """:meth:`summary`: a few lines for a person (``print(result)``)."""
        return self.summary()

    def _repr_html_(self) -> str:
        """The release as a notebook shows it: an HTML summary, every value escaped.

        Rows released and suppressed, the classes, the level of each
        quasi-identifier, each privacy model with the value the release reached
        (every model holds: the release was verified before it existed), the
        measures, re-identification risk before (with the input) and after, the
        warnings, and the report's class-size and risk figures as inline SVG
        (:data:`NOTEBOOK_FIGURES`; left out without ``vl-convert``). Like the
        report (:mod:`kanonym.report.content`), it shows counts, measures and
        names, never a row or a value of a class; it runs no search and checks
        no lattice node.

        Example:
            >>> import kanonym, polars as pl
            >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
            >>> result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
            >>> "<td>zip</td><td>1</td><td>5</td>" in result._repr_html_()
            True
        """
        sizes = self.value_counts(list(self.hierarchies)).get_column("len").to_numpy()
        smallest = int(sizes.min()) if sizes.size else None
        release = [
            ("rows released", f"{self.released_rows:,} of {self.input_rows:,}"),
            ("rows suppressed", f"{self.suppressed_rows:,} (limit {self.max_suppressed_rows:,})"),
            ("classes", int(sizes.size)),
            ("smallest class", smallest),
            (
                "algorithm",
                f"{self.config.algorithm} ({'' if self.proven_optimal else 'not '}proven optimal)",
            ),
            ("seed", self.seed),
        ]
        if self.suppressed_cells is not None:
            release.insert(2, ("cells suppressed", self.suppressed_cells.counts.total))
        if self.transformation is not None:
            how = table(
                [
                    (name, level, self.hierarchies[name].height, self.hierarchies[name].name)
                    for name, level in self.transformation.items()
                ],
                header=("quasi-identifier", "level", "of", "hierarchy"),
            )
        else:
            how = table(
                [
                    ("local recoding", self.config.algorithm),
                    ("partitions", (self.recoding or {}).get("partitions")),
                ]
            )
        parts = [
            table(release),
            section("generalization", how),
            section("privacy models", _models_html(self.model_descriptions(), smallest)),
            section("measures", table(self.metrics.items(), header=("measure", "value"))),
            section("re-identification risk (prosecutor)", self._risk_html(sizes)),
        ]
        if self.warnings:
            items = "".join(f"<li>{escaped(warning)}</li>" for warning in self.warnings)
            parts.append(section("warnings", f"<ul>{items}</ul>"))
        parts.append(self._figures_html())
        title = f"kanonym release: k={self.config.k}, {self.released_rows:,} rows"
        return summary_box(title, *parts)

    def _risk_html(self, sizes: np.ndarray[Any, np.dtype[Any]]) -> str:
        """Prosecutor risk of the input (when kept) and of the release, from class sizes."""
        columns = ["measure", "release"]
        after = _prosecutor(sizes)
        rows = [[name, value] for name, value in after]
        if self.input_table is not None:
            frame = self.input_table.frame
            before = _prosecutor(frame.group_by(list(self.hierarchies)).len()["len"].to_numpy())
            columns.insert(1, "input")
            for row, (_, value) in zip(rows, before, strict=True):
                row.insert(1, value)
        return table(rows, header=columns)

    def _figures_html(self) -> str:
        """The figures of :data:`NOTEBOOK_FIGURES` as inline SVG, or a note saying why not."""
        if self.figure_maker is None:
            return ""
        from kanonym.figures.render import to_svg

        try:
            specs = self.figure_maker(self)
            drawn = [to_svg(dict(specs[name])) for name in NOTEBOOK_FIGURES if name in specs]
        except InputError as missing:
            return f"<p><em>{escaped(missing)}</em></p>"
        return "".join(f"<figure>{svg}</figure>" for svg in drawn)

    def summary(self) -> str:
        """A few lines for a person: rows, generalization, measures, columns and warnings.

        Example:
            >>> import kanonym
            >>> import polars as pl
            >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"],
            ...                       "visits": ["1", "2", "1", "3"]})
            >>> result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=2,
            ...                    insensitive=["visits"], seed=1)
            >>> print(result.summary())
            released 4 of 4 rows (0 suppressed, limit 0); k=2
            generalization: zip=1 of 5 (optimal, proven optimal)
            loss 0.333333, 2 classes, smallest 2 rows
            released unchanged: visits (insensitive)
        """
        config = self.config
        lines = [
            f"released {self.released_rows} of {self.input_rows} rows ({self.suppressed_rows} "
            f"suppressed, limit {self.max_suppressed_rows}); k={config.k}"
            + "".join(f", {m.describe()['model']}" for m in self.models[1:])
        ]
        proof = "proven optimal" if self.proven_optimal else "not proven optimal"
        if self.transformation is not None:
            levels = ", ".join(
                f"{n}={v} of {self.hierarchies[n].height}" for n, v in self.transformation.items()
            )
            lines.append(f"generalization: {levels} ({config.algorithm}, {proof})")
            measure: str = config.metric or "loss"
        else:
            partitions = (self.recoding or {}).get("partitions")
            lines.append(f"local recoding: {config.algorithm}, {partitions} partitions")
            measure = "ncp"
        sizes = self.value_counts(list(self.hierarchies)).get_column("len").to_numpy()
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
        unchanged = [c for c in self.released_columns if c not in self.hierarchies]
        if not unchanged:
            return ()
        if isinstance(self.released, pl.DataFrame):
            shares = value_uniqueness(self.released, unchanged)
            distinct = self.released.select(pl.col(c).n_unique() for c in unchanged).row(0)
        else:
            # Counted where the release is: per column, its values' counts.
            counted = [self.released.counts([c]).counts for c in unchanged]
            rows = max(self.released.rows, 1)
            shares = {
                c: float((n == 1).sum()) / rows for c, n in zip(unchanged, counted, strict=True)
            }
            distinct = tuple(n.size for n in counted)
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
        names = [name for name in self.hierarchies if name in self.released_columns]
        if not names or self.released_rows == 0:
            return {}
        if not isinstance(self.released, pl.DataFrame):
            return self._wiped_counted(names)
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

    def _wiped_counted(self, names: Sequence[str]) -> dict[str, str | None]:
        """:attr:`wiped_attributes` of a release kept where the rows live, from its counts."""
        # A column holds one value in every row exactly when it does in every class.
        classes = self.value_counts(list(self.hierarchies))
        wiped: dict[str, str | None] = {}
        for name in names:
            values = classes.get_column(name).unique()
            if values.len() == 1 and len(self.hierarchies[name].levels[0]) >= 2:
                wiped[name] = values[0]
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

    def model_descriptions(self) -> list[dict[str, object]]:
        """Each privacy model's parameters, as the reports give them.

        A model judged on the whole release (a risk threshold: average risk,
        sample or population uniqueness) also gives the value the release
        reached, measured on its classes (``reached``; and, for an average
        risk with a highest risk, ``records_at_risk_reached``). Estimated
        k-map gives the least class size it derived (``derived_k``) and the
        least released class (``reached``); differential privacy its derived
        ``k``, the sample drawn and the least released class (``reached``).
        Delta-presence gives the least and greatest share of a released class's
        population in the sample, k-map with a population table the least
        population of a released class (``reached``).
        """
        names = list(self.hierarchies)
        # The release's classes, counted once for every model that reads them.
        classes = functools.cache(lambda: self.value_counts(names))
        out = []
        for model in self.models:
            entry = described(model, self.input_rows)
            derives_k = isinstance(model, DifferentialPrivacy) or (
                isinstance(model, KMap) and model.estimator is not None
            )
            if derives_k and self.released_rows:
                # Estimated k-map and SafePub are k-anonymity with a derived k: the least
                # class reached.
                entry["reached"] = int(classes().get_column("len").min())  # type: ignore[arg-type]
            if needs_population(model) and self.population_classes is not None:
                entry.update(self._population_reached(model, classes()))
            if is_sample_model(model):
                sizes = np.sort(classes().get_column("len").to_numpy().astype(np.int64))
                assert isinstance(model, SampleModel)
                entry["reached"] = model.measure(sizes, rows=self.input_rows)
                if isinstance(model, AverageReidentificationRisk) and model.highest_risk:
                    entry["records_at_risk_reached"] = model.share_at_risk(sizes)
            out.append(entry)
        return out

    def _population_reached(self, model: PrivacyModel, classes: pl.DataFrame) -> dict[str, object]:
        """What a population model reached on the release (its ``classes``, counted):
        delta-presence the least and greatest share of a class's population in the
        sample, k-map (with a population table) the least population of a released
        class."""
        assert self.population_classes is not None
        if not self.released_rows:
            return {}
        joined = classes.join(
            self.population_classes, on=list(self.hierarchies), how="left", nulls_equal=True
        )
        people = joined.get_column(POPULATION)
        if isinstance(model, DeltaPresence):
            shares = joined.get_column("len") / people
            return {"reached": [float(shares.min()), float(shares.max())]}  # type: ignore[arg-type]
        return {"reached": int(people.min())}  # type: ignore[arg-type]

    def report(self) -> dict[str, object]:
        """The release report (schema: the documentation's Reports page, ``schema_version`` 2)."""
        config = self.config
        return {
            "schema_version": SCHEMA_VERSION,
            "kanonym_version": __version__,
            "input": self.source,
            "input_rows": self.input_rows,
            "released_rows": self.released_rows,
            "suppressed_rows": self.suppressed_rows,
            "max_suppressed_rows": self.max_suppressed_rows,
            "suppression_limit": config.suppression.describe(),
            "k": config.k,
            "models": self.model_descriptions(),
            "model_specs": [model_spec(model) for model in config.models],
            "sensitive_hierarchies": {
                name: hierarchy.name for name, hierarchy in self.sensitive_hierarchies.items()
            },
            "quasi_identifiers": {
                name: {"source": h.name, "height": h.height} for name, h in self.hierarchies.items()
            },
            "identifying": list(config.identifying),
            "sensitive": list(config.sensitive),
            "insensitive": list(config.insensitive),
            "keep_unlisted": config.keep_unlisted,
            "released_unchanged": [column.as_dict() for column in self.released_unchanged],
            "warnings": list(self.warnings),
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
        replace: bool = False,
        check_lattice: bool = False,
    ) -> None:
        """Write the release (CSV in the input's dialect, or Parquet) and the reports.

        ``output`` may also be ``postgresql://USER@HOST:PORT/DB?table=SCHEMA.R``
        for a release of a PostgreSQL input: the table is created in that
        database and committed only after the re-check (which has passed);
        an existing table is refused unless ``replace``. The reports are put in
        place once it is committed.

        All files are written atomically and together: either all are
        replaced or none is touched (:func:`kanonym.release.write.write_result`).
        ``report_html`` is the HTML report (needs vl-convert, the ``report``
        extra), which fingerprints the release and JSON report exactly as
        written; ``check_lattice`` checks the lattice nodes the search did not
        need, for its lattice figure only (:func:`kanonym.report.render_html`).

        Raises:
            InputError: a destination is the input table or a hierarchy file,
                two destinations are one file, or one cannot be written;
                checked before anything is serialized.
        """
        if self.writer is None:
            raise TypeError("this Result was built without a writer; use kanonym.release.write")
        self.writer(
            self,
            output,
            report=report,
            report_html=report_html,
            replace=replace,
            check_lattice=check_lattice,
        )

    def input_files(self) -> dict[str, Path | None]:
        """The files this release was made from, which no destination may overwrite."""
        files: dict[str, Path | None] = {
            "input table": (
                None
                if self.source == "<DataFrame>" or is_postgres_url(self.source)
                else Path(self.source)
            )
        }
        hierarchies = {**self.hierarchies, **self.sensitive_hierarchies}
        for name, hierarchy in hierarchies.items():
            # A hierarchy read from an ARX file is named by its path; builders' are not files.
            if Path(hierarchy.name).is_file():
                files[f"hierarchy file of '{name}'"] = Path(hierarchy.name)
        return files


def _models_html(descriptions: Sequence[Mapping[str, object]], smallest: int | None) -> str:
    """Each model, its parameters and the value reached (k-anonymity's: the smallest class)."""
    apart = ("model", "reached", "records_at_risk_reached")
    rows = []
    for entry in descriptions:
        reached = entry.get("reached", smallest if entry["model"] == "k-anonymity" else None)
        parameters = ", ".join(
            f"{key}={shown(value)}" for key, value in entry.items() if key not in apart
        )
        rows.append((entry["model"], parameters, "yes", reached))
    return table(rows, header=("model", "parameters", "holds", "reached"))


def _prosecutor(sizes: np.ndarray[Any, np.dtype[Any]]) -> list[tuple[str, object]]:
    """The rows of the notebook's risk table for classes of ``sizes``: counts, and the
    prosecutor risk of :func:`kanonym.attacks.measures.prosecutor_risk` (El Emam &
    Dankar 2008), as :func:`kanonym.risk` measures it; sample uniques are the records
    alone in their class. Risks are None when nothing is released."""
    # Loaded here: a release shown nowhere needs no attack measure.
    from kanonym.attacks.defaults import DEFAULT_THRESHOLD
    from kanonym.attacks.measures import prosecutor_risk

    sizes = sizes.astype(np.int64)
    risk = prosecutor_risk(sizes, threshold=DEFAULT_THRESHOLD)
    released = bool(sizes.size)
    return [
        ("records", int(sizes.sum())),
        ("classes", int(sizes.size)),
        ("sample uniques", int((sizes == 1).sum())),
        ("highest risk", risk.highest if released else None),
        ("average risk", risk.average if released else None),
        (f"records above risk {DEFAULT_THRESHOLD:g}", risk.records_at_risk),
    ]
