"""The HTML report's figures, drawn with matplotlib from :mod:`kanonym.report.content`.

matplotlib is an optional extra (``pip install kanonym[report]``): only this
module imports it, and nothing in kanonym's core imports this module. Figures
are :class:`matplotlib.figure.Figure` objects made without pyplot, so drawing
a report neither needs a display nor changes a notebook's backend or global
settings; :func:`svg` renders one as inline SVG whose text stays text (so the
page is searchable, and the non-disclosure tests can read every label).

Example:
    >>> from kanonym.report.content import Bar, QiDistribution
    >>> d = QiDistribution(column="zip", level=1, before=(Bar(label="94139", count=3),),
    ...                    after=(Bar(label="9413*", count=3),), suppressed_cells=0)
    >>> figure = distribution_figure(d, k=2)
    >>> [axes.get_title() for axes in figure.axes]
    ['input (values in fewer than 2 rows merged)', 'release (level 1)']
    >>> "9413*" in svg(figure, salt="doc")
    True
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from kanonym.lattice import Lattice
from kanonym.report.content import Bar, QiDistribution, RiskBand
from kanonym.search.trace import ExploredLattice, HeightSummary

INPUT_COLOUR = "#8a8a8a"
RELEASE_COLOUR = "#2f6ea8"
SATISFIED_COLOUR = "#2e8b57"
FAILED_COLOUR = "#c0392b"
# Edges are drawn only where they stay readable.
MAX_EDGE_NODES = 300
NODES_PER_ROW = 60
MAX_LABELLED_NODES = 40
BAND_GAP = 1
_LABEL_BOX = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "#888888"}


def _bars(axes: Axes, bars: Sequence[Bar], colour: str, title: str, slots: int) -> None:
    """Horizontal bars, first on top; ``slots`` rows tall, so bars beside it match."""
    labels = [bar.label for bar in bars]
    counts = [bar.count for bar in bars]
    positions = np.arange(len(bars))
    patches = axes.barh(positions, counts, color=colour)
    for patch, bar in zip(patches, bars, strict=True):
        if bar.merged:
            patch.set_hatch("//")
            patch.set_edgecolor("white")
    axes.set_yticks(positions, labels=labels, fontsize=8)
    axes.set_ylim(slots - 0.5, -0.5)  # first value on top, as it reads
    axes.set_title(title, fontsize=9)
    axes.set_xlabel("rows", fontsize=8)
    axes.tick_params(axis="x", labelsize=8)
    axes.bar_label(patches, labels=[f"{c:,}" for c in counts], fontsize=7, padding=2)
    axes.margins(x=0.15)


def distribution_figure(distribution: QiDistribution, *, k: int) -> Figure:
    """One quasi-identifier: input counts (small cells merged) beside release counts."""
    rows = max(len(distribution.before), len(distribution.after), 1)
    figure = Figure(figsize=(10, 1.0 + 0.22 * rows), layout="tight")
    left, right = figure.subplots(1, 2)
    figure.suptitle(distribution.column, fontsize=10, fontweight="bold")
    if distribution.before:
        _bars(
            left,
            distribution.before,
            INPUT_COLOUR,
            f"input (values in fewer than {k} rows merged)",
            rows,
        )
    else:
        left.set_title("input not available", fontsize=9)
        left.set_axis_off()
    level = "" if distribution.level is None else f" (level {distribution.level})"
    if distribution.after:
        _bars(right, distribution.after, RELEASE_COLOUR, f"release{level}", rows)
    else:
        right.set_title("release: no rows", fontsize=9)
        right.set_axis_off()
    return figure


def class_size_figure(class_sizes: Mapping[int, int], *, k: int) -> Figure:
    """Number of released classes of each size, with k marked."""
    figure = Figure(figsize=(10, 3.2), layout="tight")
    axes = figure.subplots()
    if not class_sizes:
        axes.set_title("no rows released", fontsize=9)
        axes.set_axis_off()
        return figure
    sizes = np.array(sorted(class_sizes), dtype=np.int64)
    counts = np.array([class_sizes[int(s)] for s in sizes], dtype=np.int64)
    if len(sizes) <= 60:
        axes.bar(sizes, counts, width=0.8, color=RELEASE_COLOUR)
    else:
        # Many distinct sizes: classes counted in logarithmic size bins.
        edges = np.unique(np.geomspace(sizes[0], sizes[-1] + 1, num=40).astype(np.int64))
        axes.hist(sizes, bins=edges.tolist(), weights=counts, color=RELEASE_COLOUR)
        axes.set_xscale("log")
    axes.axvline(k, color="black", linestyle="--", linewidth=1, label=f"k = {k}")
    axes.set_xlabel("class size (rows sharing one quasi-identifier combination)", fontsize=8)
    axes.set_ylabel("classes", fontsize=8)
    axes.tick_params(labelsize=8)
    axes.legend(fontsize=8)
    axes.set_title("equivalence classes of the release by size", fontsize=9)
    return figure


def risk_figure(bands: Sequence[RiskBand]) -> Figure:
    """Share of records per class-size band (their prosecutor risk), input and release."""
    figure = Figure(figsize=(10, 3.0), layout="tight")
    axes = figure.subplots()
    positions = np.arange(len(bands))
    before = [band.before for band in bands]
    after = [0.0 if band.after is None else band.after for band in bands]
    first = axes.barh(positions - 0.2, before, height=0.4, color=INPUT_COLOUR, label="input")
    second = axes.barh(positions + 0.2, after, height=0.4, color=RELEASE_COLOUR, label="release")
    for patches, shares in ((first, before), (second, after)):
        axes.bar_label(patches, labels=[f"{s:.1%}" for s in shares], fontsize=7, padding=2)
    axes.set_yticks(positions, labels=[band.label for band in bands], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 1.12)
    axes.set_xlabel("share of records", fontsize=8)
    axes.set_ylabel("class size", fontsize=8)
    axes.tick_params(axis="x", labelsize=8)
    axes.legend(fontsize=8, loc="lower right")
    axes.set_title("records by the size of their class (prosecutor risk 1/size)", fontsize=9)
    return figure


@dataclass(frozen=True, kw_only=True)
class _Layout:
    """Where each node of a lattice figure goes.

    Nodes of one height form a band, lexicographic order left to right,
    wrapped into rows of at most :data:`NODES_PER_ROW` (so wide levels stay
    legible), bands stacked by height with a gap between them.
    """

    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.float64]
    ticks: npt.NDArray[np.float64]
    rows: int


def _layout(lattice: Lattice) -> _Layout:
    heights = lattice.node_heights.astype(np.int64) - lattice.min_height
    order = np.lexsort((np.arange(len(heights)), heights))
    first_of = np.searchsorted(heights[order], heights[order], side="left")
    rank = np.empty(len(heights), dtype=np.int64)
    rank[order] = np.arange(len(heights)) - first_of
    width = np.bincount(heights)
    rows = -(-width // NODES_PER_ROW)  # rows per band, rounded up
    start = np.concatenate([[0], np.cumsum(rows + BAND_GAP)[:-1]]).astype(np.float64)
    row, column = np.divmod(rank, NODES_PER_ROW)
    in_row = np.minimum(width[heights] - row * NODES_PER_ROW, NODES_PER_ROW)
    return _Layout(
        x=column - (in_row - 1) / 2.0,
        y=start[heights] + row,
        ticks=start + (rows - 1) / 2.0,
        rows=int(rows.sum() + BAND_GAP * (len(rows) - 1)),
    )


def _legend_entry(label: str, marker: str = "o", **style: Any) -> Line2D:
    """A marker without a line, for a legend of scatter points."""
    return Line2D([], [], marker=marker, linestyle="", label=label, **style)


def lattice_figure(explored: ExploredLattice, names: Sequence[str]) -> Figure:
    """Every node by height: checked or not, satisfying or not; minimal, optimum, released."""
    lattice = explored.lattice
    layout = _layout(lattice)
    x, y = layout.x, layout.y
    widest = min(int(np.bincount(lattice.node_heights).max()), NODES_PER_ROW)
    figure = Figure(figsize=(10, 1.6 + 0.2 * layout.rows), layout="tight")
    axes = figure.subplots()
    # Marker area in points²: about a third of the room a node has in its row.
    size = float(np.clip((160.0 / widest) ** 2 * 3, 12, 90))
    if lattice.size <= MAX_EDGE_NODES:
        starts, ends = [], []
        for axis, stride in enumerate(lattice.strides):
            below = np.flatnonzero(lattice.levels[:, axis] < lattice.heights[axis])
            starts.append(below)
            ends.append(below + stride)
        source, target = np.concatenate(starts), np.concatenate(ends)
        segments = np.stack(
            [np.column_stack([x[source], y[source]]), np.column_stack([x[target], y[target]])],
            axis=1,
        )
        axes.add_collection(
            LineCollection(list(segments), colors="#d0d0d0", linewidths=0.6, zorder=1)
        )
    satisfied, checked = explored.satisfied, explored.checked
    for mask, colour, filled in (
        (checked & satisfied, SATISFIED_COLOUR, True),
        (checked & ~satisfied, FAILED_COLOUR, True),
        (~checked & satisfied, SATISFIED_COLOUR, False),
        (~checked & ~satisfied, FAILED_COLOUR, False),
    ):
        axes.scatter(
            x[mask],
            y[mask],
            s=size,
            c=colour if filled else "white",
            edgecolors=colour,
            linewidths=0.8,
            zorder=2,
        )
    minimal = explored.minimal
    axes.scatter(
        x[minimal], y[minimal], s=size * 2.6, facecolors="none", edgecolors="black", zorder=3
    )
    for node, marker, colour, scale in (
        (explored.optimum, "*", "#e6a700", 4.5),
        (explored.chosen, "s", "none", 5.0),
    ):
        i = lattice.index(node)
        axes.scatter(
            [x[i]],
            [y[i]],
            s=size * scale,
            marker=marker,
            facecolors=colour,
            edgecolors="black",
            linewidths=1.2,
            zorder=4,
        )
    chosen, optimum = lattice.index(explored.chosen), lattice.index(explored.optimum)
    axes.annotate(
        f"released {list(explored.chosen)}",
        (x[chosen], y[chosen]),
        xytext=(8, 6),
        textcoords="offset points",
        fontsize=8,
        bbox=_LABEL_BOX,
        zorder=5,
    )
    if optimum != chosen:
        axes.annotate(
            f"optimum {list(explored.optimum)}",
            (x[optimum], y[optimum]),
            xytext=(8, -14),
            textcoords="offset points",
            fontsize=8,
            bbox=_LABEL_BOX,
            zorder=5,
        )
    legend = [
        _legend_entry("checked, satisfies", color=SATISFIED_COLOUR),
        _legend_entry("checked, fails", color=FAILED_COLOUR),
        _legend_entry(
            "not needed by the search, satisfies",
            markerfacecolor="white",
            markeredgecolor=SATISFIED_COLOUR,
        ),
        _legend_entry(
            "not needed by the search, fails",
            markerfacecolor="white",
            markeredgecolor=FAILED_COLOUR,
        ),
        _legend_entry(
            "minimal satisfying", markersize=10, markerfacecolor="none", markeredgecolor="black"
        ),
        _legend_entry(
            "optimum",
            marker="*",
            markersize=11,
            markerfacecolor="#e6a700",
            markeredgecolor="black",
        ),
        _legend_entry(
            "released", marker="s", markersize=10, markerfacecolor="none", markeredgecolor="black"
        ),
    ]
    axes.legend(handles=legend, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    axes.set_ylabel("height (sum of levels)", fontsize=8)
    axes.set_yticks(
        layout.ticks, labels=[str(h) for h in range(lattice.min_height, lattice.max_height + 1)]
    )
    axes.tick_params(labelsize=8)
    if lattice.size <= MAX_LABELLED_NODES:
        for i in range(lattice.size):
            axes.annotate(
                _vector(lattice.node(i)),
                (x[i], y[i]),
                xytext=(0, -11),
                textcoords="offset points",
                ha="center",
                fontsize=7,
                color="#555555",
            )
    axes.set_xticks([])
    # Narrow lattices stay in the middle instead of stretching across the page.
    half = max(widest, 4) / 2 + 0.5
    axes.set_xlim(-half, half)
    axes.margins(y=0.08)
    axes.set_title(
        f"generalization lattice: {lattice.size:,} nodes, vectors over ({', '.join(names)})",
        fontsize=9,
    )
    return figure


def height_figure(per_height: Sequence[HeightSummary]) -> Figure:
    """For a lattice too large to draw: nodes, checked and satisfying nodes per height."""
    figure = Figure(figsize=(10, 3.2), layout="tight")
    axes = figure.subplots()
    heights = np.array([row.height for row in per_height])
    for values, colour, label in (
        ([row.nodes for row in per_height], "#d9d9d9", "nodes"),
        ([row.checked for row in per_height], FAILED_COLOUR, "checked"),
        ([row.satisfied for row in per_height], SATISFIED_COLOUR, "checked, satisfying"),
    ):
        axes.bar(heights, values, width=0.8, color=colour, label=label)
    axes.set_yscale("symlog", linthresh=1)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("height (sum of levels)", fontsize=8)
    axes.set_ylabel("nodes", fontsize=8)
    axes.tick_params(labelsize=8)
    axes.legend(fontsize=8)
    axes.set_title("generalization lattice by height", fontsize=9)
    return figure


def _vector(levels: Sequence[int]) -> str:
    return "[" + ",".join(str(level) for level in levels) + "]"


_PROLOGUE = re.compile(r"^.*?(?=<svg)", flags=re.DOTALL)


def svg(figure: Figure, *, salt: str) -> str:
    """``figure`` as an inline ``<svg>`` element: text kept as text, ids unique per ``salt``.

    No XML prologue, no creation date (the same release draws the same
    bytes); ``salt`` makes the ids of two figures on one page differ.
    """
    buffer = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"kanonym-{salt}"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return _PROLOGUE.sub("", buffer.getvalue(), count=1)
