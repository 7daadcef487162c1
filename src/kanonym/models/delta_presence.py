"""delta-presence (Nergiz, Atzori & Clifton 2007).

A released table T* is a sample (a research subset) of a population table P.
An attacker who knows that someone is in P, and their quasi-identifier values,
should not learn with confidence whether they are in T*. With P* the
population generalized like T*, the probability that a member of the
population with generalized tuple t is in the sample is |T*(t)| / |P*(t)|; the
release is (delta_min, delta_max)-present when this lies in [delta_min,
delta_max] for every tuple t of the release (M. E. Nergiz, M. Atzori,
C. Clifton, "Hiding the presence of individuals from shared databases",
SIGMOD 2007, Definition 3). Class by class: each class of the sample is judged
by its rows and its population's rows (:attr:`ClassStatistics.population`).

Example (two classes: 1 of 5 population rows in the sample, and 3 of 4):
    >>> import numpy as np
    >>> from kanonym.models import ClassStatistics
    >>> stats = ClassStatistics(np.array([1, 3]), population=np.array([5, 4]))
    >>> DeltaPresence(delta_min=0.0, delta_max=0.5).satisfied_classes(stats).tolist()
    [True, False]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.models._sensitive import real_number
from kanonym.models.base import ClassStatistics, population_of


@dataclass(frozen=True, kw_only=True)
class DeltaPresence:
    """Each class's share of its population lies in [``delta_min``, ``delta_max``]."""

    delta_min: float
    delta_max: float

    def __post_init__(self) -> None:
        real_number(self.delta_min, "delta-presence: delta_min", low=0, high=1, low_allowed=True)
        real_number(self.delta_max, "delta-presence: delta_max", low=0, high=1, low_allowed=True)
        if self.delta_min > self.delta_max:
            raise InputError(
                f"delta-presence: delta_min {self.delta_min!r} is larger than "
                f"delta_max {self.delta_max!r}"
            )

    @property
    def name(self) -> str:
        """``"delta-presence"``."""
        return "delta-presence"

    @property
    def needs_population(self) -> bool:
        """True: the population's rows per class."""
        return True

    @property
    def admits_absent_classes(self) -> bool:
        """Only when ``delta_min`` is 0: a class of the population with no sample row
        puts its people in the sample with probability 0 (Nergiz et al. 2007 bound it
        for every member of the population), and no suppression can raise that."""
        return self.delta_min == 0

    @property
    def monotone_with_suppression(self) -> bool:
        """False: a suppressed class merged into a kept one can push its share out of
        bounds (ARX's ``DPresence`` declares the same)."""
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: a merged class's share is a weighted mean of its parts' shares, so it
        stays within bounds they all meet (Nergiz et al. 2007, Theorem 2)."""
        return True

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: class sizes and population sizes only."""
        return ()

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Classes whose rows over their population's rows (a correctly rounded
        division, as ARX computes it) lie in the bounds."""
        population = population_of(self, classes)
        share = classes.sizes / np.maximum(population, 1)
        return np.asarray((share >= self.delta_min) & (share <= self.delta_max))

    def describe(self) -> dict[str, object]:
        """``{"model": "delta-presence", "delta_min": ..., "delta_max": ...}``."""
        return {"model": self.name, "delta_min": self.delta_min, "delta_max": self.delta_max}
