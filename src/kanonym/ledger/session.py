"""One release made against the ledger: planned under its policies, then checked and recorded.

:func:`release_session` takes the ledger's lock of the source, reads what
the ledger recorded of it and plans the release under the policies
(:func:`~kanonym.ledger.policy.plan_release`); the caller then runs the
search on :attr:`ReleasePlan.config <kanonym.ledger.policy.ReleasePlan.config>`
(:meth:`kanonym.Ledger.release` runs the pipeline) and hands the verified
result to :meth:`ReleaseSession.record`, which applies the temporal,
replay and linking checks and writes and records the release, all before the
lock is released. This module reads and writes through
:class:`~kanonym.ledger.storage.LedgerStore`; the decisions are the policy's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kanonym.config import AnonymizationConfig
from kanonym.io import Table
from kanonym.ledger.fingerprints import table_fingerprint
from kanonym.ledger.policy import (
    ReleasePlan,
    check_links,
    check_replay,
    check_temporal,
    earlier_hierarchies,
    earlier_keys,
    keep_published_generality,
    keyed_before,
    lookup,
    plan_release,
    published_per_record,
    releases_of_source,
    require_unique_keys,
    without_key,
)
from kanonym.ledger.records import LedgerEntry, LedgerRelease
from kanonym.ledger.storage import LedgerStore
from kanonym.models import required_k

if TYPE_CHECKING:
    import polars as pl

    from kanonym.result import Result


@dataclass(frozen=True, kw_only=True, eq=False)
class ReleaseSession:
    """A release planned against the ledger, waiting for its search.

    Attributes:
        store: the ledger.
        table: the source, loaded.
        source: its name (:func:`~kanonym.ledger.policy.source_name`).
        fingerprint: its :func:`~kanonym.ledger.fingerprints.table_fingerprint`.
        plan: the job as the policies turned it.
        same: the recorded releases of the same source.
        key_hashes: each record key with its keyed hash, or None without a key.
    """

    store: LedgerStore
    table: Table
    source: str
    fingerprint: str
    plan: ReleasePlan
    same: tuple[LedgerEntry, ...]
    key_hashes: pl.DataFrame | None

    def record(
        self,
        result: Result,
        *,
        output: str | Path,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
    ) -> LedgerRelease:
        """Check the verified ``result`` against the earlier releases, write it and record it.

        Raises:
            InputError: a replay that does not reproduce its original.
            VerificationError: the temporal check or the linking with earlier
                releases failed. Nothing is written or recorded then.
        """
        plan, hashed = self.plan, self.key_hashes
        published = None
        previous = None  # what plan.base published per record, read once
        kept_cells = 0
        if plan.key is not None and hashed is not None:
            if plan.base is not None:
                previous = self.store.published(plan.base.id)
                result, kept_cells = keep_published_generality(
                    result, plan.key, hashed, previous, plan.base, self.table.frame
                )
            published = published_per_record(
                result.table, plan.key, hashed, list(result.hierarchies)
            )
            # The key leaves the release here; the report lists it as identifying.
            result = without_key(result, plan.key)
        release_sha256 = table_fingerprint(result.table)
        check_replay(plan.replayed, release_sha256)
        if plan.base is not None and published is not None and previous is not None:
            check_temporal(published, previous, plan.base, result.hierarchies)
        check_links(
            result.table,
            result.hierarchies,
            required_k(result.models),
            self.same,
            plan.complementary,
            released={e.id: self.store.release_table(e.id) for e in self.same},
            stored={e.id: self.store.release_hierarchies(e.id) for e in self.same},
        )
        return self.store.write_and_record(
            plan,
            result,
            published,
            output=Path(output),
            report=None if report is None else Path(report),
            report_html=None if report_html is None else Path(report_html),
            kept_cells=kept_cells,
            source=self.source,
            fingerprint=self.fingerprint,
            release_sha256=release_sha256,
            key_hashes=hashed,
        )


@contextlib.contextmanager
def release_session(
    store: LedgerStore,
    table: Table,
    config: AnonymizationConfig,
    *,
    source: str,
    fingerprint: str,
    key: str | None,
    based_on: int | None,
    replay: int | None,
) -> Iterator[ReleaseSession]:
    """Hold the source's lock and plan the release against the releases recorded of it.

    Releases of one source wait for each other, so that each is planned
    against every earlier one (seed, complementary and temporal policies);
    releases of other sources go ahead side by side. ``key`` defaults to the
    key of ``based_on`` or ``replay``, else to a key column an earlier
    release of this source was made with.

    Raises:
        InputError: a policy refuses the release (seed already used, unknown
            release, bad key).
    """
    with store.source_lock((source, fingerprint)):
        entries = store.entries()
        by_id = {entry.id: entry for entry in entries}
        replayed = None if replay is None else lookup(by_id, replay, "replay")
        base = None if based_on is None else lookup(by_id, based_on, "based_on")
        key = key or (base.key if base else None) or (replayed.key if replayed else None)
        columns = table.frame.columns
        hashed: pl.DataFrame | None = None
        sharing: set[int] = set()
        if key is not None and key in columns:
            # Hashing the keys creates a new ledger (for its secret): a table
            # the key policy refuses must not create one.
            fresh = not store.path.exists()
            if fresh and key not in config.hierarchies and key not in config.sensitive:
                require_unique_keys(table, key)
            hashed, sharing = store.record_keys(table.frame.get_column(key))
        elif key is None:
            # A key column an earlier release of this source (same file or
            # content, or sharing record keys) was made with stays a key: it is
            # never released, even when this run does not name it.
            for column in earlier_keys(entries, columns):
                candidate, shared = store.record_keys(table.frame.get_column(column))
                if keyed_before(entries, column, shared, source, fingerprint):
                    key, hashed, sharing = column, candidate, shared
                    break
        same = releases_of_source(entries, sharing, source, fingerprint)
        stored = {e.id: store.release_hierarchies(e.id) for e in same}
        plan = plan_release(
            table,
            config,
            same=same,
            key=key,
            base=base,
            replayed=replayed,
            last_id=max((e.id for e in entries), default=0),
            earlier_hierarchies=earlier_hierarchies(table.frame, same, stored),
        )
        yield ReleaseSession(
            store=store,
            table=table,
            source=source,
            fingerprint=fingerprint,
            plan=plan,
            same=tuple(same),
            key_hashes=hashed,
        )
