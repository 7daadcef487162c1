"""The sweep as a Vega-Lite figure: utility loss against re-identification risk.

One point per release with a solution: x is its average prosecutor risk, y
its utility loss (the score the search minimized), colour its suppression
limit; the Pareto frontier (:mod:`kanonym.sweep.frontier`) is a line
through its points, each labelled with its k. The tooltip gives k, the limit,
the score, both prosecutor risks, the records at risk, the suppressed rows and
the classes; points equal on both axes (a larger k that changes nothing) share
one label, ``k=4-20``. A point selection named ``pick`` (the fields ``k`` and
``max_suppression``) lets a page react to a click: the web workbench reads it
to fill the release job. :func:`kanonym.figures.render.to_svg` draws the spec
as static SVG (HTML page, notebooks); :func:`kanonym.figures.render.embed` live.

Example:
    >>> from kanonym.sweep.points import SweepPoint
    >>> point = SweepPoint(k=2, max_suppression=0.0, max_suppressed_rows=0, solution=True,
    ...                    transformation={"zip": 1}, metric="loss", score=0.5,
    ...                    equivalence_classes=2, suppressed_rows=0, released_rows=4,
    ...                    highest_risk=0.5, average_risk=0.5, records_at_risk=4,
    ...                    on_frontier=True)
    >>> spec = sweep_figure([point], metric="loss")
    >>> spec["layer"][1]["params"][0]["name"], len(spec["data"]["values"])
    ('pick', 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kanonym.sweep.points import SweepPoint, percent
from kanonym.sweep.tables import levels, merged

if TYPE_CHECKING:
    # Only the type: kanonym.figures loads when a figure is drawn.
    from kanonym.figures import Spec

PICK = "pick"
"""The name of the figure's point selection (a click picks a release)."""


def _row(point: SweepPoint) -> dict[str, object]:
    return {
        "k": point.k,
        "max_suppression": point.max_suppression,
        "limit": percent(point.max_suppression),
        "score": point.score,
        "average_risk": point.average_risk,
        "highest_risk": point.highest_risk,
        "records_at_risk": point.records_at_risk,
        "suppressed_rows": point.suppressed_rows,
        "classes": point.equivalence_classes,
        "levels": levels(point),
        "frontier": point.on_frontier,
    }


def sweep_figure(points: Sequence[SweepPoint], *, metric: str, width: int = 520) -> Spec:
    """The Vega-Lite spec of a sweep's points with a solution (the module docstring)."""
    rows = [_row(point) for point in points if point.solution]
    labels = [
        {**_row(point), "label": f"k={k}"}
        for k, point in merged([p for p in points if p.on_frontier])
    ]
    limits = list(dict.fromkeys(row["limit"] for row in rows))
    x = {
        "field": "average_risk",
        "type": "quantitative",
        "title": "average prosecutor risk (classes / released rows)",
        "scale": {"zero": True},
    }
    y = {"field": "score", "type": "quantitative", "title": f"utility loss ({metric})"}
    frontier = {"filter": "datum.frontier"}
    tooltip = [
        {"field": "k", "type": "quantitative"},
        {"field": "limit", "type": "nominal", "title": "max suppression"},
        {"field": "score", "type": "quantitative", "title": metric, "format": ".4g"},
        {"field": "average_risk", "type": "quantitative", "title": "average risk", "format": ".4g"},
        {"field": "highest_risk", "type": "quantitative", "title": "highest risk", "format": ".4g"},
        {"field": "records_at_risk", "type": "quantitative", "title": "records at risk"},
        {"field": "suppressed_rows", "type": "quantitative", "title": "suppressed rows"},
        {"field": "classes", "type": "quantitative", "title": "classes"},
        {"field": "levels", "type": "nominal", "title": "levels"},
        {"field": "frontier", "type": "nominal", "title": "on the frontier"},
    ]
    return {
        "description": f"Utility loss ({metric}) against average prosecutor risk, per k and "
        "suppression limit; the line joins the Pareto frontier.",
        "width": width,
        "height": round(width * 0.62),
        "data": {"values": rows},
        "layer": [
            {
                "transform": [frontier],
                "mark": {"type": "line", "color": "#555", "strokeDash": [4, 3]},
                "encoding": {"x": x, "y": y, "order": {"field": "average_risk"}},
            },
            {
                "params": [
                    {
                        "name": PICK,
                        "select": {"type": "point", "fields": ["k", "max_suppression"]},
                    }
                ],
                "mark": {"type": "point", "filled": True, "size": 70, "cursor": "pointer"},
                "encoding": {
                    "x": x,
                    "y": y,
                    "color": {
                        "field": "limit",
                        "type": "nominal",
                        "title": "max suppression",
                        "sort": limits,
                    },
                    "shape": {
                        "field": "frontier",
                        "type": "nominal",
                        "title": "on the frontier",
                        "scale": {"domain": [True, False], "range": ["diamond", "circle"]},
                    },
                    "opacity": {"condition": {"param": PICK, "value": 1}, "value": 0.35},
                    "tooltip": tooltip,
                },
            },
            {
                # One label per release: equal points (a larger k changing nothing) share it.
                "data": {"values": labels},
                "mark": {"type": "text", "dx": 7, "dy": -7, "align": "left", "fontSize": 10},
                "encoding": {"x": x, "y": y, "text": {"field": "label"}},
            },
        ],
    }
