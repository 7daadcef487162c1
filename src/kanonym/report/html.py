"""The HTML release report: one self-contained page a privacy officer can file.

:func:`render_html` turns a verified :class:`~kanonym.result.Result` into one
HTML page: inline CSS, figures as inline SVG, no script and no reference to any
other file or address, laid out to print. Its sections (ids in
:data:`SECTIONS`): summary, configuration, SHA-256 fingerprints of published
files (never of the input: :mod:`kanonym.report.fingerprints`), versions,
per-quasi-identifier distributions before and after, class sizes of the
release, the generalization lattice (every node when it has at most
:data:`~kanonym.report.content.MAX_DRAWN_LATTICE`, else per height and around
the released node; a per-class summary when no lattice search ran),
re-identification risk before
and after (:func:`kanonym.risk`), utility metrics, timings, and the rules by
which the page itself discloses nothing (:mod:`kanonym.report.content`).

:func:`figures` returns the same figures as Vega-Lite specifications, for
notebooks and the workbench (:mod:`kanonym.report.charts`); the page renders
them to SVG with ``vl-convert`` (:func:`kanonym.figures.render.to_svg`), the
``report`` extra: without it :func:`render_html` raises
:class:`~kanonym.errors.InputError` saying what to install.

Example:
    >>> import polars as pl
    >>> from kanonym.release import anonymize
    >>> table = pl.DataFrame({"zip": ["94139", "94139", "94141", "94142"]})
    >>> result = anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
    >>> page = render_html(result).decode()
    >>> page.startswith("<!DOCTYPE html>"), all(f'id="{s}"' in page for s in SECTIONS)
    (True, True)
    >>> sorted(figures(result))
    ['class_sizes', 'distribution:zip', 'lattice', 'risk']
"""

from __future__ import annotations

import datetime
import functools
import html
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from kanonym.attacks import RiskSummary
from kanonym.figures import Spec
from kanonym.figures.render import render_all
from kanonym.figures.render import require_vl_convert as require_vl_convert
from kanonym.models import model_spec
from kanonym.report import charts
from kanonym.report.content import (
    MAX_BARS,
    MAX_DRAWN_LATTICE,
    MISSING,
    SUPPRESSED,
    ReportContent,
    class_size_summary,
    gather,
    metric_definitions,
)
from kanonym.report.fingerprints import WrittenFile
from kanonym.search.base import Progress

if TYPE_CHECKING:
    from kanonym.result import Result

SECTIONS = (
    "summary",
    "configuration",
    "fingerprints",
    "versions",
    "distributions",
    "class-sizes",
    "lattice",
    "risk",
    "utility",
    "timings",
    "disclosure",
)
"""Ids of the page's sections, in order."""

_TITLES = {
    "summary": "Summary",
    "configuration": "Configuration",
    "fingerprints": "Fingerprints (SHA-256)",
    "versions": "Versions",
    "distributions": "Quasi-identifiers before and after",
    "class-sizes": "Class sizes of the release",
    "lattice": "Generalization lattice",
    "risk": "Re-identification risk before and after",
    "utility": "Utility metrics",
    "timings": "Timings",
    "disclosure": "What this report does not disclose",
}
# The stage name of progress reports while the page is drawn (kanonym.search.base.STAGES).
_DRAWING = "drawing report"
# Solutions listed in the utility section; the JSON report has them all.
_MAX_SOLUTIONS = 20
_MAX_LISTED_NODES = 40

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       color: #1a1a1a; max-width: 1060px; margin: 1.5em auto; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 2px solid #2f6ea8; padding-bottom: 0.15em;
     margin-top: 1.6em; }
h3 { font-size: 1em; margin: 1em 0 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0 0.8em; font-size: 0.9em; }
th, td { border: 1px solid #c8c8c8; padding: 0.2em 0.55em; text-align: left; vertical-align: top; }
th { background: #eef2f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .hash { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.92em; }
.hash { white-space: nowrap; font-size: 0.82em; }
.note { color: #4a4a4a; font-size: 0.9em; }
.warnings { color: #8a1c1c; }
.ok { color: #1e6b3a; font-weight: bold; }
nav ol { columns: 3; font-size: 0.9em; }
figure { margin: 0.6em 0 1em; break-inside: avoid; page-break-inside: avoid; }
svg { max-width: 100%; height: auto; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  table, figure { break-inside: avoid; page-break-inside: avoid; }
  .hash { white-space: normal; word-break: break-all; }
}
"""


def _figure_makers(content: ReportContent) -> dict[str, Callable[[], Spec]]:
    """Each figure of the report, by name, as a function that builds its spec."""
    k = content.result.config.k
    makers: dict[str, Callable[[], Spec]] = {
        f"distribution:{d.column}": functools.partial(charts.distribution_figure, d, k=k)
        for d in content.distributions
    }
    makers["class_sizes"] = functools.partial(charts.class_size_figure, content.class_sizes, k=k)
    view = content.lattice
    if view is not None and view.whole:
        makers["lattice"] = functools.partial(charts.lattice_figure, view)
    elif view is not None:
        makers["lattice_heights"] = functools.partial(charts.height_figure, view)
    if content.risk_bands:
        makers["risk"] = functools.partial(charts.risk_figure, content.risk_bands)
    return makers


def figures(result: Result, *, check_lattice: bool = False) -> dict[str, Spec]:
    """The report's figures for ``result``, as Vega-Lite specifications (plain dicts).

    Keys: ``distribution:COL`` per quasi-identifier (histograms of numbers
    and dates, bars of other values, input beside release, no input bar or
    bin under k rows), ``class_sizes``, ``lattice`` (every node, on lattices
    of at most :data:`~kanonym.report.content.MAX_DRAWN_LATTICE` nodes) or
    ``lattice_heights`` (per height and around the released node, larger
    ones; neither without a lattice search) and ``risk`` (records by class
    size before and after; absent without the input). ``check_lattice``: as
    for :func:`render_html`. Draw one with
    :func:`kanonym.figures.render.to_svg`, or live with vega-embed.

    Example:
        >>> import polars as pl
        >>> from kanonym.release import anonymize
        >>> table = pl.DataFrame({"age": ["31", "33", "35", "38", "42", "44"]})
        >>> result = anonymize(table, quasi_identifiers={"age": "interval:10"}, k=2, seed=1)
        >>> release = figures(result)["distribution:age"]["hconcat"][1]
        >>> [(row["interval"], row["rows"]) for row in release["data"]["values"]]
        [('[30, 40)', 4), ('[40, 50)', 2)]
    """
    return {
        name: make()
        for name, make in _figure_makers(gather(result, check_lattice=check_lattice)).items()
    }


def render_html(
    result: Result,
    *,
    written: Sequence[WrittenFile] = (),
    on_progress: Callable[[Progress], None] | None = None,
    check_lattice: bool = False,
) -> bytes:
    """The HTML report of ``result`` as UTF-8 bytes.

    ``written`` holds the files written with it as ``(path, bytes)``, the
    release first and then the JSON report, whose SHA-256 it shows.
    ``on_progress`` receives a ``drawing report`` :class:`~kanonym.search.Progress`
    for each step: the risk measures, the lattice's unchecked nodes when
    ``check_lattice``, then figure i of n.

    The lattice figure shows the nodes the search checked; with
    ``check_lattice`` the others are checked too, for the report only
    (:func:`kanonym.report.content.gather`).

    Raises:
        InputError: ``vl-convert`` is not installed.
    """
    require_vl_convert()
    started = time.perf_counter()

    def step(detail: str, done: int = 0, total: int | None = None) -> None:
        if on_progress is not None:
            on_progress(Progress.of_stage(_DRAWING, detail=detail, done=done, total=total))

    content = gather(result, written=written, on_step=step, check_lattice=check_lattice)
    specs = {name: make() for name, make in _figure_makers(content).items()}
    names = list(specs)
    step(f"figure {names[0]}" if names else "figures", 0, len(names))
    svgs = render_all(
        list(specs.values()),
        on_drawn=lambda i: step(
            f"figure {names[i + 1]}" if i + 1 < len(names) else "page", i + 1, len(names)
        ),
    )
    drawn = dict(zip(names, svgs, strict=True))
    page = _Page(content, drawn, output=str(written[0][0]) if written else None)
    return page.render(time.perf_counter() - started).encode("utf-8")


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: object) -> str:
    """A measure for a table cell: 6 significant digits, null as "n/a"."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(
    rows: Iterable[Sequence[object]],
    header: Sequence[str] = (),
    numeric: Sequence[int] = (),
    hashes: Sequence[int] = (),
) -> str:
    """An HTML table; cells escaped, ``numeric`` columns right-aligned, ``hashes`` monospace."""
    parts = ["<table>"]
    if header:
        parts.append("<tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>")
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            css = ' class="num"' if i in numeric else ' class="hash"' if i in hashes else ""
            cells.append(f"<td{css}>{_e(_fmt(cell))}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _pairs(rows: Mapping[str, object]) -> str:
    return _table(((key, value) for key, value in rows.items()), numeric=())


def _vector(levels: Iterable[int]) -> str:
    return "[" + ", ".join(str(level) for level in levels) + "]"


class _Page:
    """Builds the page section by section; every value is escaped."""

    def __init__(self, content: ReportContent, drawn: Mapping[str, str], output: str | None):
        self.content = content
        self.result = content.result
        self.drawn = drawn
        self.output = output

    def render(self, seconds: float) -> str:
        result = self.result
        sections = {
            "summary": self.summary(),
            "configuration": self.configuration(),
            "fingerprints": self.fingerprints(),
            "versions": self.versions(),
            "distributions": self.distributions(),
            "class-sizes": self.class_sizes(),
            "lattice": self.lattice(),
            "risk": self.risk(),
            "utility": self.utility(),
            "timings": self.timings(seconds),
            "disclosure": self.disclosure(),
        }
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        title = f"kanonym release report: {self.output or result.source}"
        body = "\n".join(
            f'<section id="{key}">\n<h2>{_e(_TITLES[key])}</h2>\n{sections[key]}\n</section>'
            for key in SECTIONS
        )
        toc = "".join(f'<li><a href="#{key}">{_e(_TITLES[key])}</a></li>' for key in SECTIONS)
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<header>\n<h1>Release report</h1>\n<p>{_e(self.output or 'release not written')}"
            f" &mdash; {_fmt(result.released_rows)} of {_fmt(result.input_rows)} rows released, "
            f"k = {result.config.k}, verified; drawn by kanonym on {_e(now)}.</p>\n</header>\n"
            f"<nav><ol>{toc}</ol></nav>\n{body}\n</body>\n</html>\n"
        )

    def _figure(self, name: str, caption: str) -> str:
        drawing = self.drawn.get(name)
        if drawing is None:
            return ""
        return (
            f'<figure>\n{drawing}\n<figcaption class="note">{_e(caption)}</figcaption>\n</figure>'
        )

    def summary(self) -> str:
        result, config = self.result, self.result.config
        if config.metric is not None:
            ranking = f"metric {config.metric} = {_fmt(result.metrics.get(config.metric))}"
        else:
            ranking = f"policy {config.policy}"
        levels = result.transformation or {}
        rows: dict[str, object] = {
            "release": self.output or "not written (figures from the API)",
            "input": result.source,
            "input rows": result.input_rows,
            "released rows": result.released_rows,
            "suppressed rows": f"{result.suppressed_rows:,} (limit {result.max_suppressed_rows:,})",
            f"suppressed values (cells released as {SUPPRESSED})": self._suppressed_cells(),
            "k": config.k,
            "privacy models": "; ".join(
                ", ".join(f"{key}={value}" for key, value in entry.items())
                for entry in result.model_descriptions()
            ),
            "algorithm": config.algorithm,
            "chosen by": ranking,
            "proven optimal": result.proven_optimal,
            "generalization": ", ".join(
                f"{name}={level}/{result.hierarchies[name].height}"
                for name, level in levels.items()
            )
            or "no full-domain level (see the lattice section)",
            "verified": "yes: the privacy models were re-checked on the released table by code "
            "independent of the search before anything was written",
            "released unchanged": ", ".join(
                f"{c.column} ({c.role})" for c in result.released_unchanged
            )
            or "no column",
            "seed": result.seed,
        }
        warnings = "".join(f"<li>{_e(warning)}</li>" for warning in result.warnings)
        return _pairs(rows) + (
            f'\n<h3>Warnings</h3>\n<ul class="warnings">{warnings}</ul>' if warnings else ""
        )

    def _suppressed_cells(self) -> str:
        counts = [(d.column, d.suppressed_cells) for d in self.content.distributions]
        detail = ", ".join(f"{column} {count:,}" for column, count in counts if count)
        total = f"{self.content.suppressed_cells:,}"
        return f"{total} ({detail})" if detail else total

    def configuration(self) -> str:
        result, config = self.result, self.result.config
        dialect = result.dialect
        rows: dict[str, object] = {
            "input": result.source,
            "CSV layout": "n/a (Parquet or DataFrame)"
            if dialect is None
            else f"delimiter {dialect.delimiter!r}, encoding {dialect.encoding}, "
            f"line end {dialect.line_terminator!r}, quote all {dialect.quote_all}",
            "identifying (removed)": ", ".join(config.identifying) or "none",
            "sensitive (released as is)": ", ".join(config.sensitive) or "none",
            "insensitive (released as is)": ", ".join(config.insensitive) or "none",
            "columns named in no role": "released unchanged (keep unlisted)"
            if config.keep_unlisted
            else "refused",
            "model specs": "; ".join(model_spec(m) or m.name for m in config.models)
            or "none beyond k-anonymity",
            "sensitive hierarchies": ", ".join(
                f"{name}: {h.name}" for name, h in result.sensitive_hierarchies.items()
            )
            or "none",
            "k": config.k,
            "suppression limit": ", ".join(
                f"{key}={value}"
                for key, value in config.suppression.describe().items()
                if value is not None
            )
            or "none (0 rows)",
            "max suppressed rows": result.max_suppressed_rows,
            "algorithm": config.algorithm,
            "metric": config.metric or "n/a",
            "policy": config.policy or "n/a",
            "time limit (s)": config.time_limit if config.time_limit is not None else "none",
            "seed": result.seed,
        }
        rows["hierarchy files listing a value twice"] = self._repeated_leaves()
        if result.applied_from is not None:
            rows["applied from"] = result.applied_from
        qi_rows = [
            (
                name,
                hierarchy.name,
                hierarchy.height,
                config.weights.get(name, 1.0),
                config.min_levels.get(name, 0),
                config.max_levels.get(name, hierarchy.height),
                (result.transformation or {}).get(name),
            )
            for name, hierarchy in result.hierarchies.items()
        ]
        unchanged_rows = [
            (
                c.column,
                c.role,
                c.distinct_values,
                f"{c.uniqueness:.1%}",
                "yes" if c.likely_direct_identifier else "no",
            )
            for c in result.released_unchanged
        ]
        return (
            _pairs(rows)
            + "\n<h3>Columns released unchanged</h3>\n"
            + (
                _table(
                    unchanged_rows,
                    (
                        "column",
                        "role",
                        "distinct values",
                        "rows with a value of their own",
                        "likely direct identifier",
                    ),
                    numeric=(2, 3),
                )
                if unchanged_rows
                else "<p>None: every released column is a generalized quasi-identifier.</p>"
            )
            + "\n<h3>Quasi-identifiers</h3>\n"
            + _table(
                qi_rows,
                ("column", "hierarchy", "height", "weight", "min level", "max level", "released"),
                numeric=(2, 3, 4, 5, 6),
            )
            + '\n<p class="note">With this configuration, the same input (its fingerprint is '
            "in the JSON report) and the same seed, kanonym releases the same table.</p>"
        )

    def _repeated_leaves(self) -> str:
        """How hierarchy files listing a value twice were read; counts only, no content."""
        result = self.result
        if result.config.hierarchy_duplicates == "error":
            return "refused (hierarchy-duplicates error)"
        hierarchies = {**result.hierarchies, **result.sensitive_hierarchies}
        counts = [(name, len(h.repeated_leaves)) for name, h in hierarchies.items()]
        listed = ", ".join(
            f"{name}: {count} value{'s' if count > 1 else ''}" for name, count in counts if count
        )
        return (
            f"the last line of each value kept, as ARX does: {listed} (the JSON report lists "
            "the lines kept and dropped)"
            if listed
            else "the last line of each value kept, as ARX does; no file listed a value twice"
        )

    def fingerprints(self) -> str:
        shown = [f for f in self.content.fingerprints if f.on_page]
        kept = [f.what for f in self.content.fingerprints if not f.on_page]
        rows = [(f.what, f.sha256, f"{f.path} ({f.basis})", f.lets) for f in shown]
        # Fingerprints computed from the input confirm guesses of its values: the
        # JSON report and the ledger hold them, this page travels with the release.
        withheld = (
            f"Not shown: the fingerprints of {', '.join(kept)}, computed from the input; "
            "whoever knows all of the input but one value could test guesses of it against "
            "them. The JSON report (for the reviewer) and the ledger hold them. "
            if kept
            else ""
        )
        return (
            _table(
                rows,
                ("what", "SHA-256", "file (what was hashed)", "lets its holder"),
                hashes=(1,),
            )
            + f'\n<p class="note">{_e(withheld)}Each fingerprint confirms a guess of the bytes '
            "it was computed from; check a file with <code>sha256sum FILE</code>. "
            "The HTML report cannot hold its own fingerprint.</p>"
        )

    def versions(self) -> str:
        return _pairs(self.content.versions)

    def distributions(self) -> str:
        k = self.result.config.k
        parts = [
            f'<p class="note">Input: counts per value, every value found in fewer than {k} '
            f"input rows merged into one hatched <em>other</em> bar, which holds at least {k} "
            f"rows (less frequent values join it if needed), at most {MAX_BARS} bars. Release: the "
            f"released values over the released rows. {MISSING} is the missing value; "
            f"a {SUPPRESSED} cell is counted as a suppressed value.</p>"
        ]
        for d in self.content.distributions:
            caption = f"{d.column}: {d.suppressed_cells:,} released cells are {SUPPRESSED}."
            parts.append(self._figure(f"distribution:{d.column}", caption))
        return "\n".join(parts)

    def class_sizes(self) -> str:
        summary = class_size_summary(self.content.class_sizes)
        return (
            _pairs(summary)
            + "\n"
            + self._figure(
                "class_sizes",
                "Each class is the set of released rows sharing one combination of "
                f"quasi-identifier values; none is smaller than k = {self.result.config.k}.",
            )
        )

    def lattice(self) -> str:
        result, content = self.result, self.content
        trace, explored = result.search, content.explored
        if trace is None:
            summary = class_size_summary(content.class_sizes)
            return (
                '<p class="note">No lattice search made this release (recorded levels applied '
                "again, or local recoding), so there is no lattice to draw. Per-class summary of "
                "the release:</p>\n" + _pairs(summary)
            )
        checked = len(trace.checked)
        intro = (
            f"<p>{trace.lattice.size:,} nodes (distance vectors over "
            f"{_e(', '.join(trace.names))}); the search checked {checked:,} and released "
            f"<code>{_vector(trace.chosen)}</code>.</p>"
        )
        view = content.lattice
        assert view is not None  # a lattice search always leaves its view
        parts = [intro]
        if explored is not None:
            minimal = [explored.lattice.node(int(i)) for i in explored.minimal.nonzero()[0]]
            listed = ", ".join(f"<code>{_vector(n)}</code>" for n in minimal[:_MAX_LISTED_NODES])
            more = (
                f" and {len(minimal) - _MAX_LISTED_NODES} more"
                if len(minimal) > _MAX_LISTED_NODES
                else ""
            )
            extra = (
                f"To mark every minimal node, {explored.extra_checks:,} nodes the search did not "
                "need were checked for this report (check_lattice), after the search and with "
                "the same models and limit; they did not influence the release."
                if explored.extra_checks
                else "The search checked every node."
            )
            parts.append(
                f"<p>Minimal satisfying nodes ({len(minimal)}): {listed}{more}. "
                f"Optimum over the whole lattice: <code>{_vector(explored.optimum)}</code>"
                f"{' (the released node)' if explored.optimum == explored.chosen else ''}.</p>"
            )
            parts.append(f'<p class="note">{_e(extra)}</p>')
        else:
            parts.append(
                '<p class="note">Only what the search checked is shown: nodes it decided without '
                "a check (by monotonicity or a metric bound, or off a heuristic's path) are "
                "drawn as not checked. Checking them for the report "
                "(<code>check_lattice=True</code>) marks every minimal node and the optimum "
                "over the whole lattice.</p>"
            )
        legend = (
            "Green satisfies the models within the suppression limit, red does not, grey was "
            "not checked; the released node is squared"
            + (", the optimum a diamond, minimal nodes ringed" if explored is not None else "")
            + ". Hovering a node (in a browser) gives its levels, score and status."
        )
        if view.whole:
            parts.append(self._figure("lattice", f"Nodes by height (sum of levels). {legend}"))
            return "\n".join(parts)
        rows = [
            (
                row.height,
                row.satisfies + row.fails + row.not_checked,
                row.satisfies,
                row.fails,
                row.not_checked,
            )
            for row in view.per_height
        ]
        parts.append(
            f'<p class="note">More than {MAX_DRAWN_LATTICE:,} nodes: drawn per height, and '
            "around the released node (its direct specializations below it, generalizations "
            "above it) instead of node by node.</p>"
        )
        parts.append(
            _table(
                rows,
                ("height", "nodes", "satisfying", "failing", "not checked"),
                numeric=(0, 1, 2, 3, 4),
            )
        )
        parts.append(
            self._figure(
                "lattice_heights", f"Nodes per height by status; around the released node: {legend}"
            )
        )
        return "\n".join(parts)

    def risk(self) -> str:
        before, after = self.content.risk_before, self.content.risk_after
        if before is None:
            return '<p class="note">The input table is not available: no risk comparison.</p>'
        threshold = before.threshold

        def column(summary: RiskSummary | None) -> list[object]:
            if summary is None:
                return [None] * 9
            p = summary.prosecutor
            return [
                summary.rows,
                summary.classes,
                p.highest,
                p.average,
                p.records_at_risk,
                p.share_at_risk,
                summary.sample_uniques,
                summary.sample_uniqueness,
                summary.marketer,
            ]

        labels = [
            "records",
            "classes",
            "prosecutor risk, highest (1/smallest class)",
            "prosecutor risk, average (classes/records)",
            f"records at risk (risk above {threshold:g})",
            f"share of records at risk (above {threshold:g})",
            "sample uniques",
            "uniqueness (share of records alone in their class)",
            "marketer risk (expected share re-identified)",
        ]
        rows = list(zip(labels, column(before), column(after), strict=True))
        return (
            _table(rows, ("measure", "input", "release"), numeric=(1, 2))
            + '\n<p class="note">kanonym.risk on the quasi-identifiers, input and release '
            "(suppressed rows are not released). Definitions: kanonym's documentation, "
            "Risk and attacks.</p>\n"
            + self._figure("risk", "Share of records by the size of their class.")
        )

    def utility(self) -> str:
        metrics = dict(self.result.metrics)
        by_attribute = metrics.pop("precision_by_attribute", None)
        config = self.result.config
        weights = {name: config.weights.get(name, 1.0) for name in self.result.hierarchies}
        # Defined here, not only in the documentation: with weights, precision is a weighted mean.
        defined = metric_definitions(weights)
        measures = [(name, value, defined.get(name, "")) for name, value in metrics.items()]
        parts = [_table(measures, ("measure", "value", "definition"), numeric=(1,))]
        if isinstance(by_attribute, Mapping):
            parts.append("<h3>Precision by attribute</h3>")
            parts.append(_table(by_attribute.items(), ("attribute", "precision"), numeric=(1,)))
            parts.append(f'<p class="note">{_e(defined["precision_by_attribute"])}.</p>')
        solutions = self.result.minimal_generalizations
        score = config.metric or "precision"
        rows = [
            (
                _vector(s.transformation.values()) if s.transformation else "no full-domain level",
                s.suppressed_rows,
                s.metrics.get(score),
            )
            for s in solutions[:_MAX_SOLUTIONS]
        ]
        parts.append(f"<h3>Solutions proposed by the search ({len(solutions)}, best first)</h3>")
        parts.append(_table(rows, ("generalization", "suppressed rows", score), numeric=(1, 2)))
        return "\n".join(parts)

    def timings(self, seconds: float) -> str:
        rows = [(step, value) for step, value in self.result.timings.items()]
        rows.append(("total (s)", sum(self.result.timings.values())))
        rows.append(("this report (s)", seconds))
        return _table(rows, ("step", "seconds"), numeric=(1,))

    def disclosure(self) -> str:
        k = self.result.config.k
        return (
            "<ul>\n"
            f"<li>Input values appear only as aggregated counts; any value found in fewer than "
            f"{k} input rows is merged into an <em>other</em> bar of at least {k} rows and never "
            "named.</li>\n"
            "<li>Release distributions show released values only.</li>\n"
            "<li>No row, no class smaller than k and no hierarchy content is shown: only "
            "counts, measures, distance vectors, column names, file names and "
            "fingerprints of published material.</li>\n"
            "<li>No fingerprint computed from the input (the input's own, or a hierarchy's "
            "built from its values) is shown: it would confirm a guess of a value to whoever "
            "knows all the others.</li>\n</ul>"
        )
