"""What the ledger records of each release: plain, checked values, free of any storage.

A :class:`LedgerEntry` is one row of the ledger's ``releases`` table as a
value; the policies (:mod:`kanonym.ledger.policy`) read and build entries,
the storage (:mod:`kanonym.ledger.storage`) reads and writes them.

Example:
    >>> record = HierarchyRecord(source="mask", height=5, sha256="0" * 64)
    >>> entry = LedgerEntry(
    ...     id=1, created="2025-01-01T00:00:00+00:00", kanonym_version="1.0.0",
    ...     source="patients.csv", source_sha256="1" * 64, source_rows=4,
    ...     quasi_identifiers={"zip": record},
    ...     models=({"model": "k-anonymity", "k": 2},), transformation={"zip": 1},
    ...     recoding=None, seed=7, released_columns=("zip", "disease"), released_rows=4,
    ...     release_sha256="2" * 64, key=None, based_on=None, replay_of=None,
    ...     complementary=(), output="r1.csv", report=None)
    >>> entry.k, entry.as_dict()["quasi_identifiers"]["zip"]["source"]
    (2, 'mask')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kanonym.errors import InputError
from kanonym.ledger.budget import PrivacyCharge

if TYPE_CHECKING:
    from kanonym.result import Result


@dataclass(frozen=True, kw_only=True)
class HierarchyRecord:
    """How a release generalized one quasi-identifier.

    Attributes:
        source: the hierarchy's spec or ARX file, as given.
        height: its height on the release's source.
        sha256: SHA-256 of the resolved hierarchy in ARX format (so a rebuilt or
            edited hierarchy can be told apart).
    """

    source: str
    height: int
    sha256: str

    def __post_init__(self) -> None:
        if self.height < 0 or len(self.sha256) != 64:
            raise InputError(f"hierarchy record of {self.source}: bad height or fingerprint")


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One recorded release.

    Attributes:
        id: the release's number in its ledger (1, 2, ...).
        created: UTC time of recording, ISO 8601.
        source: the source file (absolute), or ``<DataFrame>``.
        source_sha256: :func:`~kanonym.ledger.fingerprints.table_fingerprint`
            of the source.
        quasi_identifiers: each quasi-identifier the release was made with
            (complementary attributes included) -> its :class:`HierarchyRecord`,
            in the release's order.
        models: every privacy model checked, as in the report.
        transformation: quasi-identifier -> level, or None for a local
            recoding.
        recoding: the report's ``recoding`` object of a local recoding
            (Mondrian), or None for a full-domain generalization.
        seed: seed of the row shuffle.
        released_columns: the columns of the release, in order.
        key: the key column identifying records (never released), or None.
        based_on: the release this one derives from (temporal), or None.
        replay_of: the release this one re-runs, or None.
        complementary: the attributes of earlier releases added to the
            quasi-identifier.
        charge: what the release charged its source's privacy budget (a
            differentially private release, :mod:`kanonym.ledger.budget`), or None.
    """

    id: int
    created: str
    kanonym_version: str
    source: str
    source_sha256: str
    source_rows: int
    quasi_identifiers: Mapping[str, HierarchyRecord]
    models: tuple[Mapping[str, object], ...]
    transformation: Mapping[str, int] | None
    recoding: Mapping[str, object] | None
    seed: int
    released_columns: tuple[str, ...]
    released_rows: int
    release_sha256: str
    key: str | None
    based_on: int | None
    replay_of: int | None
    complementary: tuple[str, ...]
    output: str
    report: str | None
    charge: PrivacyCharge | None = None

    def __post_init__(self) -> None:
        where = f"release {self.id}"
        if (self.transformation is None) == (self.recoding is None):
            raise InputError(f"{where}: needs either levels or a local recoding, not both")
        if self.transformation is not None and set(self.transformation) != set(
            self.quasi_identifiers
        ):
            raise InputError(f"{where}: levels must cover its quasi-identifiers")
        if self.key is not None and self.key in self.released_columns:
            raise InputError(f"{where}: key column '{self.key}' cannot be a released column")
        for what, other in (("based_on", self.based_on), ("replay_of", self.replay_of)):
            if other is not None and not 1 <= other < self.id:
                raise InputError(f"{where}: {what} {other} must name an earlier release")
        if not set(self.complementary) <= set(self.quasi_identifiers):
            raise InputError(f"{where}: complementary attributes must be quasi-identifiers")

    @property
    def k(self) -> int:
        """The largest k the release was made with (1 if none)."""
        ks = [
            int(str(model["k"]))
            for model in self.models
            if model.get("model") == "k-anonymity" and "k" in model
        ]
        return max(ks, default=1)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        document = dataclasses.asdict(self)
        document["quasi_identifiers"] = {
            name: dataclasses.asdict(record) for name, record in self.quasi_identifiers.items()
        }
        return document


@dataclass(frozen=True, kw_only=True, eq=False)
class LedgerRelease:
    """A release made through the ledger: its record and the verified result."""

    entry: LedgerEntry
    result: Result
