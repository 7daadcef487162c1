"""One release made against the ledger: planned under its policies, then checked and recorded.

:func:`release_session` takes the ledger's lock of the source, reads what
the ledger recorded of it and plans the release under the policies
(:func:`~kanonym.ledger.policy.plan_release`); the caller then runs the
search on :attr:`ReleasePlan.config <kanonym.ledger.policy.ReleasePlan.config>`
(:meth:`kanonym.Ledger.release` runs the pipeline) and hands the verified
result to :meth:`ReleaseSession.record`, which applies the temporal,
replay and linking checks and writes and records the release, all before the
lock is released. A differentially private release is checked against its
source's privacy budget first, before the search runs
(:meth:`~kanonym.ledger.storage.LedgerStore.check_budget`; checked again when
it is recorded). This module reads and writes through
:class:`~kanonym.ledger.storage.LedgerStore`; the decisions are the policy's.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from kanonym.config import AnonymizationConfig
from kanonym.errors import InputError
from kanonym.ledger.budget import charge_of
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
from kanonym.ledger.sources import SourceRows
from kanonym.ledger.storage import LedgerStore, TableOutput
from kanonym.models import required_k

if TYPE_CHECKING:
    from kanonym.result import Result


@dataclass(frozen=True, kw_only=True, eq=False)
class ReleaseSession:
    """A release planned against the ledger, waiting for its search.

    Attributes:
        store: the ledger.
        table: the source, as the ledger reads it (in memory, or where its rows live).
        source: its name (:func:`~kanonym.ledger.policy.source_name`).
        fingerprint: its :func:`~kanonym.ledger.fingerprints.table_fingerprint`.
        plan: the job as the policies turned it.
        same: the recorded releases of the same source.
        key_hashes: each record key with its keyed hash, or None without a key.
    """

    store: LedgerStore
    table: SourceRows
    source: str
    fingerprint: str
    plan: ReleasePlan
    same: tuple[LedgerEntry, ...]
    key_hashes: pl.DataFrame | None

    def record(
        self,
        result: Result,
        *,
        output: str | Path | TableOutput,
        report: str | Path | None = None,
        report_html: str | Path | None = None,
    ) -> LedgerRelease:
        """Check the verified ``result`` against the earlier releases, write it and record it.

        ``output`` is a file, or a :class:`~kanonym.ledger.storage.TableOutput`: a
        table of the database where a PostgreSQL engine keeps ``result``. The
        ledger's checks read the release in memory (copied out of the database
        once: its rows are fingerprinted, linked with the earlier releases and
        kept in the ledger); a table output is then published where it is.

        Raises:
            InputError: a replay that does not reproduce its original; a table
                output that would need cells kept from ``based_on`` (the table is
                published where its rows are, as the engine built it).
            VerificationError: the temporal check or the linking with earlier
                releases failed. Nothing is written or recorded then.
        """
        plan, hashed = self.plan, self.key_hashes
        table = output if isinstance(output, TableOutput) else None
        if not isinstance(result.released, pl.DataFrame):
            # Copied out once; a table output holds the engine's release until published.
            result = dataclasses.replace(result, released=result.table)
        published = None
        previous = None  # what plan.base published per record, read once
        kept_cells = 0
        if plan.key is not None and hashed is not None:
            if plan.base is not None:
                previous = self.store.published(plan.base.id)
                result, kept_cells = keep_published_generality(
                    result, plan.key, hashed, previous, plan.base, self.table
                )
                if kept_cells and table is not None:
                    raise InputError(
                        f"`based_on={plan.base.id}`: {kept_cells} cell(s) keep what release "
                        f"{plan.base.id} published, which a table output cannot hold yet (it "
                        "is published as the engine built it); write this release to a file"
                    )
            published = published_per_record(
                result.table, plan.key, hashed, list(result.hierarchies)
            )
            # The key leaves the release here; the report lists it as identifying.
            result = without_key(result, plan.key)
            if table is not None:
                table = table.without(plan.key)
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
            output=table if table is not None else Path(str(output)),
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
    table: SourceRows,
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
            release, bad key), or it is differentially private and no privacy
            budget is set for its source.
        BudgetExceededError: its charge exceeds what is left of a budget it spends.
    """
    with store.source_lock((source, fingerprint)):
        charge = charge_of(config.models)
        if charge is not None:
            # Before the search and before anything touches the ledger: a release its
            # budget cannot admit is refused now rather than after the long work.
            store.check_budget(source, fingerprint, charge)
        entries = store.entries()
        by_id = {entry.id: entry for entry in entries}
        replayed = None if replay is None else lookup(by_id, replay, "replay")
        base = None if based_on is None else lookup(by_id, based_on, "based_on")
        key = key or (base.key if base else None) or (replayed.key if replayed else None)
        columns = table.columns
        hashed: pl.DataFrame | None = None
        sharing: set[int] = set()
        if key is not None and key in columns:
            # Hashing the keys creates a new ledger (for its secret): a table
            # the key policy refuses must not create one.
            fresh = not store.database.exists()
            if fresh and key not in config.hierarchies and key not in config.sensitive:
                require_unique_keys(table, key)
            hashed, sharing = store.record_keys(table.counted([key]).get_column(key))
        elif key is None:
            # A key column an earlier release of this source (same file or
            # content, or sharing record keys) was made with stays a key: it is
            # never released, even when this run does not name it.
            for column in earlier_keys(entries, columns):
                candidate, shared = store.record_keys(table.counted([column]).get_column(column))
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
            earlier_hierarchies=earlier_hierarchies(table, same, stored),
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
