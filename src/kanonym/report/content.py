"""What the HTML release report shows, computed from a release without drawing anything.

The report must not itself disclose what the release protects. Its rules:

* **Input distributions** are aggregated counts per quasi-identifier, with
  small cells merged (:func:`aggregate`): every value seen in fewer than k
  input rows goes into one bar ``other (N values)``; if that bar would hold
  fewer than k rows, the least frequent shown values join it until it holds
  k (so no bar shows fewer than k rows, and no raw value of a count below k is
  ever named). At most :data:`MAX_BARS` bars are drawn: beyond that the least
  frequent values are merged too.
* **Release distributions** show the released values only (they are public
  once the release is), counted over the released rows.
* Everything else is a count, a measure, a distance vector or a fingerprint
  of published material: no value of a class smaller than k, no row, no
  hierarchy content, and no fingerprint computed from the input (the input's,
  or a hierarchy's built from its values), which would let whoever knows all
  of the input but one value confirm a guess of it
  (:mod:`kanonym.report.fingerprints`).

A released ``*`` cell counts as a suppressed value (full-domain generalization
to a ``*`` root writes it too).

Example (ZIPs 94142 and 94138 occur once each, below k = 2: merged, never shown):
    >>> import polars as pl
    >>> zips = pl.Series(["94139", "94139", "94139", "94141", "94141", "94142", "94138"])
    >>> [(b.label, b.count) for b in aggregate(zips, min_count=2)]
    [('94139', 3), ('94141', 2), ('other (2 values)', 2)]

Here the merged bar holds one row, fewer than k = 2, so the least frequent
shown value joins it:

    >>> [(b.label, b.count) for b in aggregate(pl.Series(["a", "a", "b", "b", "b", "c"]),
    ...                                         min_count=2)]
    [('b', 3), ('other (2 values)', 3)]
"""

from __future__ import annotations

import platform
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

import polars as pl

from kanonym._version import __version__
from kanonym.attacks import RiskSummary, risk
from kanonym.report.fingerprints import Fingerprint, WrittenFile
from kanonym.report.fingerprints import fingerprints as all_fingerprints
from kanonym.search.trace import ExploredLattice, HeightSummary

if TYPE_CHECKING:
    from kanonym.result import Result

MAX_BARS = 30
"""Most bars in one distribution chart; less frequent values are merged beyond it."""

MISSING = "(missing)"
"""How a chart labels the missing value (an ordinary value of its own)."""

SUPPRESSED = "*"
"""A released cell holding this is counted as a suppressed value."""

RISK_BANDS: tuple[tuple[int, int | None], ...] = (
    (1, 1),
    (2, 2),
    (3, 4),
    (5, 9),
    (10, 19),
    (20, 99),
    (100, None),
)
"""Class-size bands (inclusive; None: no upper end) of the record-risk chart."""

VERSIONED_PACKAGES = ("polars", "numpy", "numba", "matplotlib")


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One bar of a distribution chart.

    Attributes:
        label: the value, or ``other (N values)`` for merged ones.
        count: rows holding it (them).
        merged: distinct values merged into it; 0 when the label is a value.
    """

    label: str
    count: int
    merged: int = 0

    def __post_init__(self) -> None:
        if self.count < 1 or self.merged < 0:
            raise ValueError("a bar counts at least one row and merges no negative number")


@dataclass(frozen=True, kw_only=True)
class QiDistribution:
    """One quasi-identifier before (input, aggregated) and after (release).

    Attributes:
        column: the quasi-identifier.
        level: the hierarchy level released, None without a full-domain level.
        before: bars of the input, small cells merged.
        after: bars of the released values.
        suppressed_cells: released cells holding ``*``.
    """

    column: str
    level: int | None
    before: tuple[Bar, ...]
    after: tuple[Bar, ...]
    suppressed_cells: int


@dataclass(frozen=True, kw_only=True)
class RiskBand:
    """Share of records in classes of a size band, before and after."""

    label: str
    before: float
    after: float | None


@dataclass(frozen=True, kw_only=True)
class ReportContent:
    """Everything the HTML report shows, no figure drawn yet.

    Attributes:
        result: the release.
        distributions: per quasi-identifier, in order.
        risk_before, risk_after: :func:`kanonym.risk` of the input and of the
            release on the quasi-identifiers (after is None when nothing is
            released).
        risk_bands: share of records per class-size band, before and after.
        explored: every node of a small lattice, None without one.
        per_height: per-height summary when the lattice is too large to draw.
        fingerprints: input, written files, hierarchies (the page shows only
            those whose ``on_page`` is set: :mod:`kanonym.report.fingerprints`).
        versions: package -> version.
    """

    result: Result
    distributions: tuple[QiDistribution, ...]
    risk_before: RiskSummary | None
    risk_after: RiskSummary | None
    risk_bands: tuple[RiskBand, ...]
    explored: ExploredLattice | None
    per_height: tuple[HeightSummary, ...]
    fingerprints: tuple[Fingerprint, ...]
    versions: Mapping[str, str]

    @property
    def class_sizes(self) -> Mapping[int, int]:
        """The release's class size -> number of classes (empty when nothing is released)."""
        return {} if self.risk_after is None else self.risk_after.class_sizes

    @property
    def suppressed_cells(self) -> int:
        """Released quasi-identifier cells holding ``*``."""
        return sum(d.suppressed_cells for d in self.distributions)


def _label(value: str | None) -> str:
    return MISSING if value is None else value


def aggregate(
    values: pl.Series,
    *,
    min_count: int,
    order: Sequence[str | None] = (),
    max_bars: int = MAX_BARS,
) -> tuple[Bar, ...]:
    """Bars of ``values``' counts, values under ``min_count`` merged (module docstring).

    Bars follow ``order`` (e.g. the hierarchy's), values it lacks after it in
    text order, the merged bar last. With ``min_count`` = k no bar shows
    fewer than k rows and no value counted fewer than k times is named.
    """
    if min_count < 1 or max_bars < 1:
        raise ValueError("min_count and max_bars must be >= 1")
    counts = values.cast(pl.String).rename("value").value_counts(name="n")
    rank = {value: i for i, value in enumerate(order)}
    # One entry per distinct value (not per row): (count, position, value).
    items = [
        (int(n), rank.get(v, len(rank)), "" if v is None else v, v)
        for v, n in zip(counts["value"].to_list(), counts["n"].to_list(), strict=True)
    ]
    items.sort(key=lambda item: (item[1], item[3] is None, item[2]))
    shown = [item for item in items if item[0] >= min_count]
    merged = [item for item in items if item[0] < min_count]
    room = max_bars - 1 if merged or len(shown) > max_bars else max_bars
    if len(shown) > room:
        by_count = sorted(shown, key=lambda item: -item[0])
        merged += by_count[room:]
        shown = by_count[:room]
    # The merged bar holds at least min_count rows, so its own count gives nothing away.
    while merged and shown and sum(item[0] for item in merged) < min_count:
        smallest = min(shown, key=lambda item: (item[0], -item[1], item[2]))
        shown.remove(smallest)
        merged.append(smallest)
    shown.sort(key=lambda item: (item[1], item[3] is None, item[2]))
    bars = [Bar(label=_label(item[3]), count=item[0]) for item in shown]
    if merged:
        n = len(merged)
        bars.append(
            Bar(
                label=f"other ({n} value{'s' if n > 1 else ''})",
                count=sum(item[0] for item in merged),
                merged=n,
            )
        )
    return tuple(bars)


def _distributions(result: Result) -> tuple[QiDistribution, ...]:
    levels = result.transformation or {}
    source = None if result.input_table is None else result.input_table.frame
    found = []
    for name in result.config.hierarchies:
        hierarchy = result.hierarchies.get(name)
        level = levels.get(name)
        released = result.table.get_column(name).cast(pl.String)
        after_order = (
            hierarchy.level_values(level) if hierarchy is not None and level is not None else ()
        )
        found.append(
            QiDistribution(
                column=name,
                level=level,
                before=()
                if source is None
                else aggregate(
                    source.get_column(name),
                    min_count=result.config.k,
                    order=() if hierarchy is None else hierarchy.leaves,
                ),
                after=aggregate(released, min_count=1, order=after_order),
                suppressed_cells=int((released == SUPPRESSED).sum()),
            )
        )
    return tuple(found)


def _bands(summary: RiskSummary | None) -> list[float] | None:
    if summary is None:
        return None
    shares = []
    for low, high in RISK_BANDS:
        rows = sum(
            size * count
            for size, count in summary.class_sizes.items()
            if size >= low and (high is None or size <= high)
        )
        shares.append(rows / summary.rows)
    return shares


def _band_label(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}+ (risk <= 1/{low})"
    if low == high:
        return f"{low} (risk 1/{low})" if low > 1 else "1 (unique, risk 1)"
    return f"{low}-{high} (risk 1/{high}-1/{low})"


def _risk_bands(before: RiskSummary | None, after: RiskSummary | None) -> tuple[RiskBand, ...]:
    shares_before, shares_after = _bands(before), _bands(after)
    if shares_before is None:
        return ()
    return tuple(
        RiskBand(
            label=_band_label(low, high),
            before=shares_before[i],
            after=None if shares_after is None else shares_after[i],
        )
        for i, (low, high) in enumerate(RISK_BANDS)
    )


def versions() -> dict[str, str]:
    """Versions of kanonym, Python and the libraries a release depends on.

    Example:
        >>> sorted(versions())[:3]
        ['kanonym', 'matplotlib', 'numba']
    """
    found = {"kanonym": __version__, "python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def _risk(frame: pl.DataFrame | None, qis: Sequence[str]) -> RiskSummary | None:
    return None if frame is None or frame.height == 0 else risk(frame, qis)


def gather(
    result: Result,
    *,
    written: Sequence[WrittenFile] = (),
    on_step: Callable[[str], None] | None = None,
) -> ReportContent:
    """Compute what the report shows for ``result``.

    ``written`` holds the files written with it, release first then the JSON
    report, as ``(path, bytes)``, to fingerprint them. ``on_step`` is told, in
    a few words, each step that may take a while (for a progress line).
    """
    step = on_step or (lambda _: None)
    qis = list(result.config.hierarchies)
    step("risk before and after")
    before = _risk(None if result.input_table is None else result.input_table.frame, qis)
    after = _risk(result.table, qis)
    trace = result.search
    explored = None
    if trace is not None and trace.evaluator is not None:
        # The lattice figure shows every node: those the search skipped are checked now,
        # which on a large table is most of the report's time.
        unchecked = trace.lattice.size - len(trace.checked)
        step(f"lattice: checking {unchecked:,} more nodes")
        explored = trace.explore()
    return ReportContent(
        result=result,
        distributions=_distributions(result),
        risk_before=before,
        risk_after=after,
        risk_bands=_risk_bands(before, after),
        explored=explored,
        per_height=() if trace is None or explored is not None else tuple(trace.per_height()),
        fingerprints=tuple(all_fingerprints(result, written)),
        versions=versions(),
    )


def metric_definitions(weights: Mapping[str, float]) -> dict[str, str]:
    """What each full-domain measure of the report is, in words, for the given weights.

    ``weights`` maps each quasi-identifier to its weight (1 unless given).
    Precision, height, loss and entropy weigh the quasi-identifiers by them,
    so with any weight other than 1 their definitions say how: precision is
    then one minus the *weighted* mean of level / height, not the plain mean.
    Definitions: :mod:`kanonym.metrics.utility` and :mod:`kanonym.metrics.measures`.

    Example:
        >>> defined = metric_definitions({"zip": 2.0, "age": 1.0})
        >>> print(defined["precision"])  # doctest: +NORMALIZE_WHITESPACE
        1 − weighted mean over quasi-identifiers of level / height, Σ w × level / height / Σ w
        with weights zip 2, age 1 (Sweeney 2002; suppression not counted)
        >>> metric_definitions({"zip": 1.0, "age": 1.0})["precision"].split(" (")[0]
        '1 − mean over quasi-identifiers of level / height'
    """
    weighted = any(w != 1.0 for w in weights.values())
    listed = ", ".join(f"{name} {weight:g}" for name, weight in weights.items())
    by = f" with weights {listed}" if weighted else ""
    precision = (
        "1 − weighted mean over quasi-identifiers of level / height, "
        f"Σ w × level / height / Σ w{by}"
        if weighted
        else "1 − mean over quasi-identifiers of level / height"
    )
    return {
        "precision": f"{precision} (Sweeney 2002; suppression not counted)",
        "precision_by_attribute": "1 − level / height, per quasi-identifier (unweighted)",
        "completeness": "1 − suppressed rows / input rows",
        "equivalence_classes": "classes in the released table",
        "dm": "discernibility (Bayardo & Agrawal 2005): Σ over released classes of size², "
        "plus the input rows for each suppressed row",
        "dm-star": "DM*: Σ over classes of size², suppressed rows counted in their classes",
        "entropy": "non-uniform entropy (Gionis & Tassa 2009)"
        + (f", each quasi-identifier's part times its weight{by}" if weighted else ""),
        "loss": "Iyengar's loss (2002): "
        + ("weighted mean" if weighted else "mean")
        + f" cell loss, suppressed cells costing 1{by}",
        "aecs": "released rows / classes / k (C_AVG, LeFevre et al. 2006)",
        "average-class-size": "ARX's AECS: input rows / classes, the suppressed rows one class",
        "non-monotonic-entropy": "ARX's non-monotonic non-uniform entropy: non-uniform "
        "entropy plus the entropy of the suppressed rows' values",
        "height": ("weighted sum" if weighted else "sum") + f" of the levels{by}",
    }


def class_size_summary(class_sizes: Mapping[int, int]) -> dict[str, float]:
    """Classes, rows and the smallest, median, mean and largest class of a release.

    Example:
        >>> class_size_summary({2: 3, 5: 1})
        {'classes': 4, 'rows': 11, 'smallest': 2, 'median': 2.0, 'mean': 2.75, 'largest': 5}
    """
    if not class_sizes:
        return {"classes": 0, "rows": 0}
    classes = sum(class_sizes.values())
    rows = sum(size * count for size, count in class_sizes.items())
    expanded = sorted(class_sizes.items())
    # The median of the class sizes from the counts, without listing every class.
    middle = [(classes - 1) // 2, classes // 2]
    picked: list[int] = []
    seen = 0
    for size, count in expanded:
        picked += [size for position in middle if seen <= position < seen + count]
        seen += count
    return {
        "classes": classes,
        "rows": rows,
        "smallest": expanded[0][0],
        "median": statistics.fmean(picked),
        "mean": rows / classes,
        "largest": expanded[-1][0],
    }
