"""Population uniqueness at most u, estimated from the release (El Emam 2013; ARX's
``PopulationUniqueness``).

A sample unique need not be unique in the population the table was drawn
from; what an attacker holding a population register can match with
certainty are the *population uniques*. Their share of the population is
estimated from the release's class sizes and the population size N (or the
sampling fraction π = n/N) by one of the estimators of
:mod:`kanonym.attacks.population`: Pitman's (Hoshino 2001), Zayatz's (1991),
the SNB model's (Chen & Keller-McNulty 1998), or Dankar, El Emam, Neisa &
Roffey's rule among them (2012, "Estimating the re-identification risk of
clinical data sets", BMC Med. Inform. Decis. Mak. 12:66): Pitman's for
π <= 10 %, otherwise the smaller of Zayatz's and SNB's. The release meets the
threshold u when the estimate is in (0, u], or it holds no sample unique at
all (ARX's test: an invalid estimate, one that is missing or 0 while there
are sample uniques, fails; Dankar's rule with a missing Pitman estimate
fails).

Enforced like ARX (:class:`~kanonym.models.base.SampleModel`): the smallest
kept classes are suppressed by ARX's binary search until it holds. The
estimate is not monotone in the classes suppressed nor under
generalization, so the model declares neither (ARX declares Zayatz's monotone
without suppression; kanonym does not rely on that), and searches that prune
by monotonicity check every node.

Example (Zayatz's estimate for 2 uniques and a pair from a population of 10
is 3 uniques, 30 %; suppressing one unique leaves an estimate of 13 %):
    >>> import numpy as np
    >>> model = PopulationUniqueness(threshold=0.2, estimator="zayatz", population_size=10)
    >>> round(model.measure(np.array([1, 1, 2]), rows=4), 12)
    0.3
    >>> model.classes_to_suppress(np.array([1, 1, 2]), rows=4, budget=4)
    1
    >>> round(model.measure(np.array([1, 2]), rows=4), 4)
    0.1304
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.attacks.population import ESTIMATORS, population_uniqueness
from kanonym.errors import InputError, echo
from kanonym.models._sensitive import real_number
from kanonym.models._smallest_first import smallest_first
from kanonym.models.base import ClassStatistics


@dataclass(frozen=True, kw_only=True)
class PopulationUniqueness:
    """The estimated share of population uniques at most ``threshold``.

    Attributes:
        threshold: u, in (0, 1].
        estimator: ``"dankar"`` (the default, as in ARX), ``"pitman"``,
            ``"zayatz"`` or ``"snb"``.
        population_size: N, at least the table's rows; or None when
            ``sampling_fraction`` is given.
        sampling_fraction: π in (0, 1], N being the table's rows over π rounded
            half up (as ARX's ``ARXPopulationModel.create(n, π)``); or None.
    """

    threshold: float
    estimator: str = "dankar"
    population_size: int | None = None
    sampling_fraction: float | None = None

    def __post_init__(self) -> None:
        real_number(self.threshold, "population-uniqueness: threshold", low=0, high=1)
        if self.estimator not in ESTIMATORS:
            raise InputError(
                f"population-uniqueness: estimator {echo(self.estimator)} is not one of "
                f"{', '.join(ESTIMATORS)}"
            )
        if (self.population_size is None) == (self.sampling_fraction is None):
            raise InputError(
                "population-uniqueness: give exactly one of population_size and sampling_fraction"
            )
        if self.population_size is not None and (
            isinstance(self.population_size, bool)
            or not isinstance(self.population_size, int)
            or self.population_size < 1
        ):
            raise InputError(
                "population-uniqueness: population_size must be a whole number >= 1, "
                f"got {self.population_size!r}"
            )
        if self.sampling_fraction is not None:
            real_number(
                self.sampling_fraction, "population-uniqueness: sampling_fraction", low=0, high=1
            )

    @property
    def name(self) -> str:
        """``"population-uniqueness"``."""
        return "population-uniqueness"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (module docstring; ARX declares the same)."""
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """False (module docstring)."""
        return False

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: class sizes only."""
        return ()

    def population(self, rows: int) -> int:
        """N for a table of ``rows`` rows.

        Raises:
            InputError: N is smaller than ``rows``.
        """
        if self.population_size is not None:
            size = self.population_size
        else:
            assert self.sampling_fraction is not None
            size = math.floor(rows / self.sampling_fraction + 0.5)
        if size < rows:
            raise InputError(
                f"population-uniqueness: population_size {size} is smaller than the table's "
                f"{rows} rows"
            )
        return size

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Every class: the model judges the release as a whole (:meth:`classes_to_suppress`)."""
        return np.ones(len(classes.sizes), dtype=np.bool_)

    def _estimate(self, sizes: npt.NDArray[np.int64], rows: int) -> float | None:
        values, counts = np.unique(sizes, return_counts=True)
        histogram = dict(zip(values.tolist(), counts.tolist(), strict=True))
        return population_uniqueness(histogram, self.population(rows), self.estimator)

    def measure(self, sizes: npt.NDArray[np.int64], *, rows: int) -> float | None:
        """The estimated share of population uniques (0 without records; None when
        Dankar's rule has no valid estimate)."""
        if not int(sizes.sum()):
            self.population(rows)
            return 0.0
        return self._estimate(sizes, rows)

    def classes_to_suppress(self, sizes: npt.NDArray[np.int64], *, rows: int, budget: int) -> int:
        """ARX's binary search (:func:`~kanonym.models._smallest_first.smallest_first`) for
        ARX's test: an estimate in (0, u], or none at all without sample uniques."""

        def holds(j: int) -> bool:
            left = sizes[j:]
            if not len(left):
                return True
            share = self._estimate(left, rows)
            if share is None:
                return False
            return 0 < share <= self.threshold or (share == 0 and left[0] > 1)

        return smallest_first(sizes, holds, budget=budget)

    def describe(self) -> dict[str, object]:
        """``{"model": "population-uniqueness", "threshold": ..., "estimator": ..., ...}``."""
        described: dict[str, object] = {
            "model": self.name,
            "threshold": self.threshold,
            "estimator": self.estimator,
        }
        if self.population_size is not None:
            described["population_size"] = self.population_size
        else:
            described["sampling_fraction"] = self.sampling_fraction
        return described
