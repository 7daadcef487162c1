"""Releases made through a ledger: the pipeline run under the ledger's policies, then recorded.

:class:`Ledger` is the ledger file (:class:`kanonym.ledger.LedgerStore`) that
can also make releases: :meth:`Ledger.release` plans the release against the
earlier ones (:func:`kanonym.ledger.release_session`), runs the ordinary
pipeline on the planned job, and hands the verified result back to the ledger
to be checked against the earlier releases, written and recorded (Sweeney,
"k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002, section 4;
see :mod:`kanonym.ledger.policy`). :meth:`Ledger.plan` and :meth:`Ledger.record`
split that in two for a caller that has the result reviewed before it is
recorded (``kanonym serve``): the plan first, then the search, then the
very result reviewed is recorded, not a second search's.

Example (a release, then a second one of the same source whose seed is refused):
    >>> import tempfile
    >>> import polars as pl
    >>> from kanonym.config import AnonymizationConfig
    >>> folder = Path(tempfile.mkdtemp())
    >>> ledger = Ledger(folder / "ledger.sqlite")
    >>> table = pl.DataFrame({"zip": ["02138", "02139", "02141", "02142"],
    ...                       "disease": ["flu", "cold", "flu", "cold"]})
    >>> config = AnonymizationConfig(quasi_identifiers={"zip": "mask"}, k=2, seed=7,
    ...                              insensitive=("disease",))
    >>> first = ledger.release(table, config, output=folder / "r1.csv")
    >>> first.entry.id, list(first.entry.quasi_identifiers), first.entry.seed
    (1, ['zip'], 7)
    >>> ledger.release(table, config, output=folder / "r2.csv")
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: seed 7 was already used for this source by release 1; ...
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from kanonym.config import AnonymizationConfig
from kanonym.engine import EmbeddedEngine
from kanonym.engine.choose import default_engine, open_engine
from kanonym.engine.postgres import PostgresEngine, is_postgres_url
from kanonym.errors import InputError
from kanonym.io import load
from kanonym.io.paths import check_destinations
from kanonym.ledger import LedgerRelease, LedgerStore, release_session
from kanonym.ledger.policy import source_name
from kanonym.ledger.sources import SourceRows
from kanonym.ledger.storage import TableOutput
from kanonym.options import EngineName
from kanonym.release.pipeline import anonymize, anonymize_table
from kanonym.search import Progress

if TYPE_CHECKING:
    import pandas

    from kanonym.result import Result


class Ledger(LedgerStore):
    """A ledger that makes releases: :class:`~kanonym.ledger.LedgerStore` and :meth:`release`.

    ``path`` is an SQLite file, or ``postgresql://USER@HOST:PORT/DB?schema=NAME`` for a
    ledger in a PostgreSQL schema shared by every officer releasing from that server
    (:mod:`kanonym.ledger.postgres`).

    Raises:
        InputError: the path is a directory, cannot be opened, is not an SQLite
            database, is a database of another application, or has a ledger
            schema newer than this kanonym's; the server cannot be reached; or
            (``create=False``) no ledger is there.
    """

    def release(
        self,
        data: str | Path | pl.DataFrame | pandas.DataFrame,
        config: AnonymizationConfig,
        *,
        output: str | Path,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
        key: str | None = None,
        based_on: int | None = None,
        replay: int | None = None,
        delimiter: str | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        engine: EngineName | None = None,
        replace: bool = False,
    ) -> LedgerRelease:
        """Release ``data`` under ``config`` and the ledger's policies, write it, record it.

        Args:
            data: the source (a CSV or Parquet path, a DataFrame, or a
                ``postgresql://...?table=SCHEMA.T`` (or ``?query=``) URL, whose
                rows stay in the database).
            config: the job, as for :func:`kanonym.anonymize`.
            output, report: the release (a file, or for a database input
                ``postgresql://...?table=SCHEMA.R``: a new table of its database)
                and its report (which gains a ``ledger`` object).
            report_html: the HTML report (:mod:`kanonym.report.html`), written
                with the other files.
            key: column identifying records; recorded (hashed) per released
                record and never released. Needed by later ``based_on``
                releases; defaults to the key of ``based_on`` or ``replay``.
            based_on: an earlier release this one derives from (new rows added
                to its source): no complementary attributes; levels at least
                those of ``based_on``; every record published no more
                specifically than ``based_on`` did.
            replay: an earlier release of the same source to re-run with its
                seed; the release must come out identical to it.
            delimiter, on_progress, engine: as for :func:`kanonym.anonymize`.
            replace: whether a table output replaces an existing table.

        A database input is released by its engine where its rows are; the
        ledger reads of it only grouped counts (a key column's, a column's
        distinct values) and a fingerprint computed in the server, and of the
        release its rows (copied out once, to be checked against the earlier
        releases and kept in the ledger).

        Raises:
            InputError: a policy refuses the release (seed already used, replay
                that differs, unknown release, bad key), or any bad input.
            VerificationError: the release failed its re-check, or the temporal
                check. Nothing is written or recorded then.
        """
        started = time.perf_counter()
        table_output = is_postgres_url(output)
        check_destinations(
            {
                "output": None if table_output else output,
                "report": report,
                "report_html": report_html,
            },
            {
                "ledger": self.path,
                "input table": (
                    data if isinstance(data, str | Path) and not is_postgres_url(data) else None
                ),
            },
        )
        rows = _open(data, engine, delimiter)
        server = rows.engine if isinstance(rows.engine, PostgresEngine) else None
        try:
            if table_output:
                if server is None:
                    raise InputError(
                        f"{rows.source}: a table output is published by the PostgreSQL engine "
                        "of its database: release a postgresql:// input of that database"
                    )
                # Before the search: an existing table, another database, no permission.
                server.destination(str(output), replace=replace)
            fingerprint = rows.fingerprint()
            with release_session(
                self,
                rows,
                config,
                source=source_name(data),
                fingerprint=fingerprint,
                key=key,
                based_on=based_on,
                replay=replay,
            ) as session:
                read_seconds = time.perf_counter() - started
                if server is None:
                    assert isinstance(rows.engine, EmbeddedEngine)
                    result = anonymize_table(
                        rows.engine.table,
                        session.plan.config,
                        read_seconds=read_seconds,
                        on_progress=on_progress,
                    )
                    return session.record(
                        result, output=output, report=report, report_html=report_html
                    )
                # The release runs in a connection of its own (this one planned it, and may
                # count the sensitive columns again for a temporal release's re-check).
                result = anonymize(
                    data, session.plan.config, engine=engine, on_progress=on_progress
                )
                with result:
                    kept = result.released
                    written: str | Path | TableOutput = output
                    if table_output and not isinstance(kept, pl.DataFrame):
                        written = TableOutput(kept, str(output), replace)
                    return session.record(
                        result, output=written, report=report, report_html=report_html
                    )
        finally:
            if server is not None:
                server.close()

    def plan(
        self,
        data: str | Path | pl.DataFrame | pandas.DataFrame,
        config: AnonymizationConfig,
        *,
        delimiter: str | None = None,
    ) -> LedgerPlan:
        """Plan a release of ``data`` (a file or a data frame) under the ledger's policies,
        without searching, writing or recording anything.

        What :meth:`release` refuses before its search is refused now (a seed
        already used for this source, a spent privacy budget). Search
        ``plan.config`` (:func:`kanonym.anonymize`), review the result, then
        :meth:`record` it: what is recorded is the reviewed result, not a
        second search.

        Raises:
            InputError: a policy refuses the release; a ``postgresql://`` input
                (release it with :meth:`release`); an earlier release of this
                source was made with a record key (its releases drop the key
                column, so the result reviewed would not be the one recorded:
                release it with :meth:`release`).
        """
        if is_postgres_url(data):
            raise InputError(
                f"{source_name(data)}: Ledger.plan reads files and data frames; release a "
                "database table with Ledger.release"
            )
        rows = _open(data, "embedded", delimiter)
        fingerprint = rows.fingerprint()
        with release_session(
            self,
            rows,
            config,
            source=source_name(data),
            fingerprint=fingerprint,
            key=None,
            based_on=None,
            replay=None,
        ) as session:
            planned = session.plan
        if planned.key is not None:
            raise InputError(
                f"an earlier release of this source was made with the key column "
                f"'{planned.key}', which its releases drop: release it with Ledger.release"
            )
        if config.seed is None:
            # record plans it again: with the seed drawn now, it plans the same release.
            config = dataclasses.replace(config, seed=planned.config.seed)
        return LedgerPlan(asked=config, config=planned.config, fingerprint=fingerprint)

    def record(
        self,
        data: str | Path | pl.DataFrame | pandas.DataFrame,
        plan: LedgerPlan,
        result: Result,
        *,
        output: str | Path,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
        delimiter: str | None = None,
    ) -> LedgerRelease:
        """Check ``result``, searched on ``plan.config`` (:meth:`plan`), against the earlier
        releases, write it and record it, as :meth:`release` does, without searching again.

        Under the ledger's lock of the source the release is planned again, and
        refused unless the source's content and the plan are what they were
        when it was planned: a release of the source recorded since (this one
        filed twice, say) or a changed file means planning and running it again.

        Raises:
            InputError: the source or the plan changed, a destination is the
                ledger, the input or another destination, or a policy refuses.
            VerificationError: the linking with earlier releases failed.
                Nothing is written or recorded then.
        """
        check_destinations(
            {"output": output, "report": report, "report_html": report_html},
            {"ledger": self.path, "input table": data if isinstance(data, str | Path) else None},
        )
        rows = _open(data, "embedded", delimiter)
        fingerprint = rows.fingerprint()
        if fingerprint != plan.fingerprint:
            raise InputError(
                f"{rows.source}: its content changed since the release was planned: "
                "plan and run it again"
            )
        with release_session(
            self,
            rows,
            plan.asked,
            source=source_name(data),
            fingerprint=fingerprint,
            key=None,
            based_on=None,
            replay=None,
        ) as session:
            if session.plan.config != plan.config or session.plan.key is not None:
                raise InputError(
                    "the ledger plans this release differently now (a release of its source "
                    "was recorded since it was planned): plan and run it again"
                )
            return session.record(result, output=output, report=report, report_html=report_html)


@dataclass(frozen=True)
class LedgerPlan:
    """A release of a file or data frame planned against a ledger (:meth:`Ledger.plan`).

    Attributes:
        asked: the job as given (with the seed the plan drew, if it had none).
        config: the job as the ledger's policies turned it: the one to search.
        fingerprint: the source's content fingerprint when it was planned.
    """

    asked: AnonymizationConfig
    config: AnonymizationConfig
    fingerprint: str


def _open(
    data: str | Path | pl.DataFrame | pandas.DataFrame,
    engine: EngineName | None,
    delimiter: str | None,
) -> SourceRows:
    """The source as the ledger reads it: a file or data frame in memory, a PostgreSQL
    table or query where it lives (the engine ``engine`` names, or the input's form
    implies).

    Raises:
        InputError: another engine (the ledger does not record its releases yet).
    """
    chosen = engine or default_engine(data)
    if chosen == "embedded":
        return SourceRows(EmbeddedEngine(load(data, delimiter=delimiter)))
    if chosen != "postgres":
        raise InputError(
            f"`engine={chosen!r}`: the ledger records releases of files, data frames and "
            "PostgreSQL tables (postgresql:// URLs); release this input with anonymize (no "
            "ledger yet)"
        )
    opened = open_engine(data, chosen, delimiter=delimiter)
    assert isinstance(opened, PostgresEngine)  # what open_engine opens for 'postgres'
    return SourceRows(opened)
