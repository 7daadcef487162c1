"""Average re-identification risk at most r (El Emam 2013; ARX's ``AverageReidentificationRisk``).

An attacker who links a released record to a person picks one of the records
sharing its quasi-identifier values: a record in a class of size |E| is
re-identified with probability 1/|E|. The average over the released records
is ``(number of classes) / (number of records)`` (K. El Emam, "Guide to the
De-Identification of Personal Health Information", CRC Press 2013, the
*prosecutor* risk averaged over records). The release meets the threshold r
when that average is at most r. Optionally, as in ARX's three-parameter form,
a highest risk h also bounds the share of records *at risk*, those in classes
of size |E| with 1/|E| > h: at most a fraction F of the released records.
(ARX lets the highest risk be exceeded by up to 1 %; here it is exact: the
classes at risk are those smaller than ceil(1/h).)

This is not a class-by-class predicate: it is enforced like ARX does
(:class:`~kanonym.models.base.SampleModel`), suppressing the smallest kept
classes until it holds. Removing a class no larger than the average of those
left never raises the average risk, and generalizing only merges classes, so
the least suppression it needs never grows with generalization: monotone with
and without suppression (ARX declares the same). With a highest risk it is
monotone without suppression only (ARX declares it monotone with suppression
too, wrongly): merging two singletons into a class of 2 still at risk can
double the rows that must go (classes 1, 1, 4 with h = 0.25 and F = 0.2 need
one row suppressed, classes 2, 4 two).

Example (classes of 1, 1, 2 and 4 rows: 4 classes over 8 rows, risk 0.5;
suppressing the two singletons leaves 2 classes over 6 rows):
    >>> import numpy as np
    >>> model = AverageReidentificationRisk(average_risk=0.4)
    >>> sizes = np.array([1, 1, 2, 4])
    >>> model.measure(sizes, rows=8), model.classes_to_suppress(sizes, rows=8, budget=8)
    (0.5, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.models._sensitive import real_number
from kanonym.models._smallest_first import smallest_first
from kanonym.models.base import ClassStatistics


@dataclass(frozen=True, kw_only=True)
class AverageReidentificationRisk:
    """Classes over records of the release at most ``average_risk``; optionally at most
    ``records_at_risk`` of the records in classes whose risk 1/|E| exceeds ``highest_risk``.

    Attributes:
        average_risk: r, in (0, 1].
        highest_risk: h, in (0, 1], or None.
        records_at_risk: F, in [0, 1], given exactly when ``highest_risk`` is.
    """

    average_risk: float
    highest_risk: float | None = None
    records_at_risk: float | None = None

    def __post_init__(self) -> None:
        real_number(self.average_risk, "average-risk: average_risk", low=0, high=1)
        if (self.highest_risk is None) != (self.records_at_risk is None):
            raise InputError(
                "average-risk: give highest_risk and records_at_risk together, or neither"
            )
        if self.highest_risk is not None:
            real_number(self.highest_risk, "average-risk: highest_risk", low=0, high=1)
            real_number(
                self.records_at_risk,
                "average-risk: records_at_risk",
                low=0,
                high=1,
                low_allowed=True,
            )

    @property
    def name(self) -> str:
        """``"average-risk"``."""
        return "average-risk"

    @property
    def monotone_with_suppression(self) -> bool:
        """True without a highest risk, False with one (module docstring)."""
        return self.highest_risk is None

    @property
    def monotone_without_suppression(self) -> bool:
        """True: generalizing merges classes, so fewer classes over the same records."""
        return True

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: class sizes only."""
        return ()

    @property
    def smallest_safe_size(self) -> int | None:
        """The least class size whose risk 1/|E| is at most ``highest_risk``: ceil(1/h),
        h read as the decimal it prints as."""
        if self.highest_risk is None:
            return None
        return math.ceil(1 / Fraction(repr(float(self.highest_risk))))

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Every class: the model judges the release as a whole (:meth:`classes_to_suppress`)."""
        return np.ones(len(classes.sizes), dtype=np.bool_)

    def measure(self, sizes: npt.NDArray[np.int64], *, rows: int) -> float | None:
        """The average risk: classes over records (None for no records)."""
        records = int(sizes.sum())
        return None if records == 0 else len(sizes) / records

    def share_at_risk(self, sizes: npt.NDArray[np.int64]) -> float | None:
        """The share of the records in classes smaller than :attr:`smallest_safe_size`
        (None without a highest risk or without records)."""
        records = int(sizes.sum())
        safe = self.smallest_safe_size
        if safe is None or not records:
            return None
        return int(sizes[sizes < safe].sum()) / records

    def classes_to_suppress(self, sizes: npt.NDArray[np.int64], *, rows: int, budget: int) -> int:
        """ARX's binary search (:func:`~kanonym.models._smallest_first.smallest_first`) for
        ARX's test: ``1 / (records / classes) <= r`` (no records fail), and the rows
        of classes smaller than :attr:`smallest_safe_size` over the records at most F."""
        left = np.concatenate(([0], np.cumsum(sizes[::-1])))[::-1]  # rows from j on
        safe = self.smallest_safe_size
        small = 0 if safe is None else int(np.searchsorted(sizes, safe))
        small_rows = np.concatenate(([0], np.cumsum(sizes[:small])))
        n = len(sizes)

        def holds(j: int) -> bool:
            records = int(left[j])
            if records == 0:
                return False
            if not 1.0 / (records / (n - j)) <= self.average_risk:
                return False
            if safe is None or self.records_at_risk is None:
                return True
            at_risk = int(small_rows[small]) - int(small_rows[min(j, small)])
            return at_risk / records <= self.records_at_risk

        return smallest_first(sizes, holds, budget=budget)

    def describe(self) -> dict[str, object]:
        """``{"model": "average-risk", "average_risk": ...}`` (and the highest risk, if set)."""
        described: dict[str, object] = {"model": self.name, "average_risk": self.average_risk}
        if self.highest_risk is not None:
            described["highest_risk"] = self.highest_risk
            described["records_at_risk"] = self.records_at_risk
        return described
