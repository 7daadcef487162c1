"""Population uniqueness estimated from a sample: Zayatz (1991) and Pitman (Hoshino 2001).

A record unique in the released table (a *sample unique*) need not be unique in
the population it was drawn from; only population uniques are certain matches
for an attacker holding a population register. Both estimators are described,
compared and combined into a decision rule by Dankar, El Emam, Neisa & Roffey
(2012, "Estimating the re-identification risk of clinical data sets", BMC Med.
Inform. Decis. Mak. 12:66). Write n for the sample's rows, N for the
population's, π = n/N, f_i for the number of sample classes of size i and
u = Σ_i f_i. Both assume that the table is a simple random sample, without
replacement, of a population of known size N: the sampling fraction π must be
known.

**Zayatz** ("Estimation of the number of unique population elements using a
sample", US Census Bureau SRD report, 1991) further assumes that population
classes have the sample's size distribution: a class has size i with
probability f_i / u. A class of size i leaves exactly one record in the sample
with hypergeometric probability h_i = i C(N − i, n − 1) / C(N, n), so a sample
unique comes from a population unique with probability

    P(F = 1 | f = 1) = f_1 h_1 / Σ_i f_i h_i,

computed with the exact ratios h_i / h_1 = i ∏_(t=1..i−1) (N − n + 1 − t) / (N − t);
the population holds f_1 P(F = 1 | f = 1) / π uniques, as ARX reports it.

**Pitman** (Hoshino 2001, "Applying Pitman's sampling formula to microdata
disclosure risk assessment", J. Official Statistics 17(4)) assumes instead that
the sample's partition into classes follows Pitman's sampling formula with
parameters θ > −α, 0 <= α < 1. Their maximum likelihood estimates maximize

    ℓ(θ, α) = Σ_(i=1..u−1) ln(θ + iα) − Σ_(i=1..n−1) ln(θ + i)
              + Σ_(m>=1) c_m ln(m − α),

c_m being the number of classes larger than m; the population then holds about
N^α Γ(θ + 1) / Γ(θ + α) uniques (Hoshino's large-N form, as ARX computes it).
kanonym finds θ(α) by bisection on ∂ℓ/∂θ = 0 (in ln(θ + α)) and α by a grid of
twenty values refined by golden-section search on the profile ℓ(θ(α), α). The
likelihood has no maximum when every record is a sample unique (θ grows
without bound): no Pitman estimate then.

With no sample unique, both estimates are 0. Dankar et al.'s rule takes
Pitman's estimate for π <= 10 % and the smaller of Zayatz's and the SNB
model's above; kanonym has no SNB model, so its ``recommended`` estimate is
Pitman's for π <= 10 % (Zayatz's when Pitman's is unavailable) and Zayatz's
above, an upper bound of the rule's choice there.

Example (n = 4 records in classes of sizes 1, 1, 2 from a population of 10:
h_1 = 84/210 = 0.4, h_2 = 2 · 56/210, P = 0.8 / (0.8 + 0.5333) = 0.6, so
2 · 0.6 / 0.4 = 3 population uniques, 30 % of the population):
    >>> e = estimate_zayatz({1: 2, 2: 1}, population_size=10)
    >>> round(e.parameters["unique_given_sample_unique"], 12), round(e.population_uniques, 12)
    (0.6, 3.0)
    >>> round(e.population_uniqueness, 12)
    0.3
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from kanonym.errors import InputError, echo

PITMAN_UP_TO = 0.1
"""Dankar et al.'s rule prefers Pitman's estimate up to this sampling fraction."""

# ln(θ + α) is searched in this range: θ up to about 1.8e17, which no sample of
# realistic size reaches unless its likelihood is unbounded.
_LOG_LOW, _LOG_HIGH = -40.0, 40.0
_ALPHA_GRID = 20
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True, kw_only=True)
class PopulationEstimate:
    """An estimate of how many records are unique in the whole population.

    Attributes:
        estimator: ``"zayatz"`` or ``"pitman"``.
        sample_size: rows of the table (n).
        population_size: rows of the population (N >= n).
        population_uniques: estimated records unique in the population.
        parameters: the fitted quantities: ``unique_given_sample_unique``
            (Zayatz's P(F = 1 | f = 1), None without sample uniques), or
            ``theta`` and ``alpha`` (Pitman's, None without sample uniques).
    """

    estimator: str
    sample_size: int
    population_size: int
    population_uniques: float
    parameters: Mapping[str, float | None] = field(default_factory=dict)

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
        """JSON-ready form: the estimate and the fitted parameters."""
        return {
            "population_uniques": self.population_uniques,
            "population_uniqueness": self.population_uniqueness,
            **self.parameters,
        }


@dataclass(frozen=True, kw_only=True)
class PopulationEstimates:
    """Both estimates for one table and population size.

    Attributes:
        zayatz: Zayatz's estimate (always available).
        pitman: Pitman's estimate, None when its likelihood has no maximum.
        pitman_reason: why ``pitman`` is None.
    """

    zayatz: PopulationEstimate
    pitman: PopulationEstimate | None
    pitman_reason: str | None = None

    def __post_init__(self) -> None:
        if (self.pitman is None) != (self.pitman_reason is not None):
            raise ValueError("a reason is given exactly when the Pitman estimate is missing")

    @property
    def recommended(self) -> PopulationEstimate:
        """Dankar et al.'s choice among the estimates kanonym has (module docstring)."""
        if self.pitman is not None and self.zayatz.sampling_fraction <= PITMAN_UP_TO:
            return self.pitman
        return self.zayatz

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (key ``estimates`` of ``kanonym risk --json``)."""
        out: dict[str, object] = {
            "population_size": self.zayatz.population_size,
            "sampling_fraction": self.zayatz.sampling_fraction,
            "recommended": self.recommended.estimator,
            "zayatz": self.zayatz.as_dict(),
            "pitman": None if self.pitman is None else self.pitman.as_dict(),
        }
        if self.pitman_reason is not None:
            out["pitman_reason"] = self.pitman_reason
        return out

    def text(self) -> str:
        """One line for people."""
        parts = []
        for estimate in (self.zayatz, self.pitman):
            if estimate is not None:
                parts.append(
                    f"{estimate.estimator} {estimate.population_uniques:.1f} "
                    f"({estimate.population_uniqueness:.2%})"
                )
        if self.pitman_reason is not None:
            parts.append(f"pitman none ({self.pitman_reason})")
        return (
            f"population uniques among {self.zayatz.population_size} (sampling fraction "
            f"{self.zayatz.sampling_fraction:.4g}): {', '.join(parts)}; "
            f"recommended: {self.recommended.estimator}"
        )


def _sample(histogram: Mapping[int, int], population_size: int) -> tuple[int, float]:
    """The sample's rows and its unique records; InputError for a bad population size."""
    n = sum(size * count for size, count in histogram.items())
    if n == 0:
        raise InputError("population uniqueness needs a table with rows")
    if isinstance(population_size, bool) or not isinstance(population_size, int):
        raise InputError(f"population size must be a whole number, got {echo(population_size)}")
    if population_size < n:
        raise InputError(
            f"population size {population_size} is smaller than the table's {n} records"
        )
    return n, float(histogram.get(1, 0))


def estimate_zayatz(histogram: Mapping[int, int], population_size: int) -> PopulationEstimate:
    """Zayatz's estimate from the sample's class sizes (size -> classes of that size).

    Raises:
        InputError: the population size is not a whole number at least the
            sample's rows, or the histogram is empty.
    """
    n, singletons = _sample(histogram, population_size)
    if singletons == 0:
        return PopulationEstimate(
            estimator="zayatz",
            sample_size=n,
            population_size=population_size,
            population_uniques=0.0,
            parameters={"unique_given_sample_unique": None},
        )
    sizes = np.array(sorted(histogram), dtype=np.int64)
    counts = np.array([histogram[int(size)] for size in sizes], dtype=np.float64)
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
        population_uniques=singletons * conditional * big_n / n,
        parameters={"unique_given_sample_unique": conditional},
    )


def pitman_log_likelihood(histogram: Mapping[int, int], theta: float, alpha: float) -> float:
    """ℓ(θ, α) of Pitman's sampling formula for the sample's partition (module docstring).

    Example (one class of two: ℓ = −ln(θ + 1) + ln(1 − α)):
        >>> round(pitman_log_likelihood({2: 1}, 1.0, 0.5), 12) == round(-math.log(4), 12)
        True
    """
    return _Partition(histogram).log_likelihood(theta, alpha)


class _Partition:
    """The sums Pitman's likelihood needs, as arrays over i, built once per sample."""

    def __init__(self, histogram: Mapping[int, int]) -> None:
        sizes = np.array(sorted(histogram), dtype=np.int64)
        counts = np.array([histogram[int(s)] for s in sizes], dtype=np.float64)
        self.n = int((sizes * counts).sum())
        self.u = int(counts.sum())
        self.to_u = np.arange(1, self.u, dtype=np.float64)
        self.to_n = np.arange(1, self.n, dtype=np.float64)
        per_size = np.zeros(int(sizes.max()) + 1)
        per_size[sizes] = counts
        # c_m for m = 1 .. max - 1: classes larger than m.
        larger = np.cumsum(per_size[::-1])[::-1]
        self.m = np.arange(1, int(sizes.max()), dtype=np.float64)
        self.larger = larger[2:]

    def log_likelihood(self, theta: float, alpha: float) -> float:
        return float(
            np.log(theta + alpha * self.to_u).sum()
            - np.log(theta + self.to_n).sum()
            + (self.larger * np.log(self.m - alpha)).sum()
        )

    def theta_slope(self, theta: float, alpha: float) -> float:
        """∂ℓ/∂θ."""
        return float((1.0 / (theta + alpha * self.to_u)).sum() - (1.0 / (theta + self.to_n)).sum())

    def best_theta(self, alpha: float) -> float | None:
        """θ maximizing ℓ for this α, None when ℓ still grows at the top of the range."""
        if self.theta_slope(math.exp(_LOG_HIGH) - alpha, alpha) > 0:
            return None
        low, high = _LOG_LOW, _LOG_HIGH
        # ∂ℓ/∂θ > 0 near θ = −α (its i = 1 term grows without bound) and < 0 at the top.
        for _ in range(64):
            middle = (low + high) / 2.0
            if self.theta_slope(math.exp(middle) - alpha, alpha) > 0:
                low = middle
            else:
                high = middle
        return math.exp((low + high) / 2.0) - alpha


def _golden_maximum(f: Callable[[float], float], low: float, high: float) -> float:
    """The maximizer of a unimodal ``f`` on [low, high], to about 1e-9."""
    a, b = low, high
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    while b - a > 1e-9:
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2.0


def fit_pitman(histogram: Mapping[int, int]) -> tuple[float, float] | str:
    """Maximum likelihood (θ, α) of Pitman's sampling formula, or why there is none.

    Example (62 classes of 1 to 9 records; a sample of uniques has no fit):
        >>> theta, alpha = fit_pitman({1: 40, 2: 12, 3: 6, 5: 3, 9: 1})
        >>> round(theta, 2), round(alpha, 3)
        (51.03, 0.128)
        >>> fit_pitman({1: 3})
        'every record is a sample unique: the likelihood grows without bound in theta'
    """
    partition = _Partition(histogram)
    if partition.u == partition.n:
        return "every record is a sample unique: the likelihood grows without bound in theta"
    highest_alpha = 1.0 - 1e-9

    def profile(alpha: float) -> float:
        theta = partition.best_theta(alpha)
        return -math.inf if theta is None else partition.log_likelihood(theta, alpha)

    grid = [k / _ALPHA_GRID for k in range(_ALPHA_GRID)]
    values = [profile(alpha) for alpha in grid]
    best = int(np.argmax(values))
    if values[best] == -math.inf:
        return "the likelihood grows without bound in theta for every alpha"
    # Refine between the grid neighbours of the best grid point.
    low = grid[best - 1] if best > 0 else 0.0
    high = grid[best + 1] if best + 1 < len(grid) else highest_alpha
    alpha = _golden_maximum(profile, low, high)
    if profile(alpha) < values[best]:
        alpha = grid[best]
    theta = partition.best_theta(alpha)
    if theta is None:
        return "the likelihood grows without bound in theta"
    return theta, alpha


def estimate_pitman(histogram: Mapping[int, int], population_size: int) -> PopulationEstimate | str:
    """Pitman's estimate (module docstring), or the reason there is none.

    Example (the sample of :func:`fit_pitman` from a population of 10,000):
        >>> e = estimate_pitman({1: 40, 2: 12, 3: 6, 5: 3, 9: 1}, 10_000)
        >>> round(e.population_uniques, 1)  # 10000**0.128 * Γ(52.03) / Γ(51.16)
        100.3

    Raises:
        InputError: as :func:`estimate_zayatz`.
    """
    n, singletons = _sample(histogram, population_size)
    if singletons == 0:
        return PopulationEstimate(
            estimator="pitman",
            sample_size=n,
            population_size=population_size,
            population_uniques=0.0,
            parameters={"theta": None, "alpha": None},
        )
    fitted = fit_pitman(histogram)
    if isinstance(fitted, str):
        return fitted
    theta, alpha = fitted
    uniques = math.exp(
        math.lgamma(theta + 1.0) - math.lgamma(theta + alpha) + alpha * math.log(population_size)
    )
    if not 0.0 <= uniques <= population_size:
        return (
            f"the fitted model (theta {theta:.6g}, alpha {alpha:.6g}) predicts {uniques:.6g} "
            f"population uniques, outside 0..{population_size}"
        )
    return PopulationEstimate(
        estimator="pitman",
        sample_size=n,
        population_size=population_size,
        population_uniques=uniques,
        parameters={"theta": theta, "alpha": alpha},
    )


def estimate_population(histogram: Mapping[int, int], population_size: int) -> PopulationEstimates:
    """Zayatz's and Pitman's estimates for a sample's class sizes and a population size.

    Raises:
        InputError: the population size is not a whole number at least the
            sample's rows.
    """
    pitman = estimate_pitman(histogram, population_size)
    return PopulationEstimates(
        zayatz=estimate_zayatz(histogram, population_size),
        pitman=None if isinstance(pitman, str) else pitman,
        pitman_reason=pitman if isinstance(pitman, str) else None,
    )
