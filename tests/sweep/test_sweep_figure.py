"""The sweep's Vega-Lite figure: risk against loss, the frontier as a line, a `pick` selection."""

from __future__ import annotations

import polars as pl

import kanonym
from kanonym.figures.render import to_svg
from kanonym.sweep.figure import PICK, sweep_figure


def _sweep() -> kanonym.Exploration:
    table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142", "02138", "02141"]})
    return kanonym.explore(table, quasi_identifiers={"zip": "mask"}, ks=range(1, 9),
                           suppression_limits=[0.0, 0.5])  # fmt: skip


def test_spec_shows_the_points_with_a_solution_and_the_frontier() -> None:
    sweep = _sweep()
    spec = sweep.figure()
    rows = spec["data"]["values"]
    assert len(rows) == sum(p.solution for p in sweep.points)
    line, points, labels = spec["layer"]
    assert line["mark"]["type"] == "line" and line["transform"] == [{"filter": "datum.frontier"}]
    assert points["params"][0]["name"] == PICK == "pick"
    assert points["params"][0]["select"]["fields"] == ["k", "max_suppression"]
    encoding = points["encoding"]
    assert encoding["x"]["field"] == "average_risk" and encoding["y"]["field"] == "score"
    assert encoding["color"]["field"] == "limit"
    shown = {item["field"] for item in encoding["tooltip"]}
    assert {"k", "highest_risk", "suppressed_rows", "classes"} <= shown
    assert labels["mark"]["type"] == "text"
    assert sum(row["frontier"] for row in rows) == len(sweep.frontier)


def test_spec_draws_as_svg() -> None:
    svg = to_svg(sweep_figure(_sweep().points, metric="loss"))
    assert svg.startswith("<svg") and "average prosecutor risk" in svg
