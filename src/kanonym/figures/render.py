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
from collections.abc import Callable, Iterator, Sequence
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
# started and warmed up at once, then one request in per line ({"id", "spec"}), one reply
# out ({"id", "svg"} or {"id", "error"}). Its replies go to a copy of the standard output
# taken at start; anything else writing to fd 1 lands on stderr, so no stray line can
# pass for a reply.
_SERVE = """
import json, os, sys
replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
import vl_convert
version = sys.argv[1]
vl_convert.vegalite_to_svg(json.loads(sys.argv[2]), vl_version=version)
for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = {"id": request["id"],
                 "svg": vl_convert.vegalite_to_svg(request["spec"], vl_version=version)}
    except Exception as error:
        reply = {"id": request["id"], "error": str(error)}
    replies.write(json.dumps(reply) + "\\n")
    replies.flush()
"""

WORKER_TIMEOUT = 120.0
"""Seconds a figure may take in a worker before the worker is stopped and the figure
drawn in this process (where an error says why)."""

_workers: list[subprocess.Popen[str]] = []
_workers_lock = threading.Lock()


def start_workers(count: int = WORKERS) -> None:
    """Start ``count`` processes that render figures, for :func:`render_all`.

    vl-convert 1.9 holds the GIL while its engine starts (about 0.4 s) and while
    it renders, so a thread cannot overlap either with the search; a process
    can, and two processes draw a report's figures side by side. A release
    that will draw a report calls this before its search; :func:`render_all`
    then uses the workers and stops them, and a release that fails before it
    calls :func:`stop_workers`. Idempotent; does nothing when vl-convert is not
    installed (the page then fails with its one-line message). A worker reads
    requests from its standard input, so it ends when this process does.
    """
    with _workers_lock:
        if _workers or importlib.util.find_spec("vl_convert") is None:
            return
        warm = json.dumps({"$schema": SCHEMA, **_WARM_UP_SPEC})
        # -I: the worker imports only the installed vl_convert, never a module of the
        # working directory that happens to share a name.
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


def stop_workers() -> None:
    """Stop the workers :func:`start_workers` started and no render used (a release that
    failed before its report). Idempotent."""
    with _workers_lock:
        workers = list(_workers)
        _workers.clear()
    for worker in workers:
        _stop(worker)


@contextlib.contextmanager
def figure_workers(wanted: bool = True) -> Iterator[None]:
    """:func:`start_workers` (when ``wanted``) for the block, :func:`stop_workers` after it:
    the workers a report did not use (it failed before drawing) never outlive the block.

    Example:
        >>> with figure_workers():
        ...     svgs = render_all([{"mark": "point", "data": {"values": [{}]}}])
        >>> _workers
        []
    """
    if wanted:
        start_workers()
    try:
        yield
    finally:
        stop_workers()


class WorkerError(Exception):
    """A worker died, hung, or answered out of turn: it is used no more."""


def _ask(worker: subprocess.Popen[str], number: int, spec: Spec) -> str:
    """Spec ``number`` rendered by a worker process.

    Raises:
        ValueError: vl-convert could not draw the spec (the worker stays usable).
        WorkerError: the worker ended, or its reply is not this request's.
    """
    assert worker.stdin is not None and worker.stdout is not None
    try:
        worker.stdin.write(json.dumps({"id": number, "spec": {"$schema": SCHEMA, **spec}}) + "\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        reply = json.loads(line) if line else None
    except (OSError, ValueError) as error:
        raise WorkerError(str(error)) from None
    if not isinstance(reply, dict) or reply.get("id") != number:
        raise WorkerError("the figure worker ended or answered out of turn")
    if "error" in reply:
        raise ValueError(reply["error"])
    svg: str = reply["svg"]
    return svg


def _stop(worker: subprocess.Popen[str]) -> None:
    for pipe in (worker.stdin, worker.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    try:
        worker.wait(timeout=5)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def render_all(
    specs: Sequence[Spec], *, on_drawn: Callable[[int], None] | None = None
) -> list[str]:
    """Each spec as SVG (:func:`to_svg`), in order; ``on_drawn(i)`` once spec i is drawn.

    With workers started (:func:`start_workers`), the specs are split between
    them (spec i to worker i mod n) and the workers are stopped at the end. A
    spec a worker could not draw is drawn here, where an error says why; a
    worker that dies, hangs past :data:`WORKER_TIMEOUT` or answers out of turn
    is stopped and its remaining specs drawn here. Without workers, one by one here.

    Example:
        >>> spec = {"data": {"values": [{"x": "a"}]}, "mark": "point",
        ...         "encoding": {"x": {"field": "x", "type": "nominal"}}}
        >>> [svg.startswith("<svg") for svg in render_all([spec, spec])]
        [True, True]
    """
    with _workers_lock:
        workers = list(_workers)
        _workers.clear()
    drawn: dict[int, str] = {}
    ready = [threading.Event() for _ in specs]

    def serve(worker: subprocess.Popen[str], share: range) -> None:
        usable = True
        for i in share:
            try:
                if usable:
                    drawn[i] = _ask(worker, i, specs[i])
            except ValueError:
                pass  # drawn here instead, where the error says why
            except WorkerError:
                usable = False
            finally:
                ready[i].set()

    threads = [
        threading.Thread(target=serve, args=(worker, range(w, len(specs), len(workers))))
        for w, worker in enumerate(workers)
    ]
    for thread in threads:
        thread.start()
    svgs: list[str] = []
    completed = False
    try:
        for i, spec in enumerate(specs):
            if workers and not ready[i].wait(WORKER_TIMEOUT):
                # Hung: killing it ends its read, and its thread gives up on it.
                workers[i % len(workers)].kill()
                ready[i].wait()
            svgs.append(drawn[i] if i in drawn else to_svg(spec))
            if on_drawn is not None:
                on_drawn(i)
        completed = True
    finally:
        if not completed:
            # Stopped midway (a figure failed here): the workers may be drawing still.
            for worker in workers:
                worker.kill()
        for thread in threads:
            thread.join()
        for worker in workers:
            _stop(worker)
    return svgs


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

    Example:
        >>> page = embed({"title": "<!--<script>"}, "f")
        >>> "<!--" in page, page.count("<script"), "\\\\u003c!--\\\\u003cscript" in page
        (False, 1, True)
    """
    if not element_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"element_id must be letters, digits, - and _: got {element_id!r}")
    # <, > and & as JSON escapes: a title or field name such as "<!--<script>" must not
    # end the element or change how the HTML parser reads the rest of the page.
    payload = (
        json.dumps({"$schema": SCHEMA, **spec})
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )
    attribute = f' nonce="{html.escape(nonce)}"' if nonce else ""
    return (
        f'<div id="{element_id}" class="figure"></div>\n'
        f"<script{attribute}>"
        f'vegaEmbed("#{element_id}", {payload}, {{actions: false, renderer: "svg"}});'
        "</script>"
    )
