"""The report's figures as Vega-Lite specifications, built from :mod:`kanonym.report.content`.

Each function turns what :mod:`kanonym.report.content` decided to show into a
Vega-Lite specification, a plain ``dict`` (Satyanarayan, Moritz,
Wongsuphasawat and Heer 2017, "Vega-Lite: A Grammar of Interactive
Graphics"): the HTML report renders it to static SVG
(:func:`kanonym.figures.render.to_svg`), a notebook or the web workbench
draws it live. Nothing here decides what may be shown: a figure draws the
bars, bins and nodes it is given, so the non-disclosure rules stay in
:mod:`kanonym.report.content`. Specs are written as dicts rather than with
Altair: the report must be drawn in under a second, and importing Altair and
validating the report's twelve specs with it cost about 1.5 s
(``benchmarks/README.md``).

Example:
    >>> from kanonym.report.content import Bar, QiDistribution
    >>> d = QiDistribution(column="zip", level=1, before=(Bar(label="94139", count=3),),
    ...                    after=(Bar(label="9413*", count=3),), suppressed_cells=0)
    >>> spec = distribution_figure(d, k=2)
    >>> [panel["title"] for panel in spec["hconcat"]]
    ['input (values in fewer than 2 rows merged)', 'release (level 1)']
    >>> spec["hconcat"][1]["data"]["values"]
    [{'value': '9413*', 'rows': 3, 'merged': 0}]
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kanonym.figures import Spec
from kanonym.report.content import (
    Bar,
    Histogram,
    LatticeNode,
    LatticeView,
    QiDistribution,
    RiskBand,
)

INPUT_COLOUR = "#8a8a8a"
RELEASE_COLOUR = "#2f6ea8"
MERGED_COLOUR = "#c9c9c9"
STATUS_COLOURS = {"satisfies": "#2e8b57", "fails": "#c0392b", "not checked": "#b8b8b8"}
WIDTH = 420
"""Width in pixels of one panel of a two-panel figure (the page is about 1,000 wide)."""
MAX_LABELLED_NODES = 40
"""Nodes of a lattice figure labelled with their vector (more would overlap)."""
_EPOCH = datetime.date(1970, 1, 1)
_TITLE = {"anchor": "start", "fontSize": 12}
MAX_LABEL = 40
"""Characters of a value shown on an axis; longer ones end in an ellipsis (tooltips show all)."""
CONFIG: Spec = {"axis": {"labelLimit": 0}, "legend": {"labelLimit": 0}}
"""Every figure's config: labels are not measured to be cut at a width (vl-convert
measures each one, about a third of a figure's rendering time: ``benchmarks/README.md``);
values are cut at :data:`MAX_LABEL` characters instead."""


def _configured(spec: Spec) -> Spec:
    return {**spec, "config": CONFIG}


def _tooltip(*fields: tuple[str, str, str]) -> list[dict[str, str]]:
    """Tooltip channels from (field, type, title) triples."""
    return [{"field": f, "type": t, "title": title} for f, t, title in fields]


def _bars(bars: Sequence[Bar], colour: str, title: str) -> Spec:
    """Horizontal bars in the given order, merged bars lighter, counts at their ends.

    No count axis: the counts are written on the bars, and an axis costs about a
    quarter of the figure's rendering time (``benchmarks/README.md``).
    """
    rows = [{"value": bar.label, "rows": bar.count, "merged": bar.merged} for bar in bars]
    cut = (
        f"length(datum.label) > {MAX_LABEL} ? "
        f"slice(datum.label, 0, {MAX_LABEL - 1}) + '…' : datum.label"
    )
    y = {
        "field": "value",
        "type": "nominal",
        "sort": None,
        "title": None,
        "axis": {"labelExpr": cut},
    }
    x = {"field": "rows", "type": "quantitative", "axis": None}
    return {
        "title": title,
        "width": WIDTH,
        "data": {"values": rows},
        "encoding": {"y": y, "x": x},
        "layer": [
            {
                "mark": {"type": "bar"},
                "encoding": {
                    "color": {
                        "condition": {"test": "datum.merged > 0", "value": MERGED_COLOUR},
                        "value": colour,
                    },
                    "tooltip": _tooltip(
                        ("value", "nominal", "value"),
                        ("rows", "quantitative", "rows"),
                        ("merged", "quantitative", "values merged"),
                    ),
                },
            },
            {
                "mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 9},
                "encoding": {"text": {"field": "rows", "type": "quantitative", "format": ","}},
            },
        ],
    }


def _edge(value: float, scale: str) -> float | str:
    if scale == "date":
        return (_EPOCH + datetime.timedelta(days=int(value))).isoformat()
    return value


def _interval(low: float, high: float, scale: str) -> str:
    """``[a, b)``, or ``< b`` and ``>= a`` for an open bin (:func:`histogram`'s outer bins).

    Example:
        >>> _interval(-math.inf, 30.0, "number"), _interval(0.0, 365.0, "date")
        ('< 30', '[1970-01-01, 1971-01-01)')
    """

    def shown(value: float) -> str:
        return f"{value:g}" if scale == "number" else str(_edge(value, scale))

    if math.isinf(low) and math.isinf(high):
        return "all values"
    if math.isinf(low):
        return f"< {shown(high)}"
    if math.isinf(high):
        return f">= {shown(low)}"
    return f"[{shown(low)}, {shown(high)})"


def _edges(histogram: Histogram) -> list[float]:
    """The finite edges of ``histogram``'s bins, ascending (none when one bin holds all)."""
    ends = {edge for b in histogram.bins for edge in (b.low, b.high) if math.isfinite(edge)}
    return sorted(ends)


def _histogram(histogram: Histogram, colour: str, title: str, what: str) -> Spec:
    """Bins as bars spanning their interval; merged bins lighter.

    An open bin (``< a``, ``>= b``) is drawn out to the axis end, one widest
    bin beyond the outermost edge, and labelled as open: its rows are counted,
    never placed, so the figure moves with no extreme value. Ticks stand at
    the bins' edges only, never at the axis ends.
    """
    scale = histogram.scale
    edges = _edges(histogram)
    widths = np.diff(edges)
    # Set by the edges, which depend on no fewer than k rows (a year, or a tenth, if one edge).
    pad = (
        float(widths.max())
        if len(widths)
        else (365.0 if scale == "date" else max(abs(edges[0]), 1.0) / 10)
    )
    ends = (edges[0] - pad, edges[-1] + pad)
    rows = [
        {
            "low": _edge(b.low if math.isfinite(b.low) else ends[0], scale),
            "high": _edge(b.high if math.isfinite(b.high) else ends[1], scale),
            "interval": _interval(b.low, b.high, scale),
            "open": not (math.isfinite(b.low) and math.isfinite(b.high)),
            "rows": b.count,
            "merged": b.merged,
        }
        for b in histogram.bins
    ]
    ticks: list[Any] = (
        [_date_time(edge) for edge in edges] if scale == "date" else [float(e) for e in edges]
    )
    x: dict[str, Any] = {
        "field": "low",
        "type": "temporal" if scale == "date" else "quantitative",
        "title": what,
        "scale": {"type": "utc", "nice": False}
        if scale == "date"
        else {"zero": False, "nice": False},
        "axis": {"values": ticks},
    }
    return {
        "title": title,
        "width": WIDTH,
        "height": 200,
        "data": {"values": rows},
        "encoding": {"x": x},
        "layer": [
            {
                # rect, not bar: a bar given x and x2 would be drawn horizontally.
                "mark": {"type": "rect", "stroke": "white", "strokeWidth": 0.5},
                "encoding": {
                    "x2": {"field": "high"},
                    "y": {"field": "rows", "type": "quantitative", "title": "rows"},
                    "y2": {"datum": 0},
                    "color": {
                        "condition": {"test": "datum.merged > 1", "value": MERGED_COLOUR},
                        "value": colour,
                    },
                    "tooltip": _tooltip(
                        ("interval", "nominal", "interval"),
                        ("rows", "quantitative", "rows"),
                        ("merged", "quantitative", "round bins merged"),
                    ),
                },
            },
            {
                # The open bins say so: "< 30" at the axis start, ">= 70" from its edge.
                "transform": [{"filter": "datum.open"}],
                "mark": {
                    "type": "text",
                    "align": "left",
                    "baseline": "bottom",
                    "dx": 3,
                    "dy": -2,
                    "fontSize": 9,
                },
                "encoding": {
                    "y": {"field": "rows", "type": "quantitative"},
                    "text": {"field": "interval", "type": "nominal"},
                },
            },
        ],
    }


def _date_time(days: float) -> dict[str, Any]:
    """A Vega-Lite DateTime (UTC) of ``days`` since 1970-01-01: a temporal axis's tick."""
    day = _EPOCH + datetime.timedelta(days=int(days))
    return {"year": day.year, "month": day.month, "date": day.day, "utc": True}


def _drawable(histogram: Histogram) -> bool:
    """Whether ``histogram`` has an edge to draw its bins by (not one bin of all values)."""
    return bool(_edges(histogram))


def _note(title: str, text: str) -> Spec:
    """A panel holding only a line of text (no input, nothing released)."""
    return {
        "title": title,
        "width": WIDTH,
        "height": 40,
        "data": {"values": [{"text": text}]},
        "mark": {"type": "text", "align": "left", "x": 0, "y": 20},
        "encoding": {"text": {"field": "text", "type": "nominal"}},
    }


def distribution_figure(distribution: QiDistribution, *, k: int) -> Spec:
    """One quasi-identifier, input beside release.

    Numbers and dates as histograms over their bins or released intervals
    (no input bin under k rows, the outer ones open: ``< a``, ``>= b``; a single bin
    of every value is drawn as bars instead), other values as bars (values of fewer than
    k input rows merged into one ``other`` bar).
    """
    d = distribution
    level = "" if d.level is None else f" (level {d.level})"
    before: Spec
    after: Spec
    if d.histogram_before is not None and _drawable(d.histogram_before):
        before = _histogram(
            d.histogram_before,
            INPUT_COLOUR,
            f"input (bins of fewer than {k} rows merged)",
            d.column,
        )
    elif d.before:
        before = _bars(d.before, INPUT_COLOUR, f"input (values in fewer than {k} rows merged)")
    else:
        before = _note("input", "input not available")
    if d.histogram_after is not None and _drawable(d.histogram_after):
        after = _histogram(d.histogram_after, RELEASE_COLOUR, f"release{level}", d.column)
    elif d.after:
        after = _bars(d.after, RELEASE_COLOUR, f"release{level}")
    else:
        after = _note("release", "no rows released")
    return _configured(
        {
            "title": {"text": d.column, **_TITLE},
            "hconcat": [before, after],
            "resolve": {"scale": {"x": "independent", "y": "independent"}},
        }
    )


def class_size_figure(class_sizes: Mapping[int, int], *, k: int) -> Spec:
    """Number of released classes of each size, k marked; logarithmic size bins
    when there are more than 60 distinct sizes or they span more than 60 (a bar
    one size wide would be too thin to see on the axis)."""
    title = "equivalence classes of the release by size"
    if not class_sizes:
        return _configured(_note(title, "no rows released"))
    sizes = sorted(class_sizes)
    if len(sizes) <= 60 and sizes[-1] - sizes[0] <= 60:
        rows = [
            {"low": s - 0.4, "high": s + 0.4, "sizes": str(s), "classes": class_sizes[s]}
            for s in sizes
        ]
        x_scale: dict[str, Any] = {"zero": False}
    else:
        edges = np.unique(np.geomspace(sizes[0], sizes[-1] + 1, num=40).astype(np.int64))
        counts = np.histogram(sizes, bins=edges, weights=[class_sizes[s] for s in sizes])[0]
        rows = [
            {
                "low": int(low),
                "high": int(high),
                "sizes": str(low) if high == low + 1 else f"{low}-{high - 1}",
                "classes": int(n),
            }
            for low, high, n in zip(edges[:-1], edges[1:], counts, strict=True)
            if n
        ]
        x_scale = {"type": "log"}
    x = {
        "field": "low",
        "type": "quantitative",
        "title": "class size (rows sharing one quasi-identifier combination)",
        "scale": x_scale,
    }
    return _configured(
        {
            # Room above the plot for the label of k.
            "title": {"text": title, "offset": 14},
            "width": 2 * WIDTH,
            "height": 180,
            "layer": [
                {
                    "data": {"values": rows},
                    "mark": {"type": "rect", "color": RELEASE_COLOUR},
                    "encoding": {
                        "x": x,
                        "x2": {"field": "high"},
                        "y": {"field": "classes", "type": "quantitative", "title": "classes"},
                        "y2": {"datum": 0},
                        "tooltip": _tooltip(
                            ("sizes", "nominal", "class size"),
                            ("classes", "quantitative", "classes"),
                        ),
                    },
                },
                {
                    "data": {"values": [{"k": k, "label": f"k = {k}"}]},
                    "encoding": {"x": {"field": "k", "type": "quantitative"}},
                    "layer": [
                        {"mark": {"type": "rule", "strokeDash": [4, 3], "color": "black"}},
                        {
                            "mark": {
                                "type": "text",
                                "align": "left",
                                "dx": 3,
                                "y": -3,
                                "baseline": "bottom",
                            },
                            "encoding": {"text": {"field": "label", "type": "nominal"}},
                        },
                    ],
                },
            ],
        }
    )


def risk_figure(bands: Sequence[RiskBand]) -> Spec:
    """Share of records per class-size band (their prosecutor risk), input and release."""
    rows = [
        {"band": band.label, "side": side, "share": share}
        for band in bands
        for side, share in (("input", band.before), ("release", band.after or 0.0))
    ]
    return _configured(
        {
            "title": "share of records by the size of their class (prosecutor risk 1/size)",
            "width": 2 * WIDTH - 150,
            "data": {"values": rows},
            "encoding": {
                "y": {"field": "band", "type": "nominal", "sort": None, "title": "class size"},
                "yOffset": {"field": "side", "type": "nominal", "sort": ["input", "release"]},
                "x": {
                    "field": "share",
                    "type": "quantitative",
                    # Shares are written on the bars: no axis (see _bars).
                    "axis": None,
                    "scale": {"domain": [0, 1.12]},
                },
            },
            "layer": [
                {
                    "mark": {"type": "bar"},
                    "encoding": {
                        "color": {
                            "field": "side",
                            "type": "nominal",
                            "title": None,
                            "scale": {
                                "domain": ["input", "release"],
                                "range": [INPUT_COLOUR, RELEASE_COLOUR],
                            },
                        },
                        "tooltip": _tooltip(
                            ("band", "nominal", "class size"),
                            ("side", "nominal", "table"),
                            ("share", "quantitative", "share of records"),
                        ),
                    },
                },
                {
                    "mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 9},
                    "encoding": {
                        "text": {"field": "share", "type": "quantitative", "format": ".1%"}
                    },
                },
            ],
        }
    )


def _vector(levels: Sequence[int]) -> str:
    return "[" + ",".join(str(level) for level in levels) + "]"


def _node_rows(nodes: Sequence[LatticeNode], names: Sequence[str]) -> list[dict[str, Any]]:
    """One row per node: its place (rank within its height, centred) and what a tooltip says."""
    heights = [node.height for node in nodes]
    width = {h: heights.count(h) for h in set(heights)}
    seen: dict[int, int] = {}
    rows = []
    for node, h in zip(nodes, heights, strict=True):
        rank = seen.get(h, 0)
        seen[h] = rank + 1
        marks = [
            what
            for what, flag in (
                ("released", node.released),
                ("optimum", node.optimum),
                ("minimal", node.minimal),
            )
            if flag
        ]
        rows.append(
            {
                "x": rank - (width[h] - 1) / 2,
                "height": h,
                "vector": _vector(node.levels),
                "levels": ", ".join(f"{n}={v}" for n, v in zip(names, node.levels, strict=True)),
                "status": node.status,
                "checked": "for this report only"
                if node.checked_for_report
                else "by the search"
                if node.status != "not checked"
                else "no",
                "score": node.score,
                "marked": ", ".join(marks),
                "for_report": node.checked_for_report,
                "released": node.released,
                "optimum": node.optimum,
                "minimal": node.minimal,
            }
        )
    return rows


def _nodes_chart(view: LatticeView, title: str, *, width: int) -> Spec:
    """Nodes by height (sum of levels), edges to their direct generalizations,
    coloured by status; the released node a square, the optimum a diamond,
    minimal nodes ringed."""
    rows = _node_rows(view.nodes, view.names)
    edges = [
        {
            "x": rows[a]["x"],
            "height": rows[a]["height"],
            "x2": rows[b]["x"],
            "height2": rows[b]["height"],
        }
        for a, b in view.edges
    ]
    labelled = len(rows) <= MAX_LABELLED_NODES
    # Padding in pixels keeps the end nodes' labels inside the figure.
    x = {
        "field": "x",
        "type": "quantitative",
        "axis": None,
        "scale": {"nice": False, "zero": False, "padding": 45 if labelled else 8},
    }
    y = {
        "field": "height",
        "type": "quantitative",
        "title": "height (sum of levels)",
        "axis": {"tickMinStep": 1, "format": "d"},
        "scale": {"zero": False, "nice": False, "padding": 12},
    }
    statuses = list(STATUS_COLOURS)
    layers: list[Spec] = []
    if edges:
        layers.append(
            {
                "data": {"values": edges},
                "mark": {"type": "rule", "color": "#d0d0d0", "strokeWidth": 0.7},
                "encoding": {"x": x, "y": y, "x2": {"field": "x2"}, "y2": {"field": "height2"}},
            }
        )
    size = 60 if labelled else 25
    colour = {
        "field": "status",
        "type": "nominal",
        "scale": {"domain": statuses, "range": [STATUS_COLOURS[s] for s in statuses]},
        "legend": {"title": "node"},
    }
    tooltip = _tooltip(
        ("vector", "nominal", "levels"),
        ("levels", "nominal", "by attribute"),
        ("status", "nominal", "status"),
        ("checked", "nominal", "checked"),
        ("score", "quantitative", "score"),
        ("marked", "nominal", "marked"),
    )
    layers += [
        # Filled: checked by the search; hollow: checked for this report only.
        {
            "transform": [{"filter": f"{'!' if filled else ''}datum.for_report"}],
            "mark": {"type": "point", "filled": filled, "size": size, "opacity": 1},
            "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip},
        }
        for filled in (True, False)
    ]
    layers += [
        {
            "transform": [{"filter": "datum.minimal"}],
            "mark": {"type": "point", "shape": "circle", "size": size * 3, "color": "black"},
            "encoding": {"x": x, "y": y},
        },
        {
            "transform": [{"filter": "datum.released"}],
            "mark": {"type": "point", "shape": "square", "size": size * 4, "color": "black"},
            "encoding": {"x": x, "y": y},
        },
        {
            "transform": [{"filter": "datum.optimum && !datum.released"}],
            "mark": {"type": "point", "shape": "diamond", "size": size * 4, "color": "#e6a700"},
            "encoding": {"x": x, "y": y},
        },
        {
            "transform": [{"filter": "datum.released"}],
            "mark": {"type": "text", "align": "left", "dx": 9, "dy": -9, "fontWeight": "bold"},
            "encoding": {"x": x, "y": y, "text": {"value": "released"}},
        },
    ]
    if labelled:
        layers.append(
            {
                "mark": {"type": "text", "dy": 13, "fontSize": 8, "color": "#555555"},
                "encoding": {"x": x, "y": y, "text": {"field": "vector", "type": "nominal"}},
            }
        )
    heights = [row["height"] for row in rows]
    widest = max(heights.count(h) for h in set(heights))
    return {
        "title": title,
        # A labelled node needs room for its vector: about 7 pixels per character.
        "width": max(width, 7 * len(rows[0]["vector"]) * widest) if labelled else width,
        "height": max(80, 34 * len(set(heights))),
        "data": {"values": rows},
        "layer": layers,
    }


def lattice_figure(view: LatticeView) -> Spec:
    """Every node of a small lattice by height: what the search checked and found."""
    return _configured(
        _nodes_chart(
            view,
            f"generalization lattice: {view.size:,} nodes, vectors over ({', '.join(view.names)})",
            width=2 * WIDTH,
        )
    )


def height_figure(view: LatticeView) -> Spec:
    """A lattice too large to draw node by node: nodes per height by status, beside the
    released node with its direct specializations (below) and generalizations (above)."""
    rows = [
        {"height": row.height, "status": status, "nodes": count}
        for row in view.per_height
        for status, count in (
            ("satisfies", row.satisfies),
            ("fails", row.fails),
            ("not checked", row.not_checked),
        )
        if count
    ]
    statuses = list(STATUS_COLOURS)
    per_height: Spec = {
        "title": f"generalization lattice by height: {view.size:,} nodes",
        "width": 2 * WIDTH,
        "height": 220,
        "data": {"values": rows},
        "mark": {"type": "bar"},
        "encoding": {
            "x": {
                "field": "height",
                "type": "ordinal",
                "title": "height (sum of levels)",
                "axis": {"labelAngle": 0},
            },
            "y": {"field": "nodes", "type": "quantitative", "title": "nodes", "stack": True},
            "color": {
                "field": "status",
                "type": "nominal",
                "scale": {"domain": statuses, "range": [STATUS_COLOURS[s] for s in statuses]},
                "legend": {"title": "node"},
            },
            "order": {"field": "status", "sort": "descending"},
            "tooltip": _tooltip(
                ("height", "ordinal", "height"),
                ("status", "nominal", "status"),
                ("nodes", "quantitative", "nodes"),
            ),
        },
    }
    around = _nodes_chart(view, "around the released node", width=2 * WIDTH)
    return _configured({"vconcat": [per_height, around], "resolve": {"scale": {"color": "shared"}}})
