"""Release step: the whole pipeline from table to verified, written release."""

from kanonym.release.apply import apply_transformation
from kanonym.release.audit import AuditResult, audit
from kanonym.release.ledger import Ledger, LedgerEntry, LedgerRelease
from kanonym.release.pipeline import Result, Solution, anonymize, check, run_job

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
