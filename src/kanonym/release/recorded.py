"""Releases made through a ledger: the pipeline run under the ledger's policies, then recorded.

:class:`Ledger` is the ledger file (:class:`kanonym.ledger.LedgerStore`) that
can also make releases: :meth:`Ledger.release` plans the release against the
earlier ones (:func:`kanonym.ledger.release_session`), runs the ordinary
pipeline on the planned job, and hands the verified result back to the ledger
to be checked against the earlier releases, written and recorded (Sweeney,
"k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002, section 4;
see :mod:`kanonym.ledger.policy`).

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

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kanonym.config import AnonymizationConfig
from kanonym.io import load
from kanonym.io.paths import check_destinations
from kanonym.ledger import LedgerRelease, LedgerStore, release_session, table_fingerprint
from kanonym.ledger.policy import source_name
from kanonym.release.pipeline import anonymize_table
from kanonym.search import Progress

if TYPE_CHECKING:
    import pandas
    import polars as pl


class Ledger(LedgerStore):
    """A ledger file that makes releases: :class:`~kanonym.ledger.LedgerStore` and :meth:`release`.

    Raises:
        InputError: the path is a directory, cannot be opened, is not an SQLite
            database, is a database of another application, or has a ledger
            schema newer than this kanonym's; or (``create=False``) does not exist.
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
    ) -> LedgerRelease:
        """Release ``data`` under ``config`` and the ledger's policies, write it, record it.

        Args:
            data: the source (a CSV or Parquet path, or a DataFrame).
            config: the job, as for :func:`kanonym.anonymize`.
            output, report: the release file and its report (which gains a
                ``ledger`` object).
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
            delimiter, on_progress: as for :func:`kanonym.anonymize`.

        Raises:
            InputError: a policy refuses the release (seed already used, replay
                that differs, unknown release, bad key), or any bad input.
            VerificationError: the release failed its re-check, or the temporal
                check. Nothing is written or recorded then.
        """
        started = time.perf_counter()
        check_destinations(
            {"output": output, "report": report, "report_html": report_html},
            {"ledger": self.path, "input table": data if isinstance(data, str | Path) else None},
        )
        table = load(data, delimiter=delimiter)
        source = source_name(data)
        fingerprint = table_fingerprint(table.frame)
        read_seconds = time.perf_counter() - started
        with release_session(
            self,
            table,
            config,
            source=source,
            fingerprint=fingerprint,
            key=key,
            based_on=based_on,
            replay=replay,
        ) as session:
            result = anonymize_table(
                table, session.plan.config, read_seconds=read_seconds, on_progress=on_progress
            )
            return session.record(result, output=output, report=report, report_html=report_html)
