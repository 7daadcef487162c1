"""Showing a figure: Vega-Lite specs as static SVG, or live in a browser page.

A figure is a Vega-Lite specification, a plain ``dict`` (Satyanarayan, Moritz,
Wongsuphasawat and Heer 2017, "Vega-Lite: A Grammar of Interactive
Graphics"). One definition serves every place a figure is shown:

* :func:`to_svg` renders it to static SVG with ``vl-convert`` (Vega's own
  renderer, embedded in a Python extension: no browser, no network), for the
  self-contained HTML report and for notebooks;
* :func:`embed` writes the HTML that draws it live (zoom, hover) in a page
  that has loaded :func:`script_tags`, for the web workbench.

The JavaScript is vendored in the package (``kanonym/figures/vendor``):
nothing is fetched from the internet at run time.

``vl-convert`` is an optional extra (``pip install 'kanonym[report]'``); only
:func:`to_svg` and :func:`warm_up` import it.

Example:
    >>> spec = {"data": {"values": [{"x": "a", "n": 3}]}, "mark": "bar",
    ...         "encoding": {"x": {"field": "x", "type": "nominal"},
    ...                      "y": {"field": "n", "type": "quantitative"}}}
    >>> to_svg(spec).startswith("<svg")
    True
    >>> 'vegaEmbed("#f1"' in embed(spec, "f1")
    True
"""

from __future__ import annotations

import contextlib
import html
import importlib
import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources
from typing import Any

from kanonym.errors import InputError

Spec = dict[str, Any]
"""A Vega-Lite specification."""

VEGA_LITE_VERSION = "6.4"
"""The Vega-Lite version of the vendored JavaScript, which ``vl-convert`` renders too."""

SCHEMA = f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE_VERSION.split('.')[0]}.json"
"""The ``$schema`` of every spec (an identifier: nothing fetches it)."""

_VENDORED = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")


def require_vl_convert() -> None:
    """Raise a one-line :class:`InputError` unless ``vl-convert`` can be imported."""
    try:
        importlib.import_module("vl_convert")
    except ImportError:
        raise InputError(
            "drawing figures needs vl-convert-python, which is not installed: "
            "pip install 'kanonym[report]'"
        ) from None


def to_svg(spec: Spec) -> str:
    """``spec`` drawn as a standalone SVG document (text stays text, so it is searchable).

    Raises:
        InputError: ``vl-convert`` is not installed.
    """
    require_vl_convert()
    import vl_convert

    svg: str = vl_convert.vegalite_to_svg({"$schema": SCHEMA, **spec}, vl_version=VEGA_LITE_VERSION)
    return svg


_warm = threading.Lock()
_warmed = False
# Bars, text, a rect, axes and a concatenation: rendering this compiles the code paths
# real figures take, so that the first of them is not slower than the others.
_WARM_UP_SPEC: Spec = {
    "data": {"values": [{"x": "a", "n": 1}, {"x": "b", "n": 2}]},
    "hconcat": [
        {
            "layer": [
                {"mark": "bar", "encoding": {"y": {"field": "x", "type": "nominal"}}},
                {"mark": {"type": "text", "dx": 3}, "encoding": {"text": {"field": "n"}}},
            ],
            "encoding": {"x": {"field": "n", "type": "quantitative"}},
        },
        {
            "mark": "rect",
            "encoding": {
                "x": {"field": "n", "type": "quantitative"},
                "x2": {"datum": 3},
                "y": {"field": "n", "type": "quantitative"},
                "y2": {"datum": 0},
            },
        },
    ],
}


def warm_up() -> None:
    """Start ``vl-convert``'s JavaScript engine, which takes a few tenths of a second
    the first time a process renders (later figures take milliseconds).

    Idempotent and thread-safe; does nothing when ``vl-convert`` is not
    installed. (vl-convert 1.9 holds the GIL while it starts, so a thread
    running this would not overlap a search: a release that will draw a
    report starts worker processes instead, :func:`start_workers`.)
    """
    global _warmed
    with _warm:
        if _warmed:
            return
        try:
            to_svg(_WARM_UP_SPEC)
        except InputError:
            return
        _warmed = True


WORKERS = 2
"""Processes :func:`start_workers` starts: a report's figures are split between them."""

# A worker process: vl-convert alone (not kanonym, whose import takes half a second),
# started and warmed up at once, then one spec in per line, one SVG (or error) out.
_SERVE = """
import json, sys
import vl_convert
version = sys.argv[1]
spec = json.loads(sys.argv[2])
vl_convert.vegalite_to_svg(spec, vl_version=version)
for line in sys.stdin:
    try:
        reply = {"svg": vl_convert.vegalite_to_svg(json.loads(line), vl_version=version)}
    except Exception as error:
        reply = {"error": str(error)}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""

_workers: list[subprocess.Popen[str]] = []
_workers_lock = threading.Lock()


def start_workers(count: int = WORKERS) -> None:
    """Start ``count`` processes that render figures, for :func:`render_all`.

    vl-convert 1.9 holds the GIL while its engine starts (about 0.4 s) and while
    it renders, so a thread cannot overlap either with the search; a process
    can, and two processes draw a report's figures side by side. A release
    that will draw a report calls this before its search; :func:`render_all`
    then uses the workers and stops them. Idempotent; does nothing when
    vl-convert is not installed (the page then fails with its one-line
    message). A worker reads specs from its standard input, so it ends when
    this process does.
    """
    with _workers_lock:
        if _workers or importlib.util.find_spec("vl_convert") is None:
            return
        warm = json.dumps({"$schema": SCHEMA, **_WARM_UP_SPEC})
        command = [sys.executable, "-I", "-c", _SERVE, VEGA_LITE_VERSION, warm]
        for _ in range(max(1, count)):
            _workers.append(
                subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    encoding="utf-8",
                )
            )


def _ask(worker: subprocess.Popen[str], spec: Spec) -> str:
    """One spec rendered by a worker process."""
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(json.dumps({"$schema": SCHEMA, **spec}) + "\n")
    worker.stdin.flush()
    line = worker.stdout.readline()
    if not line:
        raise OSError("the figure worker ended")
    reply = json.loads(line)
    if "error" in reply:
        raise ValueError(reply["error"])
    svg: str = reply["svg"]
    return svg


def _stop(worker: subprocess.Popen[str]) -> None:
    if worker.stdin is not None:
        worker.stdin.close()
    try:
        worker.wait(timeout=5)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def render_all(specs: Sequence[Spec]) -> Iterator[str]:
    """Each spec as SVG (:func:`to_svg`), yielded in order as soon as it is drawn.

    With workers started (:func:`start_workers`), the specs are split between
    them (spec i to worker i mod n) and the workers are stopped at the end; a
    spec a worker could not render is rendered here. Without, one by one here.

    Example:
        >>> spec = {"data": {"values": [{"x": "a"}]}, "mark": "point",
        ...         "encoding": {"x": {"field": "x", "type": "nominal"}}}
        >>> [svg.startswith("<svg") for svg in render_all([spec, spec])]
        [True, True]
    """
    with _workers_lock:
        workers = list(_workers)
        _workers.clear()
    if not workers:
        yield from (to_svg(spec) for spec in specs)
        return
    drawn: dict[int, str] = {}
    ready = [threading.Event() for _ in specs]

    def serve(worker: subprocess.Popen[str], share: range) -> None:
        for i in share:
            # A spec the worker could not draw is drawn here, where an error says why.
            with contextlib.suppress(OSError, ValueError):
                drawn[i] = _ask(worker, specs[i])
            ready[i].set()

    threads = [
        threading.Thread(target=serve, args=(worker, range(w, len(specs), len(workers))))
        for w, worker in enumerate(workers)
    ]
    for thread in threads:
        thread.start()
    try:
        for i, spec in enumerate(specs):
            ready[i].wait()
            yield drawn[i] if i in drawn else to_svg(spec)
    finally:
        for thread in threads:
            thread.join()
        for worker in workers:
            _stop(worker)


@cache
def vendored_script(name: str) -> str:
    """The text of one vendored script (``vega.min.js``, ``vega-lite.min.js`` or
    ``vega-embed.min.js``)."""
    if name not in _VENDORED:
        raise ValueError(f"no vendored script {name!r}; there are {', '.join(_VENDORED)}")
    return resources.files("kanonym.figures").joinpath("vendor", name).read_text("utf-8")


def script_tags(base_url: str | None = None) -> str:
    """The ``<script>`` elements that load Vega, Vega-Lite and vega-embed.

    With ``base_url`` (a server that serves the vendored files, such as the
    workbench's ``/static/vendor``), tags that load them from there; without,
    the scripts inline (about 830 KB), for a page that must stand alone.
    """
    if base_url is not None:
        return "\n".join(
            f'<script src="{html.escape(base_url.rstrip("/"))}/{name}"></script>'
            for name in _VENDORED
        )
    return "\n".join(f"<script>{vendored_script(name)}</script>" for name in _VENDORED)


def embed(spec: Spec, element_id: str, *, nonce: str | None = None) -> str:
    """A ``<div>`` and the script that draws ``spec`` into it live with vega-embed.

    The page must have loaded :func:`script_tags` first. ``nonce`` is the
    Content-Security-Policy nonce of the page's scripts, if it uses one.
    """
    if not element_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"element_id must be letters, digits, - and _: got {element_id!r}")
    payload = json.dumps({"$schema": SCHEMA, **spec}).replace("</", "<\\/")
    attribute = f' nonce="{html.escape(nonce)}"' if nonce else ""
    return (
        f'<div id="{element_id}" class="figure"></div>\n'
        f"<script{attribute}>"
        f'vegaEmbed("#{element_id}", {payload}, {{actions: false, renderer: "svg"}});'
        "</script>"
    )
