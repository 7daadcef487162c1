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
  sensitive attributes (``kanonym disclosure``).

The functions in :mod:`~kanonym.attacks.api` read the tables and are re-exported
as ``kanonym.risk``, ``kanonym.qi_scan``, ``kanonym.link`` and
``kanonym.disclosure``. This package works on tables as they are: it shares no
code with ``search`` or ``lattice``.
"""

from kanonym.attacks.api import disclosure, link, qi_scan, risk
from kanonym.attacks.attribute import AttributeDisclosure, DisclosureSummary, FlaggedClass
from kanonym.attacks.linkage import LinkageSummary
from kanonym.attacks.measures import AttackerRisk, RiskSummary
from kanonym.attacks.population import PopulationEstimate, PopulationEstimates
from kanonym.attacks.scan import Combination, QiScan

__all__ = [
    "AttackerRisk",
    "AttributeDisclosure",
    "Combination",
    "DisclosureSummary",
    "FlaggedClass",
    "LinkageSummary",
    "PopulationEstimate",
    "PopulationEstimates",
    "QiScan",
    "RiskSummary",
    "disclosure",
    "link",
    "qi_scan",
    "risk",
]
