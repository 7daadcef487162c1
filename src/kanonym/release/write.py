"""Writing a verified release: destinations checked first, then every file at once.

Example:
    >>> import kanonym, polars as pl, tempfile, pathlib
    >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"]})
    >>> result = kanonym.anonymize(table, quasi_identifiers={"zip": "mask"}, k=2, seed=1)
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_result(result, folder / "out.csv", report=folder / "out.json")
    >>> sorted(p.name for p in folder.iterdir())
    ['out.csv', 'out.json']
"""

from __future__ import annotations

from pathlib import Path

from kanonym.io import write_atomic
from kanonym.io.paths import check_destinations
from kanonym.report.files import payloads
from kanonym.result import Result
from kanonym.search import Progress


def write_result(
    result: Result,
    output: str | Path,
    *,
    report: str | Path | None = None,
    report_html: str | Path | None = None,
) -> None:
    """Write ``result``'s release and reports atomically and together (:meth:`Result.write`).

    Raises:
        InputError: a destination is the input table or a hierarchy file,
            two destinations are one file, or one cannot be written
            (:func:`kanonym.io.paths.check_destinations`); checked before
            anything is serialized.
    """
    check_destinations(
        {"output": output, "report": report, "report_html": report_html}, result.input_files()
    )
    files = payloads(result, output, report=report, report_html=report_html)
    if result.on_progress is not None:
        result.on_progress(Progress.of_stage("writing", detail=f"{len(files)} files"))
    write_atomic(files)
