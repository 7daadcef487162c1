"""What the HTML release report shows, computed from a release without drawing anything.

The report must not itself disclose what the release protects. Its rules:

* **Input distributions** are aggregated counts per quasi-identifier, with
  small cells merged (:func:`aggregate`): every value seen in fewer than k
  input rows goes into one bar ``other (N values)``; if that bar would hold
  fewer than k rows, the least frequent shown values join it until it holds
  k (so no bar shows fewer than k rows, and no raw value of a count below k is
  ever named). At most :data:`MAX_BARS` bars are drawn: beyond that the least
  frequent values are merged too.
* **Numbers and dates** are also drawn as histograms (:func:`histogram`):
  bins of a round width (1, 2 or 5 times a power of ten; days, months or
  years for dates) spanning the k-th smallest to the k-th largest value, the
  first and last bins open (``< a``, ``>= b``) and holding every value beyond,
  so that no edge or width depends on fewer than k rows (a single person aged
  97 moves nothing); a bin of the input holding fewer than k rows is merged
  with its smaller neighbour until none does; bin edges are round numbers,
  not values of the input.
* **Release distributions** show the released values only (they are public
  once the release is), counted over the released rows; released intervals
  (``30-39``, ``[30, 40)``, ``1980-05``, ``1980``, ``1980-1989``) are drawn
  over the span they cover.
* **The lattice** (:class:`LatticeView`) shows what the search checked; the
  nodes it skipped are checked for the report only when asked
  (``check_lattice``), never by default.
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

import datetime
import itertools
import math
import platform
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym._version import __version__
from kanonym.attacks import RiskSummary, risk
from kanonym.lattice import Node
from kanonym.report.fingerprints import Fingerprint, WrittenFile
from kanonym.report.fingerprints import fingerprints as all_fingerprints
from kanonym.search.trace import ExploredLattice, HeightSummary, SearchTrace

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

MAX_BINS = 24
"""Most bins of a histogram before merging (fewer once small bins are merged)."""

MAX_DRAWN_LATTICE = 300
"""Largest lattice drawn node by node; larger ones are drawn per height and around
the released node."""

VERSIONED_PACKAGES = ("polars", "numpy", "numba", "vl-convert-python")


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
class Bin:
    """One bin of a histogram: the rows whose value lies in ``[low, high)``.

    Attributes:
        low, high: the bin's edges (days since 1970-01-01 for dates); -inf and inf
            for the open first and last bins of an input histogram (:func:`histogram`).
        count: rows in it.
        merged: bins of the round width it is made of (more than 1 when small
            bins were merged into it; 0 for a released interval).
    """

    low: float
    high: float
    count: int
    merged: int = 1

    def __post_init__(self) -> None:
        if not self.low < self.high or self.count < 0 or self.merged < 0:
            raise ValueError("a bin needs low < high and no negative count")


@dataclass(frozen=True, kw_only=True)
class Histogram:
    """Counts of a number or date column over bins, left to right.

    Attributes:
        scale: ``number`` or ``date`` (edges in days since 1970-01-01).
        bins: the bins, in order; they do not overlap.
        not_drawn: rows in no bin: missing values (input), or released as
            ``*`` or missing (release).
    """

    scale: Literal["number", "date"]
    bins: tuple[Bin, ...]
    not_drawn: int


@dataclass(frozen=True, kw_only=True)
class QiDistribution:
    """One quasi-identifier before (input, aggregated) and after (release).

    Attributes:
        column: the quasi-identifier.
        level: the hierarchy level released, None without a full-domain level.
        before: bars of the input, small cells merged.
        after: bars of the released values.
        suppressed_cells: released cells holding ``*``.
        histogram_before: for a number or date column, the input over bins
            of at least k rows each (:func:`histogram`); None otherwise.
        histogram_after: the release over the same scale, None when its
            values are neither numbers, dates nor intervals of them.
    """

    column: str
    level: int | None
    before: tuple[Bar, ...]
    after: tuple[Bar, ...]
    suppressed_cells: int
    histogram_before: Histogram | None = None
    histogram_after: Histogram | None = None


Status = Literal["satisfies", "fails", "not checked"]


@dataclass(frozen=True, kw_only=True)
class LatticeNode:
    """One node of the lattice figure.

    Attributes:
        levels: the distance vector (one level per quasi-identifier).
        status: ``satisfies`` or ``fails`` (the models within the suppression
            limit), or ``not checked`` (decided by the search without a check).
        score: the metric's score when the node was checked with a metric.
        checked_for_report: checked after the search, for the report only.
        released, optimum, minimal: the released node; the optimum over the
            whole lattice and the minimal satisfying nodes (known only when
            every node was decided, ``check_lattice``).
        relation: ``released``, ``below`` (a direct specialization of it) or
            ``above`` (a direct generalization) in the view around the
            released node; empty in the view of the whole lattice.
    """

    levels: Node
    status: Status
    score: float | None = None
    checked_for_report: bool = False
    released: bool = False
    optimum: bool = False
    minimal: bool = False
    relation: str = ""

    @property
    def height(self) -> int:
        """The sum of the levels."""
        return sum(self.levels)


@dataclass(frozen=True, kw_only=True)
class HeightCounts:
    """Nodes of one height by status (the per-height view of a large lattice)."""

    height: int
    satisfies: int
    fails: int
    not_checked: int


@dataclass(frozen=True, kw_only=True)
class LatticeView:
    """What the lattice figure shows.

    A lattice of at most :data:`MAX_DRAWN_LATTICE` nodes is drawn whole
    (``whole``); a larger one per height (``per_height``) and around the
    released node: it, its direct specializations and generalizations.

    Attributes:
        names: the quasi-identifiers, in the vectors' order.
        size: nodes in the lattice.
        whole: whether ``nodes`` is every node of the lattice.
        nodes: the nodes drawn.
        edges: pairs of indices into ``nodes``, a node and a direct generalization.
        per_height: nodes by height and status, over the whole lattice.
        extra_checks: nodes checked for the report only (``check_lattice``).
    """

    names: tuple[str, ...]
    size: int
    whole: bool
    nodes: tuple[LatticeNode, ...]
    edges: tuple[tuple[int, int], ...]
    per_height: tuple[HeightCounts, ...]
    extra_checks: int


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
        explored: every node of the lattice decided, when asked for
            (``check_lattice``) and the lattice is small enough; else None.
        per_height: per-height summary of what the search checked.
        lattice: the lattice figure's nodes, None without a lattice search.
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
    lattice: LatticeView | None
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


def value_counts(values: pl.Series) -> dict[str | None, int]:
    """Each distinct value of ``values``, as text (None: missing), and the rows holding it.

    One group-by per column: the report's bars, histogram and suppressed cells are
    all read from it.

    Example:
        >>> sorted(value_counts(pl.Series(["a", None, "a"])).items(), key=str)
        [('a', 2), (None, 1)]
    """
    counts = values.cast(pl.String).rename("value").value_counts(name="n")
    return dict(zip(counts["value"].to_list(), counts["n"].to_list(), strict=True))


def aggregate(
    values: pl.Series | Mapping[str | None, int],
    *,
    min_count: int,
    order: Sequence[str | None] = (),
    max_bars: int = MAX_BARS,
) -> tuple[Bar, ...]:
    """Bars of ``values``' counts, values under ``min_count`` merged (module docstring).

    ``values`` is a column, or its :func:`value_counts`. Bars follow ``order``
    (e.g. the hierarchy's), values it lacks after it in text order, the merged
    bar last. With ``min_count`` = k no bar shows fewer than k rows and no
    value counted fewer than k times is named.
    """
    if min_count < 1 or max_bars < 1:
        raise ValueError("min_count and max_bars must be >= 1")
    counted = values if isinstance(values, Mapping) else value_counts(values)
    rank = {value: i for i, value in enumerate(order)}
    # One entry per distinct value (not per row): (count, position, value).
    items = [
        (int(n), rank.get(v, len(rank)), "" if v is None else v, v) for v, n in counted.items()
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


_NICE = (1, 2, 5, 10)
# Calendar widths of date bins, finest first: (numpy unit, multiple).
_DATE_WIDTHS = (
    ("D", 1),
    ("D", 7),
    ("M", 1),
    ("M", 3),
    ("M", 6),
    ("Y", 1),
    ("Y", 2),
    ("Y", 5),
    ("Y", 10),
    ("Y", 20),
    ("Y", 50),
    ("Y", 100),
    ("Y", 1000),
)


def _number_edges(low: float, high: float, max_bins: int) -> npt.NDArray[np.float64]:
    """Round edges, 1, 2 or 5 times a power of ten apart, covering [low, high]."""
    raw = (high - low) / max_bins if high > low else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    width = next(m * power for m in _NICE if m * power >= raw)
    start = math.floor(low / width) * width
    n = math.floor((high - start) / width) + 1
    # Rounded so that 0.1 steps print as 0.3, not 0.30000000000000004.
    return np.round(start + width * np.arange(n + 1), 10)


def _date_edges(low: int, high: int, max_bins: int) -> npt.NDArray[np.float64]:
    """Edges at calendar boundaries (days, weeks, months, years) covering [low, high] days."""
    span = np.array([low, high], dtype="datetime64[D]")
    for unit, width in _DATE_WIDTHS:
        first, last = (int(x) for x in span.astype(f"datetime64[{unit}]").astype(np.int64))
        start, stop = first // width * width, last // width * width + width
        if (stop - start) // width <= max_bins:
            break
    edges = np.arange(start, stop + 1, width).astype(f"datetime64[{unit}]")
    return edges.astype("datetime64[D]").astype(np.float64)


def histogram(
    values: Sequence[float] | npt.NDArray[np.float64],
    *,
    min_count: int,
    scale: Literal["number", "date"] = "number",
    max_bins: int = MAX_BINS,
) -> tuple[Bin, ...]:
    """``values`` counted over bins of a round width, each bin holding at least ``min_count``.

    Bins are ``[low, high)``, at most about ``max_bins`` of them, their width
    1, 2 or 5 times a power of ten (numbers) or a number of days, months or
    years (dates, given as days since 1970-01-01), edges multiples of it. The
    edges cover the values from the ``min_count``-th smallest to the
    ``min_count``-th largest, not the extremes, and with ``min_count`` above 1
    the first and last bins are open (``low`` -inf, ``high`` inf) and count
    every value beyond them: an edge or a width set by fewer than k rows would
    disclose them (one person aged 97 making the last edge 100 says someone is
    in [95, 100)). Then, while a bin holds fewer than ``min_count`` rows, the
    smallest such bin (leftmost on ties) is merged with its smaller neighbour
    (the left one on ties): with ``min_count`` = k no bin shows fewer than k
    rows, and moving the most extreme value further out changes no bin.
    Nothing is returned when all the values together are fewer than ``min_count``,
    and one bin of every value, open at both ends, when they are fewer than
    twice ``min_count`` (two bins of k rows each cannot be made).

    Example (k = 3: the edges span 24 to 55, the third smallest and largest ages; 70
    is counted in the open last bin, never placed):
        >>> ages = [21, 23, 24, 25, 33, 35, 38, 41, 42, 44, 47, 52, 55, 58, 70]
        >>> [(b.low, b.high, b.count) for b in histogram(ages, min_count=3, max_bins=6)]
        [(-inf, 30.0, 4), (30.0, 40.0, 3), (40.0, 50.0, 4), (50.0, inf, 4)]
    """
    if min_count < 1 or max_bins < 1:
        raise ValueError("min_count and max_bins must be >= 1")
    data = np.asarray(values, dtype=np.float64)
    n = len(data)
    if n < min_count or n == 0:
        return ()
    if min_count > 1 and n < 2 * min_count:
        # Two bins of k rows cannot be made: one open bin of every value, no edge at all.
        return (Bin(low=-math.inf, high=math.inf, count=n),)
    # The k-th smallest and k-th largest (in order, as n >= 2k - 1): moving fewer than k
    # of the most extreme values further out changes neither.
    ends = np.partition(data, (min_count - 1, n - min_count))
    low, high = float(ends[min_count - 1]), float(ends[n - min_count])
    edges = (
        _date_edges(int(low), int(high), max_bins)
        if scale == "date"
        else _number_edges(low, high, max_bins)
    )
    # Values beyond the edges fall in the outer bins (clipped), which are open unless k = 1.
    where = np.clip(np.searchsorted(edges, data, side="right") - 1, 0, len(edges) - 2)
    counts = np.bincount(where, minlength=len(edges) - 1)
    bounds = edges.astype(np.float64)
    if min_count > 1:
        bounds[0], bounds[-1] = -np.inf, np.inf
    # [low, high, count, bins merged]
    bins = [[float(bounds[i]), float(bounds[i + 1]), int(c), 1] for i, c in enumerate(counts)]
    while len(bins) > 1:
        small = [i for i, b in enumerate(bins) if b[2] < min_count]
        if not small:
            break
        i = min(small, key=lambda j: (bins[j][2], j))
        first = i if i == 0 or (i < len(bins) - 1 and bins[i + 1][2] < bins[i - 1][2]) else i - 1
        left, right = bins[first], bins[first + 1]
        bins[first : first + 2] = [[left[0], right[1], left[2] + right[2], left[3] + right[3]]]
    return tuple(Bin(low=b[0], high=b[1], count=int(b[2]), merged=int(b[3])) for b in bins)


def _scale_of(
    counts: Mapping[str | None, int] | Mapping[str, int],
) -> tuple[Literal["number", "date"], npt.NDArray[np.float64]] | None:
    """Whether every present value of ``counts`` (:func:`value_counts`) is a number, or a
    date; with the values, one per row (dates as days). Each distinct value is parsed
    once, not once per row."""
    present = {value: n for value, n in counts.items() if value is not None}
    if not present:
        return None
    distinct = pl.Series(list(present), dtype=pl.String)
    rows = list(present.values())
    numbers = distinct.str.strip_chars().cast(pl.Float64, strict=False)
    if numbers.null_count() == 0 and bool(numbers.is_finite().all()):
        return "number", np.repeat(numbers.to_numpy(), rows)
    try:
        dates = distinct.str.to_date(strict=False)
    except pl.exceptions.PolarsError:  # no date format fits the first value
        return None
    if dates.null_count() == 0:
        return "date", np.repeat(dates.cast(pl.Int32).to_numpy().astype(np.float64), rows)
    return None


_INCLUSIVE = re.compile(r"(-?\d+)-(-?\d+)")
_HALF_OPEN = re.compile(r"\[([^,\[\]]+), ([^,\[\]]+)\)")
_MONTH = re.compile(r"(\d{4})-(\d{2})")
_YEARS = re.compile(r"(\d{4})-(\d{4})")
_YEAR = re.compile(r"\d{4}")
_EPOCH = datetime.date(1970, 1, 1)


def _days(year: int, month: int = 1) -> float:
    return float((datetime.date(year, month, 1) - _EPOCH).days)


def _span(label: str, scale: Literal["number", "date"]) -> tuple[float, float] | None:
    """The ``[low, high)`` a released interval label covers, None if it is not one.

    The labels of kanonym's interval and date hierarchies (``30-39``,
    ``[30, 40)``; ``1980-05``, ``1980``, ``1980-1989``).
    """
    if scale == "number":
        if found := _INCLUSIVE.fullmatch(label):
            return float(found[1]), float(found[2]) + 1
        if found := _HALF_OPEN.fullmatch(label):
            try:
                return float(found[1]), float(found[2])
            except ValueError:
                return None
        return None
    if (found := _MONTH.fullmatch(label)) and 1 <= int(found[2]) <= 12:
        year, month = int(found[1]), int(found[2])
        return _days(year, month), _days(year + month // 12, month % 12 + 1)
    if found := _YEARS.fullmatch(label):
        return _days(int(found[1])), _days(int(found[2]) + 1)
    if _YEAR.fullmatch(label):
        return _days(int(label)), _days(int(label) + 1)
    return None


def _released_histogram(
    released: Mapping[str | None, int], scale: Literal["number", "date"]
) -> Histogram | None:
    """The released values (their :func:`value_counts`) over the input's scale: intervals
    as they are, values binned."""
    drawn = {v: n for v, n in released.items() if v is not None and v != SUPPRESSED}
    not_drawn = sum(released.values()) - sum(drawn.values())
    if not drawn:
        return Histogram(scale=scale, bins=(), not_drawn=not_drawn)
    spans = {label: _span(label, scale) for label in drawn}
    if all(span is not None for span in spans.values()):
        ordered = sorted((span, drawn[label]) for label, span in spans.items() if span)
        if any(a[0][1] > b[0][0] for a, b in itertools.pairwise(ordered)):
            return None  # overlapping intervals: not one histogram
        bins = tuple(Bin(low=s[0], high=s[1], count=n, merged=0) for s, n in ordered)
        return Histogram(scale=scale, bins=bins, not_drawn=not_drawn)
    found = _scale_of(drawn)
    if found is None or found[0] != scale:
        return None
    return Histogram(
        scale=scale, bins=histogram(found[1], min_count=1, scale=scale), not_drawn=not_drawn
    )


def _distributions(result: Result) -> tuple[QiDistribution, ...]:
    levels = result.transformation or {}
    source = None if result.input_table is None else result.input_table.frame
    k = result.config.k
    found = []
    for name in result.config.hierarchies:
        hierarchy = result.hierarchies.get(name)
        level = levels.get(name)
        # Each column is counted once, input and release; every bar and bin reads the counts.
        released = value_counts(result.table.get_column(name))
        before = None if source is None else value_counts(source.get_column(name))
        after_order = (
            hierarchy.level_values(level) if hierarchy is not None and level is not None else ()
        )
        # A masked code (a ZIP) is digits, not a quantity: its values stay bars.
        scaled = (
            None
            if before is None or (hierarchy is not None and hierarchy.name == "mask")
            else _scale_of(before)
        )
        before_histogram = after_histogram = None
        if scaled is not None and before is not None:
            scale, values = scaled
            before_histogram = Histogram(
                scale=scale,
                bins=histogram(values, min_count=k, scale=scale),
                not_drawn=before.get(None, 0),
            )
            after_histogram = _released_histogram(released, scale)
        found.append(
            QiDistribution(
                column=name,
                level=level,
                before=()
                if before is None
                else aggregate(
                    before, min_count=k, order=() if hierarchy is None else hierarchy.leaves
                ),
                after=aggregate(released, min_count=1, order=after_order),
                suppressed_cells=released.get(SUPPRESSED, 0),
                histogram_before=before_histogram,
                histogram_after=after_histogram,
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
        ['kanonym', 'numba', 'numpy']
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


def _node_scores(trace: SearchTrace) -> dict[Node, float]:
    """The metric's score of every node checked (by the search, or for the report)."""
    found: dict[Node, float] = {}
    if trace.scores is not None:
        for row, score in zip(trace.checked.tolist(), trace.scores.tolist(), strict=True):
            if not math.isnan(score):
                found[tuple(row)] = score
    if trace.evaluator is not None:
        for evaluation in trace.evaluator.evaluated():
            if evaluation.score is not None:
                found[evaluation.node] = evaluation.score
    return found


def lattice_view(trace: SearchTrace, explored: ExploredLattice | None = None) -> LatticeView:
    """The lattice figure's content: every node of a small lattice, else per height and
    around the released node (:class:`LatticeView`).

    A node the search did not check is ``not checked`` unless ``explored``
    (:meth:`~kanonym.search.trace.SearchTrace.explore`) decided it.

    Example (the 2 x 3 lattice of race and ZIP, Samarati 2001):
        >>> import numpy as np
        >>> from kanonym.lattice import Lattice
        >>> trace = SearchTrace(lattice=Lattice((1, 2)), names=("race", "zip"),
        ...     checked=np.array([[0, 1], [0, 2]], dtype=np.int16),
        ...     satisfied=np.array([False, True]), solutions=((0, 2),), policy=None,
        ...     evaluator=None)
        >>> view = lattice_view(trace)
        >>> view.whole, [(n.levels, n.status) for n in view.nodes][:3]
        (True, [((0, 0), 'not checked'), ((0, 1), 'fails'), ((0, 2), 'satisfies')])
        >>> [(h.height, h.satisfies, h.fails, h.not_checked) for h in view.per_height]
        [(0, 0, 0, 1), (1, 0, 1, 1), (2, 1, 0, 1), (3, 0, 0, 1)]
    """
    lattice = trace.lattice
    scores = _node_scores(trace)
    outcome = {
        tuple(row): bool(ok)
        for row, ok in zip(trace.checked.tolist(), trace.satisfied.tolist(), strict=True)
    }
    optimum = None if explored is None else explored.optimum

    def node(levels: Node, relation: str = "") -> LatticeNode:
        status: Status
        by_report = False
        if levels in outcome:
            status = "satisfies" if outcome[levels] else "fails"
        elif explored is not None:
            status = "satisfies" if explored.satisfied[lattice.index(levels)] else "fails"
            by_report = True
        else:
            status = "not checked"
        return LatticeNode(
            levels=levels,
            status=status,
            score=scores.get(levels),
            checked_for_report=by_report,
            released=levels == trace.chosen,
            optimum=levels == optimum,
            minimal=explored is not None and bool(explored.minimal[lattice.index(levels)]),
            relation=relation,
        )

    if explored is not None:
        heights = lattice.node_heights.astype(np.int64) - lattice.min_height
        size = lattice.max_height - lattice.min_height + 1
        ok = np.bincount(heights[explored.satisfied], minlength=size)
        all_nodes = np.bincount(heights, minlength=size)
        per_height = tuple(
            HeightCounts(
                height=lattice.min_height + h,
                satisfies=int(ok[h]),
                fails=int(all_nodes[h] - ok[h]),
                not_checked=0,
            )
            for h in range(size)
        )
    else:
        per_height = tuple(
            HeightCounts(
                height=row.height,
                satisfies=row.satisfied,
                fails=row.checked - row.satisfied,
                not_checked=row.nodes - row.checked,
            )
            for row in trace.per_height()
        )
    if lattice.size <= MAX_DRAWN_LATTICE:
        nodes = tuple(node(lattice.node(i)) for i in range(lattice.size))
        edges = tuple(
            (i, i + stride)
            for axis, stride in enumerate(lattice.strides)
            for i in np.flatnonzero(lattice.levels[:, axis] < lattice.heights[axis]).tolist()
        )
    else:
        chosen = trace.chosen
        below, above = lattice.predecessors(chosen), lattice.successors(chosen)
        nodes = (
            *(node(n, "below") for n in below),
            node(chosen, "released"),
            *(node(n, "above") for n in above),
        )
        released = len(below)
        edges = (
            *((i, released) for i in range(len(below))),
            *((released, released + 1 + i) for i in range(len(above))),
        )
    return LatticeView(
        names=trace.names,
        size=lattice.size,
        whole=lattice.size <= MAX_DRAWN_LATTICE,
        nodes=nodes,
        edges=edges,
        per_height=per_height,
        extra_checks=0 if explored is None else explored.extra_checks,
    )


def gather(
    result: Result,
    *,
    written: Sequence[WrittenFile] = (),
    on_step: Callable[[str], None] | None = None,
    check_lattice: bool = False,
) -> ReportContent:
    """Compute what the report shows for ``result``.

    ``written`` holds the files written with it, release first then the JSON
    report, as ``(path, bytes)``, to fingerprint them. ``on_step`` is told, in
    a few words, each step that may take a while (for a progress line).

    The lattice figure shows what the search checked. With ``check_lattice``
    (and a lattice of at most :data:`~kanonym.search.trace.MAX_DRAWN_NODES`),
    the nodes it did not check are checked too, after the search and with its
    models and limit, so that every node's outcome, the minimal nodes and the
    optimum over the whole lattice can be shown: on a large table that is
    most of the report's time, hence off by default.
    """
    step = on_step or (lambda _: None)
    qis = list(result.config.hierarchies)
    step("risk before and after")
    before = _risk(None if result.input_table is None else result.input_table.frame, qis)
    after = _risk(result.table, qis)
    trace = result.search
    explored = None
    if check_lattice and trace is not None and trace.evaluator is not None:
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
        per_height=() if trace is None else tuple(trace.per_height()),
        lattice=None if trace is None else lattice_view(trace, explored),
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
