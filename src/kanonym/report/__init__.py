"""Report step: the JSON record a reviewer files with every release, and its HTML page.

The HTML report (:mod:`kanonym.report.html`) and its figures need matplotlib,
the ``report`` extra; importing this package does not import it.
"""

from kanonym.report.html import SECTIONS, figures, render_html, require_matplotlib
from kanonym.report.json_report import SCHEMA_VERSION, render_json

__all__ = [
    "SCHEMA_VERSION",
    "SECTIONS",
    "figures",
    "render_html",
    "render_json",
    "require_matplotlib",
]
