"""Population uniqueness estimated from a sample (Zayatz 1991).

A record unique in the released table (a *sample unique*) need not be unique in
the population it was drawn from; only population uniques are certain matches
for an attacker holding a population register. Zayatz ("Estimation of the
number of unique population elements using a sample", US Census Bureau,
Statistical Research Division report 1991; method as described by Dankar, El
Emam, Neisa & Roffey 2012, "Estimating the re-identification risk of clinical
data sets", BMC Med. Inform. Decis. Mak. 12:66) estimates how many there are.

Write n for the sample's rows, N for the population's, π = n/N, f_i for the
number of sample classes of size i and u = Σ_i f_i. The estimator assumes:

* the table is a simple random sample, without replacement, of a population of
  known size N (the sampling fraction π must be known);
* population classes have the same size distribution as the sample's: a class
  has size i with probability f_i / u.

A class of size i in the population leaves exactly one record in the sample with
hypergeometric probability h_i = i C(N − i, n − 1) / C(N, n). So a sample unique
comes from a population unique with probability

    P(F = 1 | f = 1) = f_1 h_1 / Σ_i f_i h_i,

computed with the ratios h_i / h_1 = i ∏_(t=1..i−1) (N − n + 1 − t) / (N − t)
(exact, no large binomials); the sample holds f_1 P(F = 1 | f = 1) population
uniques, and the population f_1 P(F = 1 | f = 1) / π, as ARX reports it. With
no sample unique the estimate is 0. Dankar et al.'s decision rule takes Pitman's
estimator for sampling fractions up to 10 % and the smaller of Zayatz's and the
SNB estimate above; kanonym implements Zayatz's alone, so read it with care for
small sampling fractions.

Example (n = 4 records in classes of sizes 1, 1, 2 from a population of 10:
h_1 = 84/210 = 0.4, h_2 = 2 · 56/210, P = 0.8 / (0.8 + 0.5333) = 0.6, so
2 · 0.6 / 0.4 = 3 population uniques, 30 % of the population):
    >>> e = estimate_zayatz({1: 2, 2: 1}, population_size=10)
    >>> round(e.unique_given_sample_unique, 12), round(e.population_uniques, 12)
    (0.6, 3.0)
    >>> round(e.population_uniqueness, 12)
    0.3
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kanonym.errors import InputError


@dataclass(frozen=True, kw_only=True)
class PopulationEstimate:
    """An estimate of how many records are unique in the whole population.

    Attributes:
        estimator: the method (``"zayatz"``).
        sample_size: rows of the table (n).
        population_size: rows of the population (N >= n).
        unique_given_sample_unique: P(F = 1 | f = 1), the probability that a
            sample unique is a population unique; None without sample uniques.
        population_uniques: estimated records unique in the population.
    """

    estimator: str
    sample_size: int
    population_size: int
    unique_given_sample_unique: float | None
    population_uniques: float

    def __post_init__(self) -> None:
        if not 1 <= self.sample_size <= self.population_size:
            raise ValueError(
                f"sample size {self.sample_size} must be between 1 and the population size "
                f"{self.population_size}"
            )
        if not 0.0 <= self.population_uniques <= self.population_size:
            raise ValueError(f"population uniques {self.population_uniques} out of range")

    @property
    def sampling_fraction(self) -> float:
        """π = n / N."""
        return self.sample_size / self.population_size

    @property
    def population_uniqueness(self) -> float:
        """Estimated share of the population's records unique in it."""
        return self.population_uniques / self.population_size

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (README, ``kanonym risk --json``, key ``estimate``)."""
        return {
            "estimator": self.estimator,
            "population_size": self.population_size,
            "sampling_fraction": self.sampling_fraction,
            "unique_given_sample_unique": self.unique_given_sample_unique,
            "population_uniques": self.population_uniques,
            "population_uniqueness": self.population_uniqueness,
        }

    def text(self) -> str:
        """One line for people."""
        return (
            f"population uniqueness estimate ({self.estimator}, sampling fraction "
            f"{self.sampling_fraction:.4g}): {self.population_uniques:.1f} of "
            f"{self.population_size} records ({self.population_uniqueness:.2%})"
        )


def estimate_zayatz(histogram: Mapping[int, int], population_size: int) -> PopulationEstimate:
    """Zayatz's estimate from the sample's class sizes (size -> classes of that size).

    Raises:
        InputError: the population size is not a whole number at least the
            sample's rows, or the histogram is empty.
    """
    sizes = np.array(sorted(histogram), dtype=np.int64)
    counts = np.array([histogram[int(size)] for size in sizes], dtype=np.float64)
    n = int((sizes * counts).sum())
    if n == 0:
        raise InputError("population uniqueness needs a table with rows")
    if isinstance(population_size, bool) or not isinstance(population_size, int):
        raise InputError(f"population size must be a whole number, got {population_size!r}")
    if population_size < n:
        raise InputError(
            f"population size {population_size} is smaller than the table's {n} records"
        )
    singletons = float(histogram.get(1, 0))
    if singletons == 0:
        return PopulationEstimate(
            estimator="zayatz",
            sample_size=n,
            population_size=population_size,
            unique_given_sample_unique=None,
            population_uniques=0.0,
        )
    big_n = float(population_size)
    t = np.arange(1, int(sizes.max()), dtype=np.float64)
    # (N - n + 1 - t) / (N - t): negative factors mean a class too large to leave
    # a single record in the sample, so the ratio is zero from there on.
    factors = np.clip((big_n - n + 1 - t) / (big_n - t), 0.0, None)
    ratio = np.concatenate(([1.0], np.cumprod(factors)))  # C(N-i, n-1) / C(N-1, n-1)
    weights = sizes * ratio[sizes - 1]  # h_i / h_1
    conditional = singletons / float((counts * weights).sum())
    return PopulationEstimate(
        estimator="zayatz",
        sample_size=n,
        population_size=population_size,
        unique_given_sample_unique=conditional,
        population_uniques=singletons * conditional * big_n / n,
    )
