"""kanonym: verified k-anonymous releases of person-specific tables.

The public API, everything a script or notebook needs:

>>> import kanonym
>>> from kanonym.datasets import adult_hierarchies, load_adult
>>> result = kanonym.anonymize(load_adult(), quasi_identifiers=adult_hierarchies(), k=5,
...                            max_suppression=0.04, seed=1)  # doctest: +SKIP
>>> result.transformation, result.metrics["precision"]  # doctest: +SKIP
"""

from kanonym._version import __version__
from kanonym.attacks import (
    DisclosureSummary,
    LinkageSummary,
    QiScan,
    RiskSummary,
    disclosure,
    link,
    qi_scan,
    risk,
)
from kanonym.config import AnonymizationConfig, ReleaseJob, SuppressionLimit
from kanonym.errors import (
    HierarchyError,
    InputError,
    KanonymError,
    StaleTransformationError,
    VerificationError,
)
from kanonym.hierarchy import (
    DateBuilder,
    Hierarchy,
    HierarchyBuilder,
    IntervalBuilder,
    MaskBuilder,
    SuppressBuilder,
    load_arx,
)
from kanonym.models import KAnonymity, PrivacyModel
from kanonym.release import (
    AuditResult,
    Ledger,
    LedgerEntry,
    LedgerRelease,
    Result,
    Solution,
    anonymize,
    apply_transformation,
    audit,
    check,
    run_job,
)
from kanonym.verify import ClassSizeSummary

__all__ = [
    "AnonymizationConfig",
    "AuditResult",
    "ClassSizeSummary",
    "DateBuilder",
    "DisclosureSummary",
    "Hierarchy",
    "HierarchyBuilder",
    "HierarchyError",
    "InputError",
    "IntervalBuilder",
    "KAnonymity",
    "KanonymError",
    "Ledger",
    "LedgerEntry",
    "LedgerRelease",
    "LinkageSummary",
    "MaskBuilder",
    "PrivacyModel",
    "QiScan",
    "ReleaseJob",
    "Result",
    "RiskSummary",
    "Solution",
    "StaleTransformationError",
    "SuppressBuilder",
    "SuppressionLimit",
    "VerificationError",
    "__version__",
    "anonymize",
    "apply_transformation",
    "audit",
    "check",
    "disclosure",
    "link",
    "load_arx",
    "qi_scan",
    "risk",
    "run_job",
]
