"""The files of a release: the table as serialized, the JSON report, the HTML report.

:func:`payloads` turns a verified :class:`~kanonym.result.Result` into the
bytes of every file to write, in order (the release first), so that the
writer (:func:`kanonym.release.write.write_result`, or the ledger's journaled
group write) can replace them all at once.

Example:
    >>> import kanonym, polars as pl
    >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    >>> result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
    >>> [path.name for path, _ in payloads(result, "out.csv", report="out.json")]
    ['out.csv', 'out.json']
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from kanonym.engine.postgres import redact
from kanonym.io import format_for, serialize
from kanonym.report.fingerprints import WrittenFile
from kanonym.report.json_report import render_json
from kanonym.result import Result
from kanonym.search import Progress


def payloads(
    result: Result,
    output: str | Path,
    *,
    report: str | Path | None = None,
    report_html: str | Path | None = None,
    report_extra: Mapping[str, object] | None = None,
    published: bool = False,
    check_lattice: bool = False,
) -> list[tuple[Path, bytes]]:
    """The files a release writes, as ``(path, bytes)``: the release, then the reports.

    A ``published`` output is one the release's engine writes itself (a
    PostgreSQL table, Parquet through Spark: :meth:`kanonym.engine.ServerEngine.publish`):
    only the reports are files then.

    ``report_extra`` holds keys added at the end of the JSON report (the
    ledger's ``ledger`` object). Sets the report's ``timings.write`` (the time
    spent serializing the release). Reports the ``writing`` and ``drawing
    report`` stages to the result's ``on_progress``. ``check_lattice``: as
    for :func:`kanonym.report.render_html`.
    """
    from kanonym.figures.render import figure_workers

    # The processes that draw the figures start (a few tenths of a second) while the
    # release and the JSON report are serialized and the page's content gathered.
    with figure_workers(report_html is not None):
        return _payloads(
            result, output, report, report_html, report_extra, published, check_lattice
        )


def _payloads(
    result: Result,
    output: str | Path,
    report: str | Path | None,
    report_html: str | Path | None,
    report_extra: Mapping[str, object] | None,
    published: bool,
    check_lattice: bool,
) -> list[tuple[Path, bytes]]:
    files: list[tuple[Path, bytes]] = []
    release: WrittenFile
    if published:
        # Written by the engine: no bytes here; a URL is shown without its password.
        release = (redact(str(output)), None)
    else:
        output = Path(output)
        if result.on_progress is not None:
            result.on_progress(Progress.of_stage("writing", detail=output.name))
        started = time.perf_counter()
        data = serialize(result.table, fmt=format_for(output), dialect=result.dialect)
        result.timings["write"] = time.perf_counter() - started
        files.append((output, data))
        release = (output, data)
    written: list[WrittenFile] = [release]
    if report is not None:
        from kanonym.report.fingerprints import report_fingerprints

        document = {
            **result.report(),
            "output": str(release[0]),
            **report_fingerprints(result, release),
            **(report_extra or {}),
        }
        files.append((Path(report), render_json(document)))
        written.append(files[-1])
    if report_html is not None:
        from kanonym.report.html import render_html  # renders with vl-convert, an extra

        page = render_html(
            result,
            written=written,
            on_progress=result.on_progress,
            check_lattice=check_lattice,
        )
        files.append((Path(report_html), page))
    return files
