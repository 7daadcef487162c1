"""One point of a sweep over k and suppression limits, and its prosecutor risk.

A point is the optimal release for one k and one suppression limit: its
transformation, its utility loss and the re-identification risk of the rows
it releases. Write f_j for the rows of released class j, J for the released
classes and n for the released rows. The *prosecutor* knows the target is in
the release; the record risk of a row of class j is 1/f_j (El Emam & Dankar
2008, "Protecting privacy using k-anonymity", JAMIA 15(5)), so

* highest prosecutor risk = 1 / min_j f_j (at most 1/k in a k-anonymous release);
* average prosecutor risk = Σ_j f_j (1/f_j) / n = J / n, the expected share of
  released rows re-identified (El Emam & Dankar 2008; ARX's risk analysis,
  Prasser & Kohlmayer 2015);
* records at risk = rows whose record risk is strictly above a threshold (ARX's
  "records at risk"; :data:`kanonym.attacks.defaults.DEFAULT_THRESHOLD`, 0.2, is
  the risk of a class of five).

These are the measures of ``kanonym risk``, computed by
:func:`kanonym.attacks.measures.prosecutor_risk` from the class sizes the
search already has, not from a table; all 0 when nothing is released.

Example:
    >>> percent(0.05)
    '5%'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class SweepPoint:
    """The optimal release for one k and one suppression limit.

    Attributes:
        k: every released class holds at least k rows.
        max_suppression: the suppression limit, a share of the rows (ARX's).
        max_suppressed_rows: that limit in rows of the table (MaxSup).
        solution: whether some transformation satisfies the privacy models
            within the limit (when not, every measure below is None).
        transformation: the chosen level of each quasi-identifier.
        metric: the utility metric the search minimized.
        score: its value for the transformation, as minimized (lower is
            better; for ``precision``, 1 - precision).
        equivalence_classes: classes released.
        suppressed_rows, released_rows: rows removed and rows released.
        highest_risk: highest prosecutor risk, 1 / the smallest released class.
        average_risk: average prosecutor risk, classes / released rows.
        records_at_risk: released rows whose prosecutor risk is above the
            sweep's threshold.
        proven_optimal: False when the search stopped at its time limit.
        nodes_checked: lattice nodes the search computed.
        on_frontier: whether no other point has both a score and an average
            risk no higher, one of them lower (:mod:`kanonym.sweep.frontier`).
    """

    k: int
    max_suppression: float
    max_suppressed_rows: int
    solution: bool
    transformation: Mapping[str, int] | None = None
    metric: str
    score: float | None = None
    equivalence_classes: int | None = None
    suppressed_rows: int | None = None
    released_rows: int | None = None
    highest_risk: float | None = None
    average_risk: float | None = None
    records_at_risk: int | None = None
    proven_optimal: bool = True
    nodes_checked: int = 0
    on_frontier: bool = False

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (a point of ``kanonym explore --json``).

        Example:
            >>> SweepPoint(k=2, max_suppression=0.0, max_suppressed_rows=0, solution=False,
            ...            metric="loss").as_dict()["transformation"] is None
            True
        """
        return {
            "k": self.k,
            "max_suppression": self.max_suppression,
            "max_suppressed_rows": self.max_suppressed_rows,
            "solution": self.solution,
            "transformation": None if self.transformation is None else dict(self.transformation),
            "metric": self.metric,
            "score": self.score,
            "equivalence_classes": self.equivalence_classes,
            "suppressed_rows": self.suppressed_rows,
            "released_rows": self.released_rows,
            "highest_risk": self.highest_risk,
            "average_risk": self.average_risk,
            "records_at_risk": self.records_at_risk,
            "proven_optimal": self.proven_optimal,
            "nodes_checked": self.nodes_checked,
            "on_frontier": self.on_frontier,
        }

    @property
    def label(self) -> str:
        """``k=5, 2%``: the point as tables and figures name it.

        Example:
            >>> SweepPoint(k=5, max_suppression=0.02, max_suppressed_rows=3, solution=False,
            ...            metric="loss").label
            'k=5, 2%'
        """
        return f"k={self.k}, {percent(self.max_suppression)}"


def percent(share: float) -> str:
    """A share as a short percentage.

    Example:
        >>> percent(0.02), percent(0.0), percent(0.125)
        ('2%', '0%', '12.5%')
    """
    return f"{share * 100:.4g}%"
