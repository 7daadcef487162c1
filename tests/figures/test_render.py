"""Drawing a Vega-Lite spec as static SVG: text stays text, the engine starts once."""

from __future__ import annotations

import sys

import pytest

from kanonym.errors import InputError
from kanonym.figures import render

pytest.importorskip("vl_convert")

SPEC = {
    "data": {"values": [{"value": "Cambridge", "rows": 60}]},
    "mark": "bar",
    "encoding": {
        "y": {"field": "value", "type": "nominal"},
        "x": {"field": "rows", "type": "quantitative"},
    },
}


def test_svg_keeps_labels_as_searchable_text() -> None:
    svg = render.to_svg(SPEC)
    assert svg.startswith("<svg") and ">Cambridge</text>" in svg


def test_warm_up_is_idempotent() -> None:
    render.warm_up()
    render.warm_up()  # a second call returns at once
    assert render.to_svg(SPEC).startswith("<svg")


def test_missing_vl_convert_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)
    with pytest.raises(InputError) as raised:
        render.to_svg(SPEC)
    message = str(raised.value)
    assert "\n" not in message and "pip install 'kanonym[report]'" in message


def test_worker_processes_draw_the_same_figures_in_order_then_stop() -> None:
    other = {**SPEC, "data": {"values": [{"value": "Somerville", "rows": 40}]}}
    render.start_workers(2)
    workers = list(render._workers)
    assert len(workers) == 2
    drawn = list(render.render_all([SPEC, other, SPEC]))
    assert drawn == [render.to_svg(SPEC), render.to_svg(other), render.to_svg(SPEC)]
    assert all(worker.poll() is not None for worker in workers)
    assert render._workers == []


def test_a_spec_no_worker_can_draw_fails_here_with_vl_converts_error() -> None:
    render.start_workers(1)
    with pytest.raises(ValueError, match="conversion failed"):
        list(render.render_all([{"mark": "nonsense"}]))
    assert render._workers == []


def test_a_worker_that_dies_leaves_its_figures_to_this_process() -> None:
    render.start_workers(2)
    dead = render._workers[0]
    dead.kill()
    dead.wait()
    specs = [SPEC, {**SPEC, "mark": "point"}, SPEC, {**SPEC, "mark": "point"}]
    drawn: list[int] = []
    svgs = render.render_all(specs, on_drawn=drawn.append)
    assert svgs == [render.to_svg(spec) for spec in specs]
    assert drawn == [0, 1, 2, 3]
    assert render._workers == []


def test_workers_a_failed_release_did_not_use_are_stopped() -> None:
    with pytest.raises(RuntimeError), render.figure_workers():
        workers = list(render._workers)
        assert workers
        raise RuntimeError("the search failed before the report")
    assert render._workers == []
    assert all(worker.poll() is not None for worker in workers)
    assert all(worker.stdout is None or worker.stdout.closed for worker in workers)
