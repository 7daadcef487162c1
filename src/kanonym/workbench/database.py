"""A table (or query) of a PostgreSQL database as the workbench's input.

The release runs in the database, through the PostgreSQL engine, exactly as
``kanonym anonymize --config JOB`` runs it: the job's ``input`` is the URL.
The pages need the rows themselves, though: the preview and the column
statistics, the role suggestions, the hierarchy previews and the sweep over k
read them in the workbench's memory. :func:`read_database` pulls them through
the engine, at most :data:`MAX_ROWS` of them; a larger table is refused with
one line pointing to the command line, where the rows stay in the database.

The password never appears in a URL the workbench keeps: a URL holding one is
refused (it would be written into the job file), and the server is reached
with ``PGPASSWORD``, ``~/.pgpass`` or a service file, as the command line
reaches it. Messages name the URL as :func:`kanonym.engine.postgres.redact`
shows it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import numpy as np
import polars as pl

from kanonym.engine.postgres import PostgresEngine, PostgresLocation, is_postgres_url, redact
from kanonym.errors import InputError

MAX_ROWS = 1_000_000
"""The most rows the workbench reads from a database into its memory."""

URL_FORM = "postgresql://USER@HOST:PORT/DB?table=SCHEMA.NAME (or ?query=SELECT ...)"
"""The URL a database input is given as, for messages and the page."""


def read_database(url: str, max_rows: int = MAX_ROWS) -> pl.DataFrame:
    """The rows of the table or query ``url`` names, every column as text (the missing
    value and the empty string both missing, as the PostgreSQL engine reads them).

    The rows come from the engine's one ``GROUP BY`` over every column, each
    distinct row repeated as often as it occurs: the engine's own reading of
    the input, so the pages see what the release will see. A table has no
    order of its own, and none of the pages depends on one.

    Raises:
        InputError: the URL is not a PostgreSQL URL naming a table or a query,
            holds a password, cannot be reached or read, or has more than
            ``max_rows`` rows (one line each, the password never shown).
    """
    if not is_postgres_url(url):
        raise InputError(f"a database input is a URL: {URL_FORM}")
    location = PostgresLocation.parse(url)
    if urlsplit(url).password is not None:
        raise InputError(
            f"{redact(url)}: leave the password out of the URL, which the job file holds: "
            "set PGPASSWORD or use ~/.pgpass before starting kanonym serve"
        )
    engine = PostgresEngine(url)
    try:
        if not engine.columns:
            raise InputError(f"{location.shown}: has no columns")
        rows = engine.rows
        if rows > max_rows:
            raise InputError(
                f"{location.shown}: {rows:,} rows, more than the {max_rows:,} the workbench "
                "reads into its memory: write the job by hand and run kanonym anonymize "
                "--config JOB, where the rows stay in the database"
            )
        grouped = engine.group(list(engine.columns))
    finally:
        engine.close()
    repeated = np.repeat(np.arange(grouped.values.height), grouped.counts)
    return grouped.values.select(pl.all().gather(pl.Series(repeated)))


def release_name(url: str) -> str:
    """The stem of a database input's release files: its table's name, or ``query``.

    Example:
        >>> release_name("postgresql://ann@db/health?table=public.visits")
        'visits-anonymized'
        >>> release_name("postgresql://ann@db/health?query=SELECT 1")
        'query-anonymized'
    """
    table = PostgresLocation.parse(url).table
    stem = "query" if table is None else table[1]
    # A table's name may hold anything quoted identifiers allow; a file name may not.
    return (re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_") or "table") + "-anonymized"
