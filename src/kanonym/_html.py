"""Small HTML for notebooks: the ``_repr_html_`` of results and summaries.

Jupyter shows an object by its ``_repr_html_`` (IPython's rich display
protocol). Every value put into the HTML here is escaped
(:func:`html.escape`), so a column named ``<script>`` is shown as text and
never runs. What the summaries show is their own business: the callers show
only counts, measures and names (:mod:`kanonym.report.content` for the rules).

Example:
    >>> print(table([("<b>", None)]))
    <table><tbody><tr><td>&lt;b&gt;</td><td>n/a</td></tr></tbody></table>
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence


def escaped(value: object) -> str:
    """``value`` as text (:func:`shown`), escaped for HTML, quotes included.

    Example:
        >>> escaped('<a href="x">')
        '&lt;a href=&quot;x&quot;&gt;'
    """
    return html.escape(shown(value), quote=True)


def shown(value: object) -> str:
    """A measure for a person: 6 significant digits, thousands separated, None as n/a.

    A mapping is shown as ``key value`` pairs and a list or tuple comma-separated.

    Example:
        >>> shown(0.123456789), shown(12345), shown(True), shown(None), shown({"age": 0.5})
        ('0.123457', '12,345', 'yes', 'n/a', 'age 0.5')
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {shown(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(shown(item) for item in value)
    return str(value)


def table(rows: Iterable[Sequence[object]], header: Sequence[str] = ()) -> str:
    """An HTML table of ``rows`` under ``header``, every cell escaped."""
    head = ""
    if header:
        head = "<thead><tr>" + "".join(f"<th>{escaped(h)}</th>" for h in header) + "</tr></thead>"
    body = "".join(
        "<tr>" + "".join(f"<td>{escaped(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table>{head}<tbody>{body}</tbody></table>"


def section(title: str, *parts: str) -> str:
    """A titled block of already escaped ``parts``; the title is escaped here."""
    return f"<h4>{escaped(title)}</h4>" + "".join(parts)


def summary_box(title: str, *parts: str) -> str:
    """The outer block of a summary: its title in bold, then the ``parts``."""
    inner = "".join(parts)
    return f'<div class="kanonym-summary"><p><strong>{escaped(title)}</strong></p>{inner}</div>'
