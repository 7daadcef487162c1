"""The release ledger: every release of a source table, recorded, and the policies it enables.

Sweeney ("k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002,
section 4) shows attacks on k-anonymous releases that no single release can
prevent, only a record of what was released before: unsorted matching,
complementary release and temporal attacks. The ledger keeps that record and
plans each new release against it:

* :mod:`~kanonym.ledger.records`: what is recorded of a release
  (:class:`LedgerEntry`, :class:`HierarchyRecord`), as plain values;
* :mod:`~kanonym.ledger.fingerprints`: fingerprints of tables, released rows,
  hierarchies, and keyed hashes of record keys;
* :mod:`~kanonym.ledger.policy`: the policies (seed, key, complementary,
  temporal, linking, which releases spend a privacy budget), pure functions
  over records and tables;
* :mod:`~kanonym.ledger.budget`: differential-privacy budgets: what a release
  charges its source (:class:`PrivacyCharge`), what is left
  (:class:`BudgetStatus`);
* :mod:`~kanonym.ledger.sources`: what the policies read of a source, in
  memory or where its rows live (a PostgreSQL table);
* :mod:`~kanonym.ledger.storage`: what is recorded in which transaction, and
  recovery (:class:`LedgerStore`), in a store of
  :mod:`~kanonym.ledger.database`'s interface: an SQLite file
  (:mod:`~kanonym.ledger.sqlite`) or a PostgreSQL schema
  (:mod:`~kanonym.ledger.postgres`);
* :mod:`~kanonym.ledger.session`: one release planned, checked and recorded.

The release step runs the search in between: :class:`kanonym.Ledger`
(:mod:`kanonym.release.recorded`) is a :class:`LedgerStore` that makes
releases. This package imports the attacks (the linking of releases is
:mod:`kanonym.attacks.complementary`) but never the release step.
"""

from kanonym.ledger.budget import BudgetStatus, PrivacyCharge, privacy_charge
from kanonym.ledger.fingerprints import row_fingerprints, table_fingerprint
from kanonym.ledger.policy import ReleasePlan, link_releases
from kanonym.ledger.records import HierarchyRecord, LedgerEntry, LedgerRelease
from kanonym.ledger.session import ReleaseSession, release_session
from kanonym.ledger.storage import LEDGER_SCHEMA_VERSION, LedgerStore

__all__ = [
    "LEDGER_SCHEMA_VERSION",
    "BudgetStatus",
    "HierarchyRecord",
    "LedgerEntry",
    "LedgerRelease",
    "LedgerStore",
    "PrivacyCharge",
    "ReleasePlan",
    "ReleaseSession",
    "link_releases",
    "privacy_charge",
    "release_session",
    "row_fingerprints",
    "table_fingerprint",
]
