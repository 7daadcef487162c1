"""Report step: the JSON record a reviewer files with every release, and its HTML page.

The HTML report (:mod:`kanonym.report.html`) renders its figures, Vega-Lite
specifications (:mod:`kanonym.report.charts`), with ``vl-convert``, the
``report`` extra; importing this package does not import the HTML module
until one of its names is first read (kanonym._lazy).
"""

from typing import TYPE_CHECKING

from kanonym._lazy import lazy_names
from kanonym.report.files import payloads
from kanonym.report.json_report import render_json
from kanonym.result import SCHEMA_VERSION

if TYPE_CHECKING:
    from kanonym.report.html import SECTIONS, figures, render_html, require_vl_convert

__getattr__, __dir__ = lazy_names(
    __name__,
    dict.fromkeys(
        ("SECTIONS", "figures", "render_html", "require_vl_convert"), "kanonym.report.html"
    ),
)

__all__ = [
    "SCHEMA_VERSION",
    "SECTIONS",
    "figures",
    "payloads",
    "render_html",
    "render_json",
    "require_vl_convert",
]
