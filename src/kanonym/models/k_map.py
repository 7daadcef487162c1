"""k-map (Sweeney 2001; El Emam & Dankar 2008), with a population table or estimated.

k-anonymity counts the rows of the released table; an attacker, though, links
the release to an identification database drawn from the whole population,
and a tuple shared by few rows of the sample may still be shared by many
people. k-map asks that every released tuple match at least k members of the
population (L. Sweeney, "Computational disclosure control: a primer on data
privacy protection", PhD thesis, MIT, 2001, chapter 4 (k-map); K. El Emam,
F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008,
627-637): with P* the population generalized like the release T*, each
generalized tuple t of T* has |P*(t)| >= k.

Two forms:

* **with a population table** (``estimator=None``): the population is given
  (``kanonym.anonymize(..., population=TABLE)``); a class of the sample
  satisfies k-map when its population rows (:attr:`ClassStatistics.population`)
  are at least k. Classes of the population holding no sample row are not
  released and not judged.
* **estimated** (``estimator`` set): only the population's size N is known.
  El Emam & Dankar model the number of population members sharing a sample
  class of size f as Poisson with mean f * N / n (n the sample's rows), or
  zero-truncated Poisson (Pannekoek 1999: a class the sample holds has at
  least one member in the population); a sample class of k' rows then has
  at least k population members with confidence 1 - ``significance``. As in
  ARX (``KMap`` with an estimator, its D3 and D4 rules), k' is derived once
  from lambda = (n / N) k and the model is k-anonymity with k' (at most k and
  at most n).

ARX's derivation, from ``threshold = 1 - significance`` and the Poisson
distribution of mean lambda (pmf p, cdf F):

* Poisson: ``c = 0; v = 0; while v < threshold: v = F(c); c += 1;
  if c >= k: break``; k' = c + 1.
* zero-truncated Poisson: ``c = 1; v = 0; while v < threshold:
  v += p(c) / (1 - p(0)); c += 1; if c >= k: break``; k' = c (no + 1).

Both are monotone under generalization with and without suppression, as
ARX's ``KMap`` declares: merging classes adds their population rows (or their
rows, compared with the same k').

Example (classes of 2 and 1 sample rows standing for 5 and 2 people; and the
estimated form on ARX's adult table against the US population):
    >>> import numpy as np
    >>> from kanonym.models import ClassStatistics
    >>> stats = ClassStatistics(np.array([2, 1]), population=np.array([5, 2]))
    >>> KMap(k=3).satisfied_classes(stats).tolist()
    [True, False]
    >>> usa = KMap(k=1000, estimator="poisson", significance=0.01, population_size=317238626)
    >>> usa.derived_k(30162)
    3
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.models._sensitive import real_number, whole_number
from kanonym.models.base import ClassStatistics, PrivacyModel, population_of

Estimator = Literal["poisson", "zero-truncated-poisson"]
ESTIMATORS: tuple[Estimator, ...] = ("poisson", "zero-truncated-poisson")
"""The estimators of the population's class sizes, as the spec grammar names them."""


@dataclass(frozen=True, kw_only=True)
class KMap:
    """Every released class matches at least ``k`` members of the population.

    Attributes:
        k: the least number of population members per released class.
        estimator: None to count them in a population table; ``"poisson"`` or
            ``"zero-truncated-poisson"`` to estimate them from ``population_size``
            (El Emam & Dankar 2008), as k-anonymity with a derived k.
        significance: the estimate's allowed error (in (0, 1)); read only with
            an estimator.
        population_size: N, the population's size; with an estimator only,
            and at least the table's rows.
    """

    k: int
    estimator: Estimator | None = None
    significance: float = 0.01
    population_size: int | None = None

    def __post_init__(self) -> None:
        whole_number(self.k, "k-map: k", 1)
        real_number(self.significance, "k-map: significance", low=0, high=1)
        if self.significance == 1:
            raise InputError(f"k-map: significance must be below 1, got {self.significance!r}")
        if self.estimator is None:
            if self.population_size is not None:
                raise InputError(
                    "k-map: population_size is read only with an estimator (`estimator`); "
                    "without one, pass the population table (`population`)"
                )
            return
        if self.estimator not in ESTIMATORS:
            raise InputError(
                f"k-map: estimator must be one of {', '.join(ESTIMATORS)} or None, "
                f"got {self.estimator!r}"
            )
        if self.population_size is None:
            raise InputError("k-map: population_size must be given with an estimator")
        whole_number(self.population_size, "k-map: population_size", 1)

    @property
    def name(self) -> str:
        """``"k-map"``."""
        return "k-map"

    @property
    def needs_population(self) -> bool:
        """True without an estimator: the population table's rows per class."""
        return self.estimator is None

    @property
    def admits_absent_classes(self) -> bool:
        """True: a class of the population with no sample row releases nobody."""
        return True

    @property
    def monotone_with_suppression(self) -> bool:
        """True: a merged class's population (or rows) is the sum of its parts', so the
        rows of failing classes only decrease (ARX's ``KMap`` declares the same)."""
        return True

    @property
    def monotone_without_suppression(self) -> bool:
        """True: merged classes keep at least k population members (or k' rows)."""
        return True

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: class sizes and population sizes only."""
        return ()

    def derived_k(self, rows: int) -> int:
        """The least class size k' of the estimated form, for a table of ``rows`` rows.

        ARX's derivation (module docstring) with lambda = (rows / N) k, capped at
        k and at ``rows``. Without an estimator, ``k`` (the population form
        compares population rows with k itself).

        Raises:
            InputError: ``rows`` exceeds ``population_size``.

        Example:
            >>> KMap(k=3, estimator="zero-truncated-poisson", significance=0.01,
            ...      population_size=317238626).derived_k(30162)
            2
        """
        if self.estimator is None or self.population_size is None:
            return self.k
        if rows > self.population_size:
            raise InputError(
                f"k-map: population_size {self.population_size} is a population smaller than "
                f"the sample ({rows} rows)"
            )
        if rows < 1:
            return self.k
        return _derived_k(self.k, self.estimator, self.significance, self.population_size, rows)

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Without an estimator, classes whose population rows are at least k; with
        one, classes of at least k' rows, k' derived from the table's rows (the
        sum of the class sizes)."""
        if self.estimator is None:
            return np.asarray(population_of(self, classes) >= self.k)
        rows = int(classes.sizes.sum())
        return np.asarray(classes.sizes >= self.derived_k(rows))

    def describe(self, rows: int | None = None) -> dict[str, object]:
        """``{"model": "k-map", "k": k}``, with the estimator's parameters when set, and
        the derived k (``derived_k``) when also given the table's ``rows``."""
        described: dict[str, object] = {"model": self.name, "k": self.k}
        if self.estimator is not None:
            described.update(
                estimator=self.estimator,
                significance=self.significance,
                population_size=self.population_size,
            )
            if rows is not None:
                described["derived_k"] = self.derived_k(rows)
        return described


@functools.lru_cache(maxsize=64)
def _derived_k(k: int, estimator: Estimator, significance: float, people: int, rows: int) -> int:
    """:meth:`KMap.derived_k`, once per parameters: every node the search checks asks
    again, and the walk takes up to k steps."""
    # A population so large that the mean underflows: the least positive mean
    # gives the limit the rules tend to (k' = 2).
    mean = max(rows / people * k, math.ulp(0.0))
    threshold = 1.0 - significance
    if estimator == "poisson":
        derived = _poisson_k(k, mean, threshold)
    else:
        derived = _zero_truncated_k(k, mean, threshold)
    return min(k, derived, rows)


def _log_pmf(x: int, mean: float) -> float:
    """log P[X = x] for X Poisson with ``mean`` > 0: x ln(mean) - mean - ln(x!)."""
    return x * math.log(mean) - mean - math.lgamma(x + 1)


def _log_add(a: float, b: float) -> float:
    """ln(e^a + e^b) without overflow or underflow."""
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high)) if low > -math.inf else high


def _poisson_k(k: int, mean: float, threshold: float) -> int:
    """ARX's Poisson rule: one past the first count whose cdf reaches ``threshold``
    (the loop stops early at k), plus one."""
    # The loop walks counts, not rows: at most k steps, and about
    # mean + 3 sqrt(mean) while the cdf is below the threshold.
    counter, value, log_cdf = 0, 0.0, -math.inf
    while value < threshold:
        log_cdf = _log_add(log_cdf, _log_pmf(counter, mean))
        value = min(1.0, math.exp(log_cdf))
        counter += 1
        if counter >= k:
            break
    return counter + 1


def _zero_truncated_k(k: int, mean: float, threshold: float) -> int:
    """ARX's zero-truncated Poisson rule: the count past the first one at which the
    truncated cdf (from 1) reaches ``threshold`` (the loop stops early at k)."""
    # 1 - P[X = 0], exactly for small means (where 1 - e^-mean loses digits).
    log_zero_free = math.log(-math.expm1(-mean))
    counter, value = 1, 0.0
    while value < threshold:
        value += math.exp(_log_pmf(counter, mean) - log_zero_free)
        counter += 1
        if counter >= k:
            break
    return counter


def described(model: PrivacyModel, rows: int) -> dict[str, object]:
    """``model.describe()`` for a report of a table of ``rows`` rows: estimated k-map's
    also gives the least class size it derived (``derived_k``).

    Example:
        >>> described(KMap(k=3, estimator="poisson", population_size=317238626), 30162)
        {'model': 'k-map', 'k': 3, 'estimator': 'poisson', 'significance': 0.01, \
'population_size': 317238626, 'derived_k': 2}
    """
    if isinstance(model, KMap):
        return model.describe(rows)
    return model.describe()
