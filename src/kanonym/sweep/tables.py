"""A sweep's points as text for people and as HTML (notebooks, the ``--html`` page).

Example:
    >>> from kanonym.sweep.points import SweepPoint
    >>> point = SweepPoint(k=2, max_suppression=0.02, max_suppressed_rows=1, solution=True,
    ...                    transformation={"zip": 1}, metric="loss", score=0.5,
    ...                    equivalence_classes=2, suppressed_rows=0, released_rows=4,
    ...                    highest_risk=0.5, average_risk=0.5, records_at_risk=4,
    ...                    on_frontier=True)
    >>> print(text_table([point]))
     k  limit  loss  average risk  highest risk  at risk  suppressed  classes  levels
     2  2%     0.5   0.5           0.5           4        0           2        zip=1 *
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from kanonym.sweep.points import SweepPoint, percent

_STYLE = """
.kanonym-sweep { border-collapse: collapse; font: 13px/1.4 system-ui, sans-serif; }
.kanonym-sweep th, .kanonym-sweep td { padding: 2px 8px; text-align: right; }
.kanonym-sweep th { border-bottom: 1px solid #999; }
.kanonym-sweep td.levels { text-align: left; font-family: monospace; }
.kanonym-sweep tr.frontier { font-weight: bold; background: #eef4ff; }
.kanonym-sweep tr.none { color: #999; }
"""


def _number(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def levels(point: SweepPoint) -> str:
    """A point's transformation as tables and the figure's tooltip write it (``no solution``
    without one).

    Example:
        >>> levels(SweepPoint(k=2, max_suppression=0.0, max_suppressed_rows=0, solution=True,
        ...                   transformation={"zip": 1, "age": 2}, metric="loss"))
        'zip=1, age=2'
    """
    if point.transformation is None:
        return "no solution"
    return ", ".join(f"{name}={level}" for name, level in point.transformation.items())


def _cells(point: SweepPoint) -> list[str]:
    return [
        str(point.k),
        percent(point.max_suppression),
        _number(point.score),
        _number(point.average_risk),
        _number(point.highest_risk),
        _number(point.records_at_risk),
        _number(point.suppressed_rows),
        _number(point.equivalence_classes),
        levels(point),
    ]


def _headers(metric: str) -> list[str]:
    return [
        "k",
        "limit",
        metric,
        "average risk",
        "highest risk",
        "at risk",
        "suppressed",
        "classes",
        "levels",
    ]


def merged(points: Sequence[SweepPoint]) -> list[tuple[str, SweepPoint]]:
    """``points`` with those of one limit that make the same release (a larger k that
    changes nothing: the same levels, suppressed rows and score) merged into one:
    ``(k, point)`` pairs, the k of a merged point written as consecutive runs.

    A run of consecutive k is a range (``3-5``); k that are not consecutive are
    listed (``3-4, 6``), so a label never claims a k that made another release,
    or was not swept.

    Example:
        >>> same = dict(max_suppression=0.0, max_suppressed_rows=0, solution=True,
        ...             transformation={"zip": 1}, metric="loss")
        >>> [k for k, _ in merged([SweepPoint(k=k, **same) for k in (3, 4, 5, 8, 10, 11)])]
        ['3-5, 8, 10-11']
    """
    groups: dict[tuple[object, ...], list[SweepPoint]] = {}
    for point in points:
        chosen = tuple((point.transformation or {}).items())
        release = (point.max_suppression, chosen, point.suppressed_rows, point.score)
        groups.setdefault(release, []).append(point)
    return [(_runs([point.k for point in group]), group[0]) for group in groups.values()]


def _runs(ks: Sequence[int]) -> str:
    """``ks`` ascending, each run of consecutive ones as ``first-last``."""
    runs: list[list[int]] = []
    for k in sorted(ks):
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def text_table(points: Sequence[SweepPoint], *, merge: bool = False) -> str:
    """One line per point, aligned; a frontier point ends with ``*``. With ``merge``, the
    points of one limit that make the same release share a line (:func:`merged`)."""
    metric = points[0].metric if points else "score"
    pairs = merged(points) if merge else [(str(point.k), point) for point in points]
    points = [point for _, point in pairs]
    rows = [_headers(metric), *([k, *_cells(point)[1:]] for k, point in pairs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    marks = ["", *(" *" if point.on_frontier else "" for point in points)]
    lines = []
    for row, mark in zip(rows, marks, strict=True):
        first = row[0].rjust(widths[0] + 1)
        middle = [cell.ljust(width) for cell, width in zip(row[1:-1], widths[1:], strict=True)]
        lines.append("  ".join([first, *middle, row[-1]]) + mark)
    return "\n".join(lines)


def html_table(points: Sequence[SweepPoint]) -> str:
    """An HTML table of every point, the frontier's rows marked (bold, a ★)."""
    metric = points[0].metric if points else "score"
    head = "".join(f"<th>{html.escape(h)}</th>" for h in [*_headers(metric), "frontier"])
    body = []
    for point in points:
        cells = _cells(point)
        kind = "frontier" if point.on_frontier else ("" if point.solution else "none")
        tds = "".join(f"<td>{html.escape(cell)}</td>" for cell in cells[:-1])
        tds += f'<td class="levels">{html.escape(cells[-1])}</td>'
        tds += f"<td>{'★' if point.on_frontier else ''}</td>"
        body.append(f'<tr class="{kind}">{tds}</tr>')
    return (
        f'<style>{_STYLE}</style><table class="kanonym-sweep"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def html_page(title: str, summary: str, figure_svg: str, table: str) -> str:
    """A self-contained HTML page: a title, a summary line, the figure (SVG) and the table."""
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        "<style>body { font: 14px/1.5 system-ui, sans-serif; margin: 2em; color: #222; }"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(summary)}</p>"
        f'<figure class="kanonym-figure">{figure_svg}</figure>{table}</body></html>\n'
    )
