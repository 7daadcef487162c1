"""kanonym: verified k-anonymous releases of person-specific tables.

The public API, everything a script or notebook needs:

>>> import kanonym
>>> from kanonym.datasets import adult_hierarchies, load_adult
>>> result = kanonym.anonymize(load_adult(), quasi_identifiers=adult_hierarchies(), k=5,
...                            max_suppression=0.04, seed=1)  # doctest: +SKIP
>>> result.transformation, result.metrics["precision"]  # doctest: +SKIP
"""

from typing import TYPE_CHECKING

# Imported for its effect, before any kernel is defined: a writable numba cache.
from kanonym import _numba_cache  # noqa: F401
from kanonym._lazy import lazy_names
from kanonym._version import __version__
from kanonym.config import AnonymizationConfig, ReleaseJob, SuppressionLimit
from kanonym.errors import (
    HierarchyError,
    InputError,
    KanonymError,
    NoSolutionError,
    SearchTimeoutError,
    StaleTransformationError,
    VerificationError,
)
from kanonym.hierarchy import (
    DateBuilder,
    Hierarchy,
    HierarchyBuilder,
    IntervalBuilder,
    MaskBuilder,
    OrderBuilder,
    SuppressBuilder,
    load_arx,
)
from kanonym.models import (
    AverageReidentificationRisk,
    BasicBetaLikeness,
    DeltaDisclosurePrivacy,
    DeltaPresence,
    DifferentialPrivacy,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    KMap,
    OrderedDistanceTCloseness,
    PopulationUniqueness,
    PrivacyModel,
    RecursiveCLDiversity,
    SampleUniqueness,
    parse_model,
)
from kanonym.options import (
    AlgorithmName,
    EngineName,
    MetricName,
    PolicyName,
    TableLike,
    TechniqueName,
)
from kanonym.release import Result, Solution, anonymize, check, run_job
from kanonym.sweep import Exploration, SweepPoint, explore
from kanonym.verify import ClassSizeSummary

if TYPE_CHECKING:
    from kanonym.attacks.api import disclosure, link, qi_scan, risk
    from kanonym.attacks.attribute import DisclosureSummary
    from kanonym.attacks.complementary import AuditResult, audit
    from kanonym.attacks.linkage import LinkageSummary
    from kanonym.attacks.measures import RiskSummary
    from kanonym.attacks.scan import QiScan
    from kanonym.ledger import LedgerEntry, LedgerRelease
    from kanonym.release.apply import apply_transformation
    from kanonym.release.recorded import Ledger

# The attacks, the audit, the ledger and re-application are imported when first
# used (kanonym._lazy): most runs need none of them.
__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "disclosure": "kanonym.attacks.api",
        "link": "kanonym.attacks.api",
        "qi_scan": "kanonym.attacks.api",
        "risk": "kanonym.attacks.api",
        "DisclosureSummary": "kanonym.attacks.attribute",
        "AuditResult": "kanonym.attacks.complementary",
        "audit": "kanonym.attacks.complementary",
        "LinkageSummary": "kanonym.attacks.linkage",
        "RiskSummary": "kanonym.attacks.measures",
        "QiScan": "kanonym.attacks.scan",
        "apply_transformation": "kanonym.release.apply",
        "Ledger": "kanonym.release.recorded",
        "LedgerEntry": "kanonym.ledger",
        "LedgerRelease": "kanonym.ledger",
    },
)
del TYPE_CHECKING, lazy_names  # helpers, not part of the API

__all__ = [
    "AlgorithmName",
    "AnonymizationConfig",
    "AuditResult",
    "AverageReidentificationRisk",
    "BasicBetaLikeness",
    "ClassSizeSummary",
    "DateBuilder",
    "DeltaDisclosurePrivacy",
    "DeltaPresence",
    "DifferentialPrivacy",
    "DisclosureSummary",
    "DistinctLDiversity",
    "EngineName",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceTCloseness",
    "Exploration",
    "HierarchicalDistanceTCloseness",
    "Hierarchy",
    "HierarchyBuilder",
    "HierarchyError",
    "InputError",
    "IntervalBuilder",
    "KAnonymity",
    "KMap",
    "KanonymError",
    "Ledger",
    "LedgerEntry",
    "LedgerRelease",
    "LinkageSummary",
    "MaskBuilder",
    "MetricName",
    "NoSolutionError",
    "OrderBuilder",
    "OrderedDistanceTCloseness",
    "PolicyName",
    "PopulationUniqueness",
    "PrivacyModel",
    "QiScan",
    "RecursiveCLDiversity",
    "ReleaseJob",
    "Result",
    "RiskSummary",
    "SampleUniqueness",
    "SearchTimeoutError",
    "Solution",
    "StaleTransformationError",
    "SuppressBuilder",
    "SuppressionLimit",
    "SweepPoint",
    "TableLike",
    "TechniqueName",
    "VerificationError",
    "__version__",
    "anonymize",
    "apply_transformation",
    "audit",
    "check",
    "disclosure",
    "explore",
    "link",
    "load_arx",
    "parse_model",
    "qi_scan",
    "risk",
    "run_job",
]
