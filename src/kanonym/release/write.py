"""Writing a verified release: destinations checked first, then every file at once.

A release to files (CSV or Parquet, and its reports) is written atomically
and together. A release an engine keeps where the rows live is published by that engine
when it writes the destination itself (a ``postgresql://...?table=SCHEMA.R``
table created and filled in one transaction, committed after the re-check
passed; Parquet through Spark's commit protocol), its reports prepared
beforehand and put in place only once the release is committed.

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
from typing import TYPE_CHECKING

import polars as pl

from kanonym.engine.choose import is_location
from kanonym.engine.postgres import is_postgres_url, redact
from kanonym.errors import InputError
from kanonym.io import write_atomic
from kanonym.io.paths import check_destinations
from kanonym.io.write import prepare_write
from kanonym.report.files import payloads
from kanonym.result import Result
from kanonym.search import Progress

if TYPE_CHECKING:
    # Only for the annotation: a run that shows no figure loads no figure module.
    from kanonym.figures import Spec


def write_result(
    result: Result,
    output: str | Path,
    *,
    report: str | Path | None = None,
    report_html: str | Path | None = None,
    replace: bool = False,
    check_lattice: bool = False,
) -> None:
    """Write ``result``'s release and reports atomically and together (:meth:`Result.write`).

    A destination the release's engine writes itself (a table of the input's
    PostgreSQL or DuckDB database, Parquet or a table through Spark's writer,
    a file the streaming or DuckDB engine streams:
    :meth:`~kanonym.engine.ServerRelease.publishes`) is published there, the
    reports put in place once it is committed. A file is replaced atomically
    whoever writes it; ``replace`` lets a table or a directory of part files
    replace an existing one. ``check_lattice``: as for
    :func:`kanonym.report.render_html`.

    Raises:
        InputError: a destination is the input table or a hierarchy file,
            two destinations are one file, or one cannot be written
            (:func:`kanonym.io.paths.check_destinations`); a table output
            for a release not held by the PostgreSQL engine of the same
            database, or an existing table without ``replace``; checked
            before anything is serialized.
    """
    released = result.released
    published = not isinstance(released, pl.DataFrame) and released.publishes(str(output))
    if not published and is_postgres_url(output):
        raise InputError(
            f"{redact(str(output))}: a release is published as a PostgreSQL table by the "
            "PostgreSQL engine that made it: anonymize a postgresql:// input of that database"
        )
    if not published and is_location(output):
        raise InputError(
            f"{redact(str(output))}: this output is written by the engine that reads its kind "
            "of input (a table by its database's engine, spark-table: by Spark); write the "
            "release to a file, or anonymize an input of that engine"
        )
    # A file an engine writes itself is replaced atomically (temporary file and rename),
    # as kanonym's own files are, and checked alike; a directory of parts or a table is
    # replaced only when asked.
    local_file = not is_location(output) and not Path(output).is_dir()
    files: dict[str, str | Path | None] = {"report": report, "report_html": report_html}
    if not published or local_file:
        files = {"output": output, **files}
    check_destinations(files, result.input_files())
    if not published:
        written = payloads(
            result, output, report=report, report_html=report_html, check_lattice=check_lattice
        )
        if result.on_progress is not None:
            result.on_progress(Progress.of_stage("writing", detail=f"{len(written)} files"))
        write_atomic(written)
        return
    assert not isinstance(released, pl.DataFrame)
    reports = payloads(
        result,
        str(output),
        report=report,
        report_html=report_html,
        published=True,
        check_lattice=check_lattice,
    )
    if result.on_progress is not None:
        result.on_progress(Progress.of_stage("writing", detail=redact(str(output))))
    # The reports wait beside their destinations until the release is committed.
    prepared = prepare_write(reports) if reports else None
    try:
        released.publish(str(output), replace=replace or local_file)
    except BaseException:
        if prepared is not None:
            prepared.abort()
        raise
    if prepared is not None:
        prepared.commit()


def report_figures(result: Result) -> dict[str, Spec]:
    """The HTML report's figures of ``result`` (:func:`kanonym.report.html.figures`), which
    a notebook draws (:meth:`Result._repr_html_`); loaded only then."""
    from kanonym.report.html import figures

    return figures(result)
