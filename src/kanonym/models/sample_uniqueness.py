"""Sample uniqueness at most u (El Emam 2013; ARX's ``SampleUniqueness``).

A record alone in its class (a *sample unique*) is re-identified with
certainty by an attacker who knows its person is in the release. The sample
uniqueness of a release is the share of its records that are sample uniques,
``(classes of size 1) / records`` (K. El Emam, "Guide to the De-Identification
of Personal Health Information", CRC Press 2013; ARX's
``fractionOfRecordsInClassesOfSize(1)``); the release meets the threshold u
when it is at most u (a release without records has none).

Enforced like ARX (:class:`~kanonym.models.base.SampleModel`): the smallest
kept classes are suppressed until it holds, which suppresses sample uniques
only. Generalizing never creates a sample unique, so the model is monotone
with and without suppression (ARX declares the same).

Example (3 uniques among 10 records; two must go for 1/8 <= 0.15):
    >>> import numpy as np
    >>> model = SampleUniqueness(threshold=0.15)
    >>> sizes = np.array([1, 1, 1, 3, 4])
    >>> model.measure(sizes, rows=10), model.classes_to_suppress(sizes, rows=10, budget=5)
    (0.3, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import real_number
from kanonym.models._smallest_first import smallest_first
from kanonym.models.base import ClassStatistics


@dataclass(frozen=True, kw_only=True)
class SampleUniqueness:
    """The share of released records alone in their class at most ``threshold``.

    Attributes:
        threshold: u, in (0, 1].
    """

    threshold: float

    def __post_init__(self) -> None:
        real_number(self.threshold, "sample-uniqueness: threshold", low=0, high=1)

    @property
    def name(self) -> str:
        """``"sample-uniqueness"``."""
        return "sample-uniqueness"

    @property
    def monotone_with_suppression(self) -> bool:
        """True (module docstring)."""
        return True

    @property
    def monotone_without_suppression(self) -> bool:
        """True: a class of a generalization is never smaller than its parts."""
        return True

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: class sizes only."""
        return ()

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Every class: the model judges the release as a whole (:meth:`classes_to_suppress`)."""
        return np.ones(len(classes.sizes), dtype=np.bool_)

    def measure(self, sizes: npt.NDArray[np.int64], *, rows: int) -> float | None:
        """Records in classes of size 1 over records (0 for no records, as ARX)."""
        records = int(sizes.sum())
        return 0.0 if records == 0 else int((sizes == 1).sum()) / records

    def classes_to_suppress(self, sizes: npt.NDArray[np.int64], *, rows: int, budget: int) -> int:
        """ARX's binary search (:func:`~kanonym.models._smallest_first.smallest_first`)
        for ``uniques / records <= u``."""
        uniques = int(np.searchsorted(sizes, 2))  # sizes ascend: the uniques come first
        left = np.concatenate(([0], np.cumsum(sizes[::-1])))[::-1]

        def holds(j: int) -> bool:
            records = int(left[j])
            return records == 0 or max(uniques - j, 0) / records <= self.threshold

        return smallest_first(sizes, holds, budget=budget)

    def describe(self) -> dict[str, object]:
        """``{"model": "sample-uniqueness", "threshold": ...}``."""
        return {"model": self.name, "threshold": self.threshold}
