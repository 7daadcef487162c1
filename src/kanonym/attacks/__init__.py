"""Attacks on a table and the risks they measure: what a release gives away.

* :mod:`~kanonym.attacks.measures`: re-identification risk under the
  prosecutor, journalist and marketer attacker models, sample uniqueness and
  class sizes (``kanonym risk``), with
  :mod:`~kanonym.attacks.population`'s population uniqueness estimate;
* :mod:`~kanonym.attacks.scan`: which column combinations single out records
  (``kanonym qi-scan``);
* :mod:`~kanonym.attacks.linkage`: the linking attack of an identified table
  against a release (``kanonym link``);
* :mod:`~kanonym.attacks.attribute`: homogeneous and dominated classes of
  sensitive attributes (``kanonym disclosure``);
* :mod:`~kanonym.attacks.complementary`: the complementary release attack,
  several releases of one table linked and checked for k (``kanonym audit``;
  the ledger links each new release with the earlier ones this way).

The functions in :mod:`~kanonym.attacks.api` read the tables and are re-exported
as ``kanonym.risk``, ``kanonym.qi_scan``, ``kanonym.link`` and
``kanonym.disclosure``, as is :func:`~kanonym.attacks.complementary.audit` as
``kanonym.audit``. This package works on tables as they are: it shares no code
with ``search`` or ``lattice``, and imports neither the release step nor the
ledger.
"""

from typing import TYPE_CHECKING

from kanonym._lazy import lazy_names

if TYPE_CHECKING:
    from kanonym.attacks.api import disclosure, link, qi_scan, risk
    from kanonym.attacks.attribute import AttributeDisclosure, DisclosureSummary, FlaggedClass
    from kanonym.attacks.complementary import AuditResult, audit
    from kanonym.attacks.linkage import LinkageSummary
    from kanonym.attacks.measures import AttackerRisk, RiskSummary
    from kanonym.attacks.population import PopulationEstimate, PopulationEstimates
    from kanonym.attacks.scan import Combination, QiScan

# Each attack loads when first used (kanonym._lazy); the command line reads
# only kanonym.attacks.defaults to build its options.
__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "disclosure": "kanonym.attacks.api",
        "link": "kanonym.attacks.api",
        "qi_scan": "kanonym.attacks.api",
        "risk": "kanonym.attacks.api",
        "AttributeDisclosure": "kanonym.attacks.attribute",
        "DisclosureSummary": "kanonym.attacks.attribute",
        "FlaggedClass": "kanonym.attacks.attribute",
        "AuditResult": "kanonym.attacks.complementary",
        "audit": "kanonym.attacks.complementary",
        "LinkageSummary": "kanonym.attacks.linkage",
        "AttackerRisk": "kanonym.attacks.measures",
        "RiskSummary": "kanonym.attacks.measures",
        "PopulationEstimate": "kanonym.attacks.population",
        "PopulationEstimates": "kanonym.attacks.population",
        "Combination": "kanonym.attacks.scan",
        "QiScan": "kanonym.attacks.scan",
    },
)

__all__ = [
    "AttackerRisk",
    "AttributeDisclosure",
    "AuditResult",
    "Combination",
    "DisclosureSummary",
    "FlaggedClass",
    "LinkageSummary",
    "PopulationEstimate",
    "PopulationEstimates",
    "QiScan",
    "RiskSummary",
    "audit",
    "disclosure",
    "link",
    "qi_scan",
    "risk",
]
