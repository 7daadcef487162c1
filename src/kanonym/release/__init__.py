"""Release step: the whole pipeline from table to verified, written release."""

from typing import TYPE_CHECKING

from kanonym._lazy import lazy_names

# ``audit`` is also a submodule's name, so it cannot load lazily (kanonym._lazy).
from kanonym.release.audit import AuditResult, audit
from kanonym.release.pipeline import anonymize, check, run_job
from kanonym.result import Result, Solution

if TYPE_CHECKING:
    from kanonym.release.apply import apply_transformation
    from kanonym.release.ledger import Ledger, LedgerEntry, LedgerRelease

# Re-application and the ledger load on first use (kanonym._lazy).
__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "apply_transformation": "kanonym.release.apply",
        "Ledger": "kanonym.release.ledger",
        "LedgerEntry": "kanonym.release.ledger",
        "LedgerRelease": "kanonym.release.ledger",
    },
)

__all__ = [
    "AuditResult",
    "Ledger",
    "LedgerEntry",
    "LedgerRelease",
    "Result",
    "Solution",
    "anonymize",
    "apply_transformation",
    "audit",
    "check",
    "run_job",
]
